package pipeline

import (
	"context"
	"sync/atomic"
)

// RedactGuard keeps the workers that embed turns from writing the vector of
// a text a redaction replaced. A redaction rewrites turns' archive lines
// and their palace rows, then embeds them again; a worker that read one of
// them before (its batch, or the archive snapshot its stream reads from)
// and writes after would put back the old text's meaning, for good. So a
// redaction runs between Lock and Unlock, and a worker marks its read
// (Mark) and writes through Write, which refuses the write when a
// redaction ended since the mark: the worker reads the turns again. A
// write in flight when a redaction locks finishes first; the redaction
// then finds its vector and replaces it.
//
// The guard orders the redactions and the vector writes of one process:
// the one that owns the home. A running server handles every redaction
// (POST /v1/redact, and the CLI talks to it); the CLI redacts offline only
// when no server runs, and its own engine's workers share its guard.
//
// A nil *RedactGuard guards nothing: Write always writes.
type RedactGuard struct {
	sem chan struct{} // held by a redaction, or by a write
	gen atomic.Uint64 // how many redactions ended
}

// NewRedactGuard returns a guard with no redaction running.
func NewRedactGuard() *RedactGuard {
	return &RedactGuard{sem: make(chan struct{}, 1)}
}

// acquire takes sem, or returns ctx's error.
func (g *RedactGuard) acquire(ctx context.Context) error {
	select {
	case g.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Lock waits for a write in flight to end, then holds off every write
// until Unlock. It returns ctx's error if ctx ends first.
func (g *RedactGuard) Lock(ctx context.Context) error {
	if g == nil {
		return nil
	}
	return g.acquire(ctx)
}

// Unlock ends the redaction Lock began: from now on Write refuses the
// writes of reads marked before. Call it once the turns are rewritten
// and embedded again, whether or not that succeeded.
func (g *RedactGuard) Unlock() {
	if g == nil {
		return
	}
	g.gen.Add(1) // before the release: a write waiting on sem sees it
	<-g.sem
}

// Mark returns the mark of a read of turns that begins now, for Write.
func (g *RedactGuard) Mark() uint64 {
	if g == nil {
		return 0
	}
	return g.gen.Load()
}

// Write runs put, the write of vectors of turns read since mark, unless a
// redaction ended since mark or is running (Write waits for it to end):
// then it returns false without running put, and the caller reads the
// turns again. Errors: put's, or ctx's if ctx ends while Write waits.
func (g *RedactGuard) Write(ctx context.Context, mark uint64, put func() error) (bool, error) {
	if g == nil {
		return true, put()
	}
	if err := g.acquire(ctx); err != nil {
		return false, err
	}
	defer func() { <-g.sem }()
	if g.gen.Load() != mark {
		return false, nil
	}
	return true, put()
}
