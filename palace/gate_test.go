package palace

import (
	"context"
	"errors"
	"runtime"
	"testing"
)

// queued waits until the gate has n urgent and m other waiters.
func (g *writeGate) queued(n, m int) {
	for {
		g.mu.Lock()
		u, w := len(g.urgent), len(g.waiting)
		g.mu.Unlock()
		if u == n && w == m {
			return
		}
		runtime.Gosched()
	}
}

func TestWriteGateUrgentFirst(t *testing.T) {
	var g writeGate
	ctx := context.Background()
	if err := g.acquire(ctx, false); err != nil {
		t.Fatal(err)
	}
	order := make(chan string, 3)
	start := func(name string, urgent bool) {
		go func() {
			if err := g.acquire(ctx, urgent); err != nil {
				t.Error(err)
				return
			}
			order <- name
			g.release()
		}()
	}
	start("job1", false)
	g.queued(0, 1)
	start("job2", false)
	g.queued(0, 2)
	start("turns", true)
	g.queued(1, 2)
	g.release()
	for _, want := range []string{"turns", "job1", "job2"} {
		if got := <-order; got != want {
			t.Fatalf("got %s, want %s", got, want)
		}
	}
	g.queued(0, 0)
	if err := g.acquire(ctx, false); err != nil { // free again
		t.Fatal(err)
	}
	g.release()
}

func TestWriteGateCancel(t *testing.T) {
	var g writeGate
	if err := g.acquire(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- g.acquire(ctx, true) }()
	g.queued(1, 0)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("acquire after cancel: %v", err)
	}
	g.queued(0, 0)
	g.release()
	if err := g.acquire(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	g.release()
}

// TestWriteGateUrgentWaiting: urgentWaiting is true while an urgent write
// queues for the writer, and only then.
func TestWriteGateUrgentWaiting(t *testing.T) {
	var g writeGate
	ctx := context.Background()
	if err := g.acquire(ctx, false); err != nil {
		t.Fatal(err)
	}
	if g.urgentWaiting() {
		t.Fatal("urgentWaiting with nothing queued")
	}
	bg := make(chan error, 1)
	go func() { bg <- g.acquire(ctx, false) }()
	g.queued(0, 1)
	if g.urgentWaiting() {
		t.Fatal("urgentWaiting with a background write queued")
	}
	urgent := make(chan error, 1)
	go func() { urgent <- g.acquire(ctx, true) }()
	g.queued(1, 1)
	if !g.urgentWaiting() {
		t.Fatal("not urgentWaiting with an urgent write queued")
	}
	g.release()
	if err := <-urgent; err != nil {
		t.Fatal(err)
	}
	if g.urgentWaiting() {
		t.Fatal("urgentWaiting after the urgent write got the writer")
	}
	g.release()
	if err := <-bg; err != nil {
		t.Fatal(err)
	}
	g.release()
}

// TestWriteGateLending: beside a lender (the checkpointer), urgent writes
// go in one at a time while background writes wait for the lender; the
// urgent write that holds the writer when the lender leaves keeps it.
func TestWriteGateLending(t *testing.T) {
	var g writeGate
	ctx := context.Background()
	if err := g.acquireLending(ctx); err != nil {
		t.Fatal(err)
	}
	if err := g.acquire(ctx, true); err != nil { // beside the lender, at once
		t.Fatal(err)
	}
	got := make(chan string, 2)
	start := func(name string, urgent bool) {
		go func() {
			if err := g.acquire(ctx, urgent); err != nil {
				t.Error(err)
				return
			}
			got <- name
		}()
	}
	start("job", false)
	g.queued(0, 1)
	start("turns2", true)
	g.queued(1, 1) // one urgent write at a time beside the lender
	g.release()
	if name := <-got; name != "turns2" {
		t.Fatalf("after the first urgent write: %s got the writer", name)
	}
	g.queued(0, 1)
	g.releaseLending() // turns2 holds the writer on
	g.queued(0, 1)
	g.release()
	if name := <-got; name != "job" {
		t.Fatalf("after the lender and turns2: %s got the writer", name)
	}
	g.release()
	g.mu.Lock()
	held, lender, borrowed := g.held, g.lender, g.borrowed
	g.mu.Unlock()
	if held || lender || borrowed {
		t.Fatalf("gate left held=%v lender=%v borrowed=%v", held, lender, borrowed)
	}
}

// TestWriteGateLendingQueued: an urgent write queued behind a background
// write goes in as soon as the lender takes the gate.
func TestWriteGateLendingQueued(t *testing.T) {
	var g writeGate
	ctx := context.Background()
	if err := g.acquire(ctx, false); err != nil {
		t.Fatal(err)
	}
	lent := make(chan error)
	go func() { lent <- g.acquireLending(ctx) }()
	g.queued(0, 1)
	g.release() // to the lender, the only waiter
	if err := <-lent; err != nil {
		t.Fatal(err)
	}
	if err := g.acquire(ctx, true); err != nil {
		t.Fatal(err)
	}
	g.releaseLending()
	g.release()
	if err := g.acquire(ctx, false); err != nil { // free again
		t.Fatal(err)
	}
	g.release()
}
