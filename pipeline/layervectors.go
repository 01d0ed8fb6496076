package pipeline

import (
	"context"
	"fmt"
	"strings"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/work"
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
	Work      *work.Scheduler // nil: run at once; each batch is a guarded task of class Derive
}

// DefaultUnitEmbedBatch is how many units are embedded at once: a unit's
// text is up to 32 KB, so fewer than turns.
const DefaultUnitEmbedBatch = 32

// Run embeds until every layer is caught up. With Work, it is the one run
// of the layers' vectors (the job, or the follower of serve:
// work.Scheduler.Serial).
func (w *LayerVectorWorker) Run(ctx context.Context) error {
	return w.Work.Serial(ctx, "layer vectors", func() error { return w.run(ctx) })
}

func (w *LayerVectorWorker) run(ctx context.Context) error {
	size := batchOr(w.BatchSize, DefaultEmbedBatch)
	model := w.Embedder.Model()
	err := embedLayer(ctx, w, "vec:"+model+":memories", size, w.Layers.MemoriesSince, func(m engram.Memory) (engram.VectorItem, string, int64) {
		// Superseded memories keep their vectors (recall drops them when it
		// loads the hits), so the index never needs a delete.
		return engram.VectorItem{ID: m.ID, Kind: engram.KindMemory, Namespace: m.Namespace, TS: m.TS}, MemoryEmbedText(m), m.Seq
	})
	if err != nil {
		return err
	}
	err = embedLayer(ctx, w, "vec:"+model+":facts", size, w.Layers.TriplesSince, func(t engram.Triple) (engram.VectorItem, string, int64) {
		return engram.VectorItem{ID: t.ID, Kind: engram.KindFact, Namespace: t.Namespace, TS: t.ValidFrom}, FactEmbedText(t), t.Seq
	})
	if err != nil {
		return err
	}
	err = embedLayer(ctx, w, "vec:"+model+":scenes", size, w.Layers.ScenesSince, func(s engram.Scene) (engram.VectorItem, string, int64) {
		return engram.VectorItem{ID: s.ID, Kind: engram.KindScene, Namespace: s.Namespace, TS: s.Start}, SceneEmbedText(s), s.Seq
	})
	if err != nil || w.Units == nil {
		return err
	}
	usize := min(size, DefaultUnitEmbedBatch)
	return embedLayer(ctx, w, "vec:"+model+":units", usize, w.Units.UnitsSince, func(u engram.UnitDoc) (engram.VectorItem, string, int64) {
		return engram.VectorItem{ID: u.ID, Kind: engram.UnitVectorKind(u.Kind), Namespace: u.Namespace, TS: u.Start}, u.Text, u.Seq
	})
}

// embedLayer embeds the items of a layer that since returns, size at a
// time, under the watermark worker; item gives each one's vector item (its
// vector to come), text and change number.
func embedLayer[T any](ctx context.Context, w *LayerVectorWorker, worker string, size int,
	since func(ctx context.Context, after int64, limit int) ([]T, error), item func(T) (engram.VectorItem, string, int64)) error {
	return w.embed(ctx, worker, size, func(after int64) ([]engram.VectorItem, []string, int64, error) {
		got, err := since(ctx, after, size)
		if err != nil || len(got) == 0 {
			return nil, nil, 0, err
		}
		items := make([]engram.VectorItem, 0, len(got))
		texts := make([]string, 0, len(got))
		var through int64
		for _, g := range got {
			it, text, seq := item(g)
			items = append(items, it)
			texts = append(texts, text)
			through = seq
		}
		return items, texts, through, nil
	})
}

// embed runs batches from next until it returns nothing.
func (w *LayerVectorWorker) embed(ctx context.Context, worker string, size int,
	next func(after int64) ([]engram.VectorItem, []string, int64, error)) error {
	for {
		var n int
		// The watermark and what is embedded are read in the task, never
		// beside a forget.
		err := w.Work.Guarded(ctx, work.Derive, func() error {
			from, err := w.Layers.WorkerSeq(ctx, worker)
			if err != nil {
				return err
			}
			items, texts, through, err := next(from)
			if n = len(items); err != nil || n == 0 {
				return err
			}
			return w.store(ctx, worker, items, texts, through)
		})
		if err != nil || n < size {
			return err
		}
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

// store embeds texts, the texts of items, and stores the items with their
// vectors, moving the worker's watermark to through.
func (w *LayerVectorWorker) store(ctx context.Context, worker string, items []engram.VectorItem, texts []string, through int64) error {
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
	return w.Store.PutLayerVectors(ctx, items, worker, through)
}
