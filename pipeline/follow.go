package pipeline

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/engram-dev/engram/internal/backoff"
)

// progress is a worker's watermark with a broadcast on every change, so
// callers can wait for a sequence number to be reached.
type progress struct {
	mu      sync.Mutex
	seq     int64
	err     error
	changed chan struct{} // closed and replaced on every change
}

func newProgress(seq int64) *progress {
	return &progress{seq: seq, changed: make(chan struct{})}
}

func (p *progress) get() (int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seq, p.err
}

// advance records that everything up to seq is done and clears the error.
func (p *progress) advance(seq int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if seq > p.seq {
		p.seq = seq
	}
	p.err = nil
	close(p.changed)
	p.changed = make(chan struct{})
}

func (p *progress) fail(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.err = err
	close(p.changed)
	p.changed = make(chan struct{})
}

// notify returns a channel closed at the next change.
func (p *progress) notify() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.changed
}

// wait blocks until seq is reached or ctx ends.
func (p *progress) wait(ctx context.Context, seq int64) error {
	for {
		p.mu.Lock()
		done, ch := p.seq >= seq, p.changed
		p.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// follower runs step every time its source signals new work, and again with
// exponential backoff while step fails. It owns one goroutine.
type follower struct {
	name       string
	source     func() <-chan struct{} // a channel closed when there may be new work; nil: poll
	step       func(ctx context.Context) error
	retryDelay time.Duration
	// minInterval, if set, is the least time between the starts of two
	// steps: work that arrives meanwhile waits and is done in one step.
	minInterval time.Duration
	logger      *slog.Logger

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// start runs the loop until stop.
func (f *follower) start() {
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		f.loop(ctx)
	}()
}

// stop cancels the loop and waits for it.
func (f *follower) stop() {
	if f.cancel != nil {
		f.cancel()
		f.wg.Wait()
	}
}

func (f *follower) loop(ctx context.Context) {
	base := f.retryDelay
	if base <= 0 {
		base = DefaultRetryDelay
	}
	delay := backoff.Backoff{Base: base, Max: maxRetryDelay}
	for {
		// Arm the signal before the step, so work that lands during the
		// step wakes the next round.
		var signal <-chan struct{}
		if f.source != nil {
			signal = f.source()
		}
		var retry <-chan time.Time
		var pause <-chan time.Time
		if f.minInterval > 0 {
			pause = time.After(f.minInterval)
		}
		if err := f.step(ctx); err != nil {
			// Once the loop is stopping, a step's error is the stop's
			// doing, whatever it says: database/sql rolls back the
			// transaction of a context that ended, and its commit then
			// fails with ErrTxDone, not context.Canceled.
			if ctx.Err() != nil {
				return
			}
			wait := delay.Next()
			f.logger.Warn(f.name+" failed; will retry", "err", err, "retry_in", wait)
			retry = time.After(wait)
		} else {
			delay.Reset()
		}
		if signal == nil {
			retry = time.After(delay.Peek())
		}
		select {
		case <-ctx.Done():
			return
		case <-signal:
			if retry != nil {
				// New work arrived while failing: still honour the backoff,
				// so a broken dependency is not hammered on every commit.
				select {
				case <-ctx.Done():
					return
				case <-retry:
				}
			}
		case <-retry:
		}
		if pause != nil {
			select {
			case <-ctx.Done():
				return
			case <-pause:
			}
		}
	}
}

// Follower runs a step in the background each time its source signals new
// work, and again with backoff while the step fails.
type Follower struct{ f *follower }

// Follow starts a Follower named name (for its log lines): step runs once at
// start, then after each signal of source (nil: every retry delay), never
// more often than every minInterval. Stop it with Stop.
func Follow(name string, source func() <-chan struct{}, step func(context.Context) error, minInterval time.Duration, logger *slog.Logger) *Follower {
	if logger == nil {
		logger = slog.Default()
	}
	f := &follower{name: name, source: source, step: step, retryDelay: DefaultRetryDelay, minInterval: minInterval, logger: logger}
	f.start()
	return &Follower{f}
}

// Stop cancels the follower's step and waits for it to end.
func (f *Follower) Stop() {
	if f != nil {
		f.f.stop()
	}
}
