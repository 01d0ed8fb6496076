package pipeline

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engram-dev/engram/internal/testutil"
)

// TestYieldNil: a nil Yield never waits.
func TestYieldNil(t *testing.T) {
	var y *Yield
	y.Begin()()
	if err := y.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestYieldWaitsForWrites: Wait returns at once with no write in flight,
// and otherwise only after the write ended (and Quiet passed).
func TestYieldWaitsForWrites(t *testing.T) {
	y := &Yield{Quiet: time.Nanosecond, MaxWait: time.Hour}
	ctx := context.Background()
	if err := y.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	end := y.Begin()
	var ended, endedFirst atomic.Bool
	done := make(chan error, 1)
	go func() {
		err := y.Wait(ctx)
		endedFirst.Store(ended.Load())
		done <- err
	}()
	testutil.WaitUntil(t, "Wait to wait for the write", func() bool {
		y.mu.Lock()
		defer y.mu.Unlock()
		return y.ended != nil
	})
	ended.Store(true)
	end()
	end() // a second call does nothing
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !endedFirst.Load() {
		t.Fatal("Wait returned while the write was in flight")
	}
	y.mu.Lock()
	defer y.mu.Unlock()
	if y.inflight != 0 {
		t.Fatalf("%d writes in flight after the only one ended", y.inflight)
	}
}

// TestYieldBounded: a write that stays in flight holds a Wait for MaxWait
// at most, so background work goes on under a steady stream of writes; a
// cancelled context ends a Wait with its error.
func TestYieldBounded(t *testing.T) {
	y := &Yield{MaxWait: time.Millisecond}
	end := y.Begin()
	defer end()
	if err := y.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	y.MaxWait = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- y.Wait(ctx) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait after cancel = %v, want context.Canceled", err)
	}
}
