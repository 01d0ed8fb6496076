package remote

import (
	"context"
	"slices"
	"sync/atomic"
)

// ProbeText is what an embedder's health check embeds.
const ProbeText = "engram health check"

// EmbedFunc returns one vector per text, in order.
type EmbedFunc func(ctx context.Context, texts []string) ([][]float32, error)

// InBatches returns the vectors of texts, in order, from calls of embed
// with at most size texts each; no call for no texts. The first failure
// fails the whole: no text is ever left without its vector silently.
func InBatches(ctx context.Context, texts []string, size int, embed EmbedFunc) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for batch := range slices.Chunk(texts, size) {
		vecs, err := embed(ctx, batch)
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// Probe embeds ProbeText, which makes the server load the model, and
// returns the vector's dimension: an embedder's health check. It fails with
// the errors of embed.
func Probe(ctx context.Context, embed EmbedFunc) (dim int, err error) {
	vecs, err := embed(ctx, []string{ProbeText})
	if err != nil {
		return 0, err
	}
	return len(vecs[0]), nil
}

// Dim is the dimension of a model's vectors as its server returned them, 0
// before the first. It is safe for concurrent use.
type Dim struct{ n atomic.Int64 }

// Load returns the dimension, 0 before the first vector.
func (d *Dim) Load() int { return int(d.n.Load()) }

// Record returns the model's dimension: n when it is the first vector's,
// the first vector's otherwise. A vector whose dimension is not what Record
// returns comes from another model (one replaced on the server under the
// same name), and must not be mixed with the others.
func (d *Dim) Record(n int) int {
	d.n.CompareAndSwap(0, int64(n))
	return int(d.n.Load())
}
