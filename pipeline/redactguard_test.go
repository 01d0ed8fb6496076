package pipeline_test

import (
	"context"
	"errors"
	"testing"

	"github.com/engram-dev/engram/embedder"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/pipeline"
)

// TestRedactGuard: a write of a read marked before a redaction ended is
// refused, one marked after runs; a write waiting on a running redaction
// gives up when its context ends; a nil guard always writes.
func TestRedactGuard(t *testing.T) {
	ctx := t.Context()
	g := pipeline.NewRedactGuard()
	writes := 0
	put := func() error { writes++; return nil }
	before := g.Mark()
	if ok, err := g.Write(ctx, before, put); !ok || err != nil || writes != 1 {
		t.Fatalf("no redaction: %v %v, %d writes", ok, err, writes)
	}
	if err := g.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	during := g.Mark()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if ok, err := g.Write(cancelled, during, put); ok || !errors.Is(err, context.Canceled) || writes != 1 {
		t.Fatalf("during a redaction, context ended: %v %v, %d writes", ok, err, writes)
	}
	if err := g.Lock(cancelled); !errors.Is(err, context.Canceled) {
		t.Fatalf("a second redaction, context ended: %v", err)
	}
	g.Unlock()
	for _, mark := range []uint64{before, during} {
		if ok, err := g.Write(ctx, mark, put); ok || err != nil || writes != 1 {
			t.Fatalf("read before the redaction ended: %v %v, %d writes", ok, err, writes)
		}
	}
	if ok, err := g.Write(ctx, g.Mark(), put); !ok || err != nil || writes != 2 {
		t.Fatalf("read after the redaction: %v %v, %d writes", ok, err, writes)
	}
	var none *pipeline.RedactGuard
	if err := none.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	none.Unlock()
	if ok, err := none.Write(ctx, none.Mark(), put); !ok || err != nil || writes != 3 {
		t.Fatalf("nil guard: %v %v, %d writes", ok, err, writes)
	}
}

// TestVectorIndexerWaitsForGuardWithoutStep: a batch of the vector indexer
// that waits for a running redaction holds no step of its Yield meanwhile.
// The redaction waits for the turns' indexes to be current, and their
// secondary steps need a step: a batch holding the only one would wait for
// the redaction for ever. Once the redaction ends, the batch is refused
// and embedded again from the archive.
func TestVectorIndexerWaitsForGuardWithoutStep(t *testing.T) {
	ctx := context.Background()
	a, p, _ := mustOpen(t)
	emb := &flakyEmbedder{Builtin: embedder.New()}
	store, err := p.Vectors(ctx, emb.Model(), emb.Dim())
	if err != nil {
		t.Fatal(err)
	}
	appendTurns(t, a, 5)
	y := &pipeline.Yield{Steps: 1}
	g := pipeline.NewRedactGuard()
	vx := pipeline.NewVectorIndexer(a, emb, store)
	vx.Guard, vx.Yield = g, y
	if err := vx.Init(ctx); err != nil {
		t.Fatal(err)
	}
	if err := g.Lock(ctx); err != nil { // a redaction begins
		t.Fatal(err)
	}
	caught := make(chan error, 1)
	go func() { caught <- vx.CatchUp(waitCtx(t), nil) }()
	testutil.WaitUntil(t, "the batch to be embedded", func() bool { return emb.calls.Load() == 1 })
	now := make(chan struct{})
	close(now)
	var step func()
	testutil.WaitUntil(t, "a free step while the batch waits for the redaction", func() bool {
		done, ok, err := y.StepOr(ctx, now)
		if err != nil {
			t.Fatal(err)
		}
		step = done
		return ok
	})
	step()
	g.Unlock() // the redaction ends: the batch read before it is refused
	if err := <-caught; err != nil {
		t.Fatalf("CatchUp after the redaction: %v", err)
	}
	if vx.Embedded() != 5 || emb.calls.Load() != 2 {
		t.Fatalf("after the redaction: embedded through %d in %d embeddings; want 5 in 2 (the batch read again)", vx.Embedded(), emb.calls.Load())
	}
	if n, err := store.Count(ctx); err != nil || n != 5 {
		t.Fatalf("%d vectors stored (%v), want 5", n, err)
	}
}
