package engine

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/palace"
)

// rewriteNotifier is an archive other servers rewrite (the PostgreSQL
// one): Rewrites is closed when one of them next forgets or redacts turns.
type rewriteNotifier interface {
	Rewrites() <-chan struct{}
}

// rewriteRetry is the wait before trying again to bring the palace up to
// the archive's rewrites after a failure.
const rewriteRetry = time.Second

// rewriteFollower brings this server's palace up to the forgets other
// servers made in the shared archive.
type rewriteFollower struct {
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	applied atomic.Int64 // turns forgotten elsewhere and removed from this palace
}

// followRewrites starts, when other servers share the archive, the
// goroutine that applies their forgets to this palace: at each of the
// archive's rewrite notifications it reads the tombstones and forgets, by
// the engine's own path (forgetInPalace: the palace, the corrections, the
// vectors of the memory index and Chroma), the turns the palace has not
// recorded as forgotten yet, in an exclusive section of e.work as a local
// forget. Reading every tombstone is what makes it miss nothing: a
// notification lost while the listener reconnected (which wakes it too),
// or a forget made while this server was down (finishForgets at Open).
func (e *Engine) followRewrites() {
	rn, ok := e.archive.(rewriteNotifier)
	if !ok {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	e.rewrites.cancel = cancel
	e.rewrites.wg.Add(1)
	go func() {
		defer e.rewrites.wg.Done()
		for {
			wake := rn.Rewrites()
			var retry <-chan time.Time
			if err := e.applyRewrites(ctx); err != nil && ctx.Err() == nil {
				e.logger.Warn("could not bring the palace up to the forgets of the other servers; retrying", "err", err)
				retry = time.After(rewriteRetry)
			}
			select {
			case <-ctx.Done():
				return
			case <-wake:
			case <-retry:
			}
		}
	}()
}

// stopRewrites stops the goroutine of followRewrites and waits for it.
func (e *Engine) stopRewrites() {
	if e.rewrites.cancel != nil {
		e.rewrites.cancel()
		e.rewrites.wg.Wait()
	}
}

// applyRewrites forgets in the palace the archive's tombstones it does not
// record as forgotten.
func (e *Engine) applyRewrites(ctx context.Context) error {
	return e.work.Exclusive(ctx, func() error {
		gone, err := e.archive.Tombstones(ctx)
		if err != nil || len(gone) == 0 {
			return err
		}
		ids := make([]string, 0, len(gone))
		for id := range gone {
			ids = append(ids, id)
		}
		known, err := e.palace.ForgottenIDs(ctx, ids)
		if err != nil {
			return err
		}
		var turns []palace.ForgetTurn
		for _, id := range ids {
			if !known[id] {
				turns = append(turns, palace.ForgetTurn{ID: id, Seq: gone[id]})
			}
		}
		if len(turns) == 0 {
			return nil
		}
		var rep engram.ForgetReport
		if err := e.forgetInPalace(ctx, turns, time.Now().UTC(), &rep); err != nil {
			return err
		}
		if _, err := e.dropPreviousPalace(); err != nil {
			return err
		}
		e.logger.Info("forgot in the palace the turns another server forgot", "turns", len(turns))
		e.rewrites.applied.Add(int64(len(turns)))
		return nil
	})
}
