package engine

import (
	"context"
	"fmt"
)

// recallWait returns a recall's wait for one index (recall.Service.Sync,
// recall.Vectors.Sync): read-your-writes, and no more. It waits until the
// index holds the turns acknowledged when the recall asks (wait), but only
// while no client write is in flight: a write in flight, or one that
// begins during the wait, is another client's (a client's own turns are
// acknowledged before it asks), and a search does not wait for other
// clients' writes; under a stream of writes the embedding of turns may lag
// far behind them. The recall bounds the wait (recall.Service.SyncWait).
// It fails, so that the recall warns, when the index, which answers
// through covered, still lacks acknowledged turns.
func (e *Engine) recallWait(covered func() int64, wait func(ctx context.Context, seq int64) error) func(context.Context) error {
	return func(ctx context.Context) error {
		target := e.ingester.Acknowledged()
		if covered() >= target {
			return nil
		}
		if busy, began := e.work.Writing(); !busy {
			wctx, cancel := context.WithCancel(ctx)
			stop := make(chan struct{})
			go func() {
				select {
				case <-began:
					cancel()
				case <-stop:
				}
			}()
			err := wait(wctx, target)
			close(stop)
			if err != nil && (wctx.Err() == nil || ctx.Err() != nil) {
				cancel()
				return err // a failing index, or one still behind at the bound
			}
			cancel()
		}
		if c := covered(); c < target {
			return fmt.Errorf("%d acknowledged turns are not indexed yet", target-c)
		}
		return nil
	}
}
