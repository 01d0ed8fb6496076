package pipeline

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"time"

	"github.com/engram-dev/engram"
)

// Notifier is implemented by archives that can wake followers on commit.
type Notifier interface {
	// Notify returns a channel that is closed at the next commit.
	Notify() <-chan struct{}
}

// Worker defaults.
const (
	DefaultBatchSize  = 2000
	DefaultRetryDelay = 500 * time.Millisecond
	maxRetryDelay     = 30 * time.Second
)

// Indexer copies archived turns into a TurnIndex in sequence order.
type Indexer struct {
	archive engram.Archive
	index   engram.TurnIndex

	// BatchSize is the most turns written in one palace transaction.
	BatchSize int
	// RetryDelay is the first pause after a failed batch; it doubles up to 30s.
	RetryDelay time.Duration
	Logger     *slog.Logger

	// PutSearchable and Secondary, if set, index a batch in two steps
	// instead of the index's PutTurns: PutSearchable makes the turns
	// searchable by keyword, which an acknowledgement waits for
	// (WaitSearchable); Secondary then writes what follows from them
	// (palace.DB: the session units and the substring rows), a short
	// transaction at a time through seq, done when none is left, and
	// ending a step early once stop reports true. After each round of
	// batches the indexer takes one such step, and more only while no
	// newer turn waits in the archive; stop reports one: a POST's turn
	// index waits for what is left of one step.
	PutSearchable func(ctx context.Context, turns []engram.Turn) error
	Secondary     func(ctx context.Context, seq int64, stop func() bool) (done bool, err error)
	// Yield, if set, makes each Secondary step a step of it (Yield.Step),
	// which it gives up waiting for when a newer turn is archived: the
	// steps share the cores left to background work with the layer jobs.
	// So that a stream of writes beside busy jobs cannot starve them, the
	// steps run without waiting once none has run for the Yield's MaxWait.
	Yield *Yield

	now         func() time.Time // tests set it; nil: time.Now
	behindSince time.Time        // when the secondary steps last ran or fell behind; zero when complete

	prog       *progress // every index of the turns, session units too
	searchable *progress // the turns and their keyword indexes
	f          *follower
}

// NewIndexer returns an indexer from archive a into index idx. Call Open to
// catch up and start following.
func NewIndexer(a engram.Archive, idx engram.TurnIndex) *Indexer {
	return &Indexer{
		archive:    a,
		index:      idx,
		BatchSize:  DefaultBatchSize,
		RetryDelay: DefaultRetryDelay,
		Logger:     slog.Default(),
		prog:       newProgress(0),
		searchable: newProgress(0),
	}
}

// Open catches the index up with the archive, then follows new commits in
// the background until Close. A catch-up that fails (a full disk, a palace
// that cannot be written) does not fail Open: the error is reported by Err
// and the follower retries with backoff, so the engine starts degraded
// instead of not at all. Open fails for a palace ahead of its archive
// (ECONFLICT), or when ctx ends.
func (ix *Indexer) Open(ctx context.Context) error {
	switch err := ix.CatchUp(ctx); {
	case err == nil:
	case ctx.Err() != nil || ix.Err() == nil:
		// Cancelled, or no batch failed: the watermark is unreadable or
		// the palace is ahead of the archive.
		return err
	default:
		ix.Logger.Warn("indexer: catching up failed; retrying in the background", "err", err)
	}
	ix.f = &follower{name: "indexing", source: archiveSignal(ix.archive), step: ix.catchUp,
		retryDelay: ix.RetryDelay, logger: ix.Logger}
	ix.f.start()
	return nil
}

// CatchUp indexes every archived turn after the index's watermark, once,
// and returns the first error: what a rebuild runs, where a failure must
// stop it. ECONFLICT when the palace claims more than the archive holds.
func (ix *Indexer) CatchUp(ctx context.Context) error {
	seq, err := ix.index.IndexedSeq(ctx)
	if err != nil {
		return fmt.Errorf("read index watermark: %w", err)
	}
	if last := ix.archive.LastSeq(); seq > last {
		// The palace claims more than the archive holds: it belongs to
		// another archive, or the archive lost files. Refuse rather than
		// serve results whose sources do not exist.
		return engram.Errorf(engram.ECONFLICT,
			"the palace is indexed up to seq %d but the archive ends at seq %d; run `engram rebuild` to rebuild the palace from the archive", seq, last)
	}
	ix.prog, ix.searchable = newProgress(seq), newProgress(seq)
	if err := ix.catchUp(ctx); err != nil {
		return fmt.Errorf("catch up index: %w", err)
	}
	return nil
}

// Close stops following. Turns archived but not yet indexed are picked up
// at the next Open.
func (ix *Indexer) Close() error {
	if ix.f != nil {
		ix.f.stop()
	}
	return nil
}

// Indexed returns the indexer's watermark: every turn up to this seq is
// searchable by keyword (with a PutSearchable index, its session units
// and substring rows may follow a moment later: Wait).
func (ix *Indexer) Indexed() int64 {
	seq, _ := ix.searchable.get()
	return seq
}

// complete is the seq through which every index of the turns is written.
func (ix *Indexer) complete() int64 {
	seq, _ := ix.prog.get()
	return seq
}

