package pipeline

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of a Yield.
const (
	// DefaultYieldQuiet is how long no client write must have been in
	// flight before background work goes on: longer than the pause between
	// the writes of a client sending one after another, so that a burst of
	// writes is one wait, not a wait per write.
	DefaultYieldQuiet = 5 * time.Millisecond
	// DefaultYieldMaxWait bounds one wait: under a steady stream of writes
	// the background work still takes a step this often.
	DefaultYieldMaxWait = 200 * time.Millisecond
)

// Yield lets background work give way to client writes. The Ingester marks
// each write while it is in flight (Begin); a background worker (the layer
// jobs, the embedding of turns and of the layers) calls Wait between its
// steps, which returns once no write has been in flight for Quiet, or after
// MaxWait, whichever comes first. On a laptop's two cores the jobs' CPU and
// their palace transactions were what a POST waited for; with Yield a
// write waits at most for the steps already running.
//
// Yield also bounds the background steps that compute at once (Step),
// leaving a core to the requests. Go's scheduler looks for network events
// only when a core has nothing else to run (or at its next periodic
// poll): with the extractor parsing on both of a laptop's cores, and the
// embedding, the memories' writes and the full-text merges beside it, a
// POST's request, the wake-up after its fsync and its response each waited
// for a core, and its tail latency beside the jobs was several times the
// idle one (docs/benchmarks.md).
//
// A nil *Yield never waits. Set Quiet, MaxWait and Steps before first use;
// zero means their defaults.
type Yield struct {
	Quiet   time.Duration
	MaxWait time.Duration
	// Steps bounds the background steps that run at once; 0 means one
	// fewer than GOMAXPROCS, at least one.
	Steps int

	stepsOnce   sync.Once
	steps       chan struct{} // a token per running step
	stepWaiters atomic.Int32  // the callers waiting for one

	mu       sync.Mutex
	inflight int
	lastEnd  time.Time
	ended    chan struct{} // closed when a write ends; nil until a Wait needs it
	began    chan struct{} // closed when a write begins; nil until Writing needs it
}

// Begin marks a client write in flight until the returned function is
// called (once; later calls do nothing).
func (y *Yield) Begin() (end func()) {
	if y == nil {
		return func() {}
	}
	y.mu.Lock()
	y.inflight++
	if y.began != nil {
		close(y.began)
		y.began = nil
	}
	y.mu.Unlock()
	return sync.OnceFunc(func() {
		y.mu.Lock()
		defer y.mu.Unlock()
		y.inflight--
		y.lastEnd = time.Now()
		if y.ended != nil {
			close(y.ended)
			y.ended = nil
		}
	})
}

// Writing reports whether a client write is in flight, and returns a
// channel closed when the next one begins: a recall waits for no other
// client's write (nil Yield: never busy, and a nil channel).
func (y *Yield) Writing() (busy bool, began <-chan struct{}) {
	if y == nil {
		return false, nil
	}
	y.mu.Lock()
	defer y.mu.Unlock()
	if y.began == nil {
		y.began = make(chan struct{})
	}
	return y.inflight > 0, y.began
}

// Wait returns once no client write has been in flight for Quiet, or once
// it has waited MaxWait; early with ctx's error if ctx ends.
func (y *Yield) Wait(ctx context.Context) error {
	if y == nil {
		return ctx.Err()
	}
	quiet, maxWait := y.Quiet, y.maxWait()
	if quiet <= 0 {
		quiet = DefaultYieldQuiet
	}
	var deadline time.Time
	for {
		y.mu.Lock()
		busy := y.inflight > 0
		calm := quiet - time.Since(y.lastEnd)
		if !busy && calm <= 0 {
			y.mu.Unlock()
			return ctx.Err()
		}
		if deadline.IsZero() {
			deadline = time.Now().Add(maxWait)
		}
		left := time.Until(deadline)
		if left <= 0 {
			y.mu.Unlock()
			return ctx.Err()
		}
		var ended chan struct{}
		if busy {
			if y.ended == nil {
				y.ended = make(chan struct{})
			}
			ended = y.ended
		} else {
			left = min(left, calm)
		}
		y.mu.Unlock()
		t := time.NewTimer(left)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-ended: // nil when not busy: never
		case <-t.C:
		}
		t.Stop()
	}
}

// maxWait is MaxWait, or its default: also how long the indexer's
// secondary steps may go without a step before one runs without it.
func (y *Yield) maxWait() time.Duration {
	if y == nil || y.MaxWait <= 0 {
		return DefaultYieldMaxWait
	}
	return y.MaxWait
}

// Step waits until fewer than Steps background steps run, or until ctx
// ends, and starts one: the caller computes, then calls done (once; later
// calls do nothing). A step must not take another (with one step allowed,
// it would wait for itself), nor wait for one while it holds a lock that a
// step takes; and a step must not wait for anything that waits for a step
// (the vector indexer's store waits for a redaction, which waits for the
// indexer's secondary steps: it takes its step inside the redaction
// guard). A nil *Yield starts every step at once.
func (y *Yield) Step(ctx context.Context) (done func(), err error) {
	if y == nil {
		return func() {}, ctx.Err()
	}
	done, _, err = y.StepOr(ctx, nil) // a free one first, even with ctx ended
	return done, err
}

// StepOr is Step that also gives up when wake is closed (a nil wake never
// is): ok reports whether a step started; done is to be called if so.
func (y *Yield) StepOr(ctx context.Context, wake <-chan struct{}) (done func(), ok bool, err error) {
	if y == nil {
		return func() {}, true, ctx.Err()
	}
	y.stepsOnce.Do(y.initSteps)
	done = sync.OnceFunc(func() { <-y.steps })
	select {
	case y.steps <- struct{}{}:
		return done, true, nil
	default:
	}
	y.stepWaiters.Add(1)
	defer y.stepWaiters.Add(-1)
	select {
	case y.steps <- struct{}{}:
		return done, true, nil
	case <-wake:
		return func() {}, false, nil
	case <-ctx.Done():
		return func() {}, false, ctx.Err()
	}
}

// initSteps makes the tokens of Steps.
func (y *Yield) initSteps() {
	n := y.Steps
	if n <= 0 {
		n = max(runtime.GOMAXPROCS(0)-1, 1)
	}
	y.steps = make(chan struct{}, n)
}

// Do runs fn as a step (see Step).
func (y *Yield) Do(ctx context.Context, fn func() error) error {
	done, err := y.Step(ctx)
	if err != nil {
		return err
	}
	defer done()
	return fn()
}
