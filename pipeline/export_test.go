package pipeline

import "time"

// YieldWaiting reports whether a Wait of y waits for a write to end.
func YieldWaiting(y *Yield) bool {
	y.mu.Lock()
	defer y.mu.Unlock()
	return y.ended != nil
}

// SetIndexerNow makes ix read the time from now.
func SetIndexerNow(ix *Indexer, now func() time.Time) { ix.now = now }

// YieldStepWaiters reports how many callers wait for a step of y.
func YieldStepWaiters(y *Yield) int { return int(y.stepWaiters.Load()) }
