package engine

import (
	"context"
	"time"
)

// ShutdownTimeout bounds how long the scheduler waits for a running job
// when the engine closes; a server gives its in-flight requests as long.
const ShutdownTimeout = 30 * time.Second

// StartJobs runs the scheduled jobs on their intervals, catching up at once
// on what is overdue (a laptop that slept, a server that was down), and
// keeps the scenes and the units' vectors current between their runs: what
// a long-running process (`engram serve`) does beside answering. Close
// stops them.
func (e *Engine) StartJobs(ctx context.Context) error {
	if err := e.sched.Start(ctx); err != nil {
		return err
	}
	e.startFollower()
	return nil
}

// Warm starts loading, in the background, what a long-running process
// answers recall from in memory: the keyword index of the turns (searches
// use SQLite's full-text index until it is ready). The embedded vector
// index is loaded by Open, in the background with cfg.BackgroundLoad.
func (e *Engine) Warm() { e.palace.WarmKeywordIndex() }

// LoadKeywordIndexes loads the in-memory keyword indexes (of the turns,
// the units and the scenes) and waits until they are; Warm starts the same
// in the background.
func (e *Engine) LoadKeywordIndexes(ctx context.Context) error { return e.palace.LoadKeywordIndex(ctx) }
