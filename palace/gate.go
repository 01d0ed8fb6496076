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
type writeGate struct {
	mu      sync.Mutex
	held    bool
	urgent  []chan struct{}
	waiting []chan struct{}
}

// acquire waits for the writer, or for ctx to end.
func (g *writeGate) acquire(ctx context.Context, urgent bool) error {
	g.mu.Lock()
	if !g.held {
		g.held = true
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

// release hands the writer to the next waiter, urgent ones first.
func (g *writeGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
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
