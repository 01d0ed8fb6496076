package palace

import (
	"context"
	"slices"
	"sync"
)

// writeGate hands the writer connection to one transaction at a time, the
// urgent ones first: the turn index, which a client's POST waits for, goes
// before every queued background write (layer jobs, vectors, scenes), so a
// write burst of the jobs delays an acknowledgement by at most the one
// background transaction that holds the writer. Within a class the order
// is first come, first served. (database/sql's own queue for the single
// writer connection has no classes.)
//
// A holder that does not write on the writer connection (the checkpointer,
// which only wants no commit while it copies the WAL: see checkpointer)
// takes the gate as a lender (acquireLending): an urgent write then goes
// in beside it, one at a time, instead of waiting for it.
type writeGate struct {
	mu       sync.Mutex
	held     bool
	lender   bool // the holder is a lender
	borrowed bool // an urgent write holds the writer beside the lender
	urgent   []chan struct{}
	waiting  []chan struct{}
}

// acquire waits for the writer, or for ctx to end.
func (g *writeGate) acquire(ctx context.Context, urgent bool) error {
	g.mu.Lock()
	if !g.held {
		g.held = true
		g.mu.Unlock()
		return nil
	}
	if urgent && g.lender && !g.borrowed {
		g.borrowed = true
		g.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	if urgent {
		g.urgent = append(g.urgent, ch)
	} else {
		g.waiting = append(g.waiting, ch)
	}
	g.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		g.mu.Lock()
		queued := false
		for _, q := range []*[]chan struct{}{&g.urgent, &g.waiting} {
			if i := slices.Index(*q, ch); i >= 0 {
				*q = slices.Delete(*q, i, i+1)
				queued = true
			}
		}
		g.mu.Unlock()
		if !queued {
			// Handed over just as ctx ended: pass it on.
			g.release()
		}
		return ctx.Err()
	}
}

// urgentWaiting reports whether an urgent write waits for the writer.
func (g *writeGate) urgentWaiting() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.urgent) > 0
}

// acquireLending waits for the gate as a background write does, and then
// holds it as a lender until releaseLending: background writes wait for
// it, urgent ones go in beside it.
func (g *writeGate) acquireLending(ctx context.Context) error {
	if err := g.acquire(ctx, false); err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.lender = true
	g.lend()
	return nil
}

// lend lets the first queued urgent write in beside a lender that lends to
// none. g.mu is held.
func (g *writeGate) lend() {
	if !g.lender || g.borrowed || len(g.urgent) == 0 {
		return
	}
	next := g.urgent[0]
	g.urgent = g.urgent[1:]
	g.borrowed = true
	close(next)
}

// releaseLending ends acquireLending's hold. An urgent write that holds the
// writer beside it goes on as the gate's holder.
func (g *writeGate) releaseLending() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.lender = false
	if g.borrowed {
		g.borrowed = false
		return
	}
	g.handOff()
}

// release hands the writer to the next waiter, urgent ones first; the
// release of an urgent write beside a lender lets the next one in.
func (g *writeGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.borrowed {
		g.borrowed = false
		g.lend()
		return
	}
	g.handOff()
}

// handOff hands the writer to the next waiter, urgent ones first, or frees
// it. g.mu is held.
func (g *writeGate) handOff() {
	var next chan struct{}
	switch {
	case len(g.urgent) > 0:
		next, g.urgent = g.urgent[0], g.urgent[1:]
	case len(g.waiting) > 0:
		next, g.waiting = g.waiting[0], g.waiting[1:]
	default:
		g.held = false
		return
	}
	close(next)
}
