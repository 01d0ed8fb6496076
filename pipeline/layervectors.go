package pipeline

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/engram-dev/engram"
)

// WorkerLayerVectors is the job that embeds the derived layers.
const WorkerLayerVectors = "layer-vectors"

// LayerVectorStore is where a model's vectors of memories and scenes go:
// the palace's copy of the model's vectors (journaled, so an external index
// such as Chroma receives them too), with a watermark per layer worker
// advanced in the same transaction.
type LayerVectorStore interface {
	PutLayerVectors(ctx context.Context, items []engram.VectorItem, worker string, throughSeq int64) error
}

// LayerVectorWorker embeds the memories, facts (knowledge-graph triples)
// and scenes changed since its watermarks (one per model and layer:
// "vec:MODEL:memories", "vec:MODEL:facts", "vec:MODEL:scenes") into a model's vector store, so that recall finds
// layer items by meaning as well as by keyword. A new model (after a
// re-embed) starts from zero and embeds every layer item again.
type LayerVectorWorker struct {
	Layers   engram.LayerStore
	Embedder engram.Embedder
	Store    LayerVectorStore
	// Units, if set, has the retrieval units (session parts and scenes)
	// embedded too ("vec:MODEL:units"): each unit's text, again whenever it
	// grows.
	Units     engram.UnitIndex
	BatchSize int

	mu sync.Mutex // one run at a time: the job, and the follower of serve
}

// DefaultUnitEmbedBatch is how many units are embedded at once: a unit's
// text is up to 32 KB, so fewer than turns.
const DefaultUnitEmbedBatch = 32

// Run embeds until every layer is caught up.
func (w *LayerVectorWorker) Run(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	size := batchOr(w.BatchSize, DefaultEmbedBatch)
	model := w.Embedder.Model()
	if err := w.embed(ctx, "vec:"+model+":memories", size, func(after int64) ([]engram.VectorItem, []string, int64, error) {
		mems, err := w.Layers.MemoriesSince(ctx, after, size)
		if err != nil || len(mems) == 0 {
			return nil, nil, 0, err
		}
		items := make([]engram.VectorItem, 0, len(mems))
		texts := make([]string, 0, len(mems))
		for _, m := range mems {
			// Superseded memories keep their vectors (recall drops them
			// when it loads the hits), so the index never needs a delete.
			items = append(items, engram.VectorItem{ID: m.ID, Kind: engram.KindMemory, Namespace: m.Namespace, TS: m.TS})
			texts = append(texts, MemoryEmbedText(m))
		}
		return items, texts, mems[len(mems)-1].Seq, nil
	}); err != nil {
		return err
	}
	if err := w.embed(ctx, "vec:"+model+":facts", size, func(after int64) ([]engram.VectorItem, []string, int64, error) {
		triples, err := w.Layers.TriplesSince(ctx, after, size)
		if err != nil || len(triples) == 0 {
			return nil, nil, 0, err
		}
		items := make([]engram.VectorItem, 0, len(triples))
		texts := make([]string, 0, len(triples))
		for _, t := range triples {
			items = append(items, engram.VectorItem{ID: t.ID, Kind: engram.KindFact, Namespace: t.Namespace, TS: t.ValidFrom})
			texts = append(texts, FactEmbedText(t))
		}
		return items, texts, triples[len(triples)-1].Seq, nil
	}); err != nil {
		return err
	}
	if err := w.embed(ctx, "vec:"+model+":scenes", size, func(after int64) ([]engram.VectorItem, []string, int64, error) {
		scenes, err := w.Layers.ScenesSince(ctx, after, size)
		if err != nil || len(scenes) == 0 {
			return nil, nil, 0, err
		}
		items := make([]engram.VectorItem, 0, len(scenes))
		texts := make([]string, 0, len(scenes))
		for _, s := range scenes {
			items = append(items, engram.VectorItem{ID: s.ID, Kind: engram.KindScene, Namespace: s.Namespace, TS: s.Start})
			texts = append(texts, SceneEmbedText(s))
		}
		return items, texts, scenes[len(scenes)-1].Seq, nil
	}); err != nil || w.Units == nil {
		return err
	}
	usize := min(size, DefaultUnitEmbedBatch)
	return w.embed(ctx, "vec:"+model+":units", usize, func(after int64) ([]engram.VectorItem, []string, int64, error) {
		units, err := w.Units.UnitsSince(ctx, after, usize)
		if err != nil || len(units) == 0 {
			return nil, nil, 0, err
		}
		items := make([]engram.VectorItem, 0, len(units))
		texts := make([]string, 0, len(units))
		for _, u := range units {
			items = append(items, engram.VectorItem{ID: u.ID, Kind: engram.UnitVectorKind(u.Kind), Namespace: u.Namespace, TS: u.Start})
			texts = append(texts, u.Text)
		}
		return items, texts, units[len(units)-1].Seq, nil
	})
}

// embed runs batches from next until it returns nothing.
func (w *LayerVectorWorker) embed(ctx context.Context, worker string, size int,
	next func(after int64) ([]engram.VectorItem, []string, int64, error)) error {
	from, err := w.Layers.WorkerSeq(ctx, worker)
	if err != nil {
		return err
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		items, texts, through, err := next(from)
		if err != nil || len(items) == 0 {
			return err
		}
		vecs, err := w.Embedder.Embed(ctx, texts)
		if err == nil && len(vecs) != len(items) {
			err = fmt.Errorf("embedder returned %d vectors for %d texts", len(vecs), len(items))
		}
		if err != nil {
			return fmt.Errorf("embed %s with %s: %w", worker, w.Embedder.Model(), err)
		}
		for i := range items {
			items[i].Vector = vecs[i]
		}
		if err := w.Store.PutLayerVectors(ctx, items, worker, through); err != nil {
			return err
		}
		if len(items) < size {
			return nil
		}
		from = through
	}
}

// MemoryEmbedText is what is embedded for a memory: its text and rationale.
func MemoryEmbedText(m engram.Memory) string {
	if m.Rationale == "" {
		return m.Text
	}
	return m.Text + " because " + m.Rationale
}

// SceneEmbedText is what is embedded for a scene: its title and summary.
func SceneEmbedText(s engram.Scene) string {
	return strings.TrimSpace(s.Title + ". " + s.Summary)
}

// FactEmbedText is what is embedded for a triple: it read as a sentence,
// "Alice lives in Lisbon" (validity is filtered, not embedded).
func FactEmbedText(t engram.Triple) string { return t.Sentence() }