// Notify returns a channel closed when a batch is completely indexed (or
// fails): what followers of the turn index wait on.
func (ix *Indexer) Notify() <-chan struct{} { return ix.prog.notify() }

// Err returns the error of the last failed batch, or nil once a later batch
// succeeded.
func (ix *Indexer) Err() error {
	if _, err := ix.searchable.get(); err != nil {
		return err
	}
	_, err := ix.prog.get()
	return err
}

// Lag returns how many archived turns are not searchable yet.
func (ix *Indexer) Lag() int64 {
	return max(ix.archive.LastSeq()-ix.Indexed(), 0)
}

// Wait blocks until every turn up to seq is indexed, its session units and
// substring rows too, or ctx ends.
func (ix *Indexer) Wait(ctx context.Context, seq int64) error {
	return ix.prog.wait(ctx, seq)
}

// WaitSearchable blocks until every turn up to seq is searchable by
// keyword, or ctx ends: what an acknowledgement waits for. With
// PutSearchable that comes before the rest of the batch's indexing (the
// session units and substring rows: Secondary), which Wait waits for.
func (ix *Indexer) WaitSearchable(ctx context.Context, seq int64) error {
	return ix.searchable.wait(ctx, seq)
}

// WaitCurrent waits until the index has caught up with everything archived
// when it was called.
func (ix *Indexer) WaitCurrent(ctx context.Context) error {
	return ix.Wait(ctx, ix.archive.LastSeq())
}

// catchUp indexes every archived turn after the watermark, in batches;
// with PutSearchable, each batch searchable first, then the secondary
// indexes of all of them, a step at a time, going back to the archive
// whenever it holds newer turns.
func (ix *Indexer) catchUp(ctx context.Context) error {
	for {
		err := streamBatches(ctx, ix.archive, ix.Indexed(), ix.BatchSize, func(batch []engram.Turn) error {
			last := batch[len(batch)-1].Seq
			if ix.PutSearchable != nil {
				if err := ix.PutSearchable(ctx, batch); err != nil {
					ix.searchable.fail(err)
					return err
				}
				ix.searchable.advance(last)
				// The acknowledgements that waited for these turns
				// run before the next write: woken on this P, each would
				// wait for this goroutine to block, and a secondary step
				// runs on the CPU throughout.
				runtime.Gosched()
				return nil
			}
			if err := ix.index.PutTurns(ctx, batch); err != nil {
				ix.searchable.fail(err)
				ix.prog.fail(err)
				return err
			}
			ix.searchable.advance(last)
			ix.prog.advance(last)
			return nil
		})
		if err != nil || ix.PutSearchable == nil {
			return err
		}
		// The secondary steps, each a step of Yield: one at least each
		// round when one is free, so that a stream of writes does not
		// starve them; newer turns first (a step ends early for them, and
		// the wait for a step ends when one is archived). Should the
		// layer jobs hold every step while writes stream in, a round that
		// begins with no step run for the Yield's MaxWait (starved) runs
		// its steps without waiting for one.
		through := ix.Indexed()
		newer := func() bool { return ix.archive.LastSeq() > through }
		signal := archiveSignal(ix.archive)
		if ix.complete() < through && ix.behindSince.IsZero() {
			ix.behindSince = ix.clock()
		}
		starved := ix.clock().Sub(ix.behindSince) >= ix.Yield.maxWait()
		for first := true; ix.complete() < through; first = false {
			var wake <-chan struct{}
			if signal != nil {
				wake = signal() // before the look: no commit is missed
			}
			if newer() {
				if !first {
					break
				}
				wake = closed // the first step only if one is free now
			}
			release, ok := func() {}, true
			if !starved {
				var err error
				if release, ok, err = ix.Yield.StepOr(ctx, wake); err != nil {
					return err
				}
			}
			if !ok {
				break // a newer turn
			}
			done, err := ix.Secondary(ctx, through, newer)
			release()
			ix.behindSince = ix.clock()
			if err != nil {
				ix.prog.fail(err)
				return err
			}
			if done {
				ix.prog.advance(through)
			}
		}
		if ix.complete() >= ix.Indexed() {
			ix.behindSince = time.Time{}
		}
		if ix.archive.LastSeq() <= ix.Indexed() && ix.complete() >= ix.Indexed() {
			return nil
		}
	}
}

// clock returns the time: now, or time.Now.
func (ix *Indexer) clock() time.Time {
	if ix.now != nil {
		return ix.now()
	}
	return time.Now()
}

// closed is a closed channel.
var closed = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// streamBatches streams the archive after seq and calls fn with batches of
// at most size turns.
func streamBatches(ctx context.Context, a engram.Archive, after int64, size int, fn func([]engram.Turn) error) error {
	if size <= 0 {
		size = DefaultBatchSize
	}
	batch := make([]engram.Turn, 0, size)
	err := a.Stream(ctx, after, func(t engram.Turn) error {
		batch = append(batch, t)
		if len(batch) < size {
			return nil
		}
		err := fn(batch)
		batch = batch[:0]
		return err
	})
	if err != nil || len(batch) == 0 {
		return err
	}
	return fn(batch)
}

// archiveSignal returns the archive's commit notification, or nil (poll)
// for archives without one.
func archiveSignal(a engram.Archive) func() <-chan struct{} {
	if n, ok := a.(Notifier); ok {
		return n.Notify
	}
	return nil
}
