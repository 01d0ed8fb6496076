package pipeline

import (
	"context"
	"errors"
	"fmt"
	"runtime"
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

// TestYieldSteps: no more than Steps steps run at once: with every one
// taken, a step with an ended context fails rather than start, and one that
// waits starts once a step ends; a free step starts even with an ended
// context. A nil Yield starts every step at once.
func TestYieldSteps(t *testing.T) {
	ctx := context.Background()
	ended, cancel := context.WithCancel(ctx)
	cancel()
	var none *Yield
	for range 3 {
		done, err := none.Step(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer done()
	}

	y := &Yield{Steps: 2}
	first, err := y.Step(ended)
	if err != nil {
		t.Fatalf("a free step with an ended context: %v", err)
	}
	err = y.Do(ctx, func() error {
		if err := y.Do(ended, func() error { return errors.New("a third step ran beside two") }); !errors.Is(err, context.Canceled) {
			return fmt.Errorf("a third step with an ended context = %v, want context.Canceled", err)
		}
		started := make(chan func(), 1)
		go func() {
			done, err := y.Step(ctx)
			if err != nil {
				t.Error(err)
			}
			started <- done
		}()
		first()
		first() // a second call does nothing
		(<-started)()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(y.steps); n != 0 {
		t.Fatalf("%d steps held after every one ended", n)
	}
}

// TestYieldStepsDefault: Steps 0 leaves one of GOMAXPROCS free, and allows
// one step on a single core.
func TestYieldStepsDefault(t *testing.T) {
	y := &Yield{}
	done, err := y.Step(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	done()
	if want := max(runtime.GOMAXPROCS(0)-1, 1); cap(y.steps) != want {
		t.Fatalf("%d steps allowed at once, want %d", cap(y.steps), want)
	}
}

// TestYieldWriting: Writing reports a write in flight, and its channel is
// closed when the next write begins, which is what ends a recall's wait.
func TestYieldWriting(t *testing.T) {
	var nilYield *Yield
	if busy, began := nilYield.Writing(); busy || began != nil {
		t.Fatalf("nil Yield: busy %v, channel %v", busy, began)
	}
	y := &Yield{}
	busy, began := y.Writing()
	if busy {
		t.Fatal("busy with no write")
	}
	select {
	case <-began:
		t.Fatal("began closed with no write")
	default:
	}
	end := y.Begin()
	<-began // closed by Begin
	if busy, _ := y.Writing(); !busy {
		t.Fatal("not busy during a write")
	}
	end()
	if busy, _ := y.Writing(); busy {
		t.Fatal("busy after the write ended")
	}
}
