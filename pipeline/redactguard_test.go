package pipeline_test

import (
	"context"
	"errors"
	"testing"

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
