package pipeline

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/work"
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

// SplitIndex is a TurnIndex that indexes a batch in two parts: first what
// makes the turns searchable by keyword, which an acknowledgement waits for
// (PutTurnsSearchable), then what follows from them (IndexSecondary; the
// palace's session units and substring rows), a short transaction at a
// time, which deep recall waits for.
type SplitIndex interface {
	engram.TurnIndex
	PutTurnsSearchable(ctx context.Context, turns []engram.Turn) error
	// IndexSecondary writes the secondary indexes of at most limit turns
	// through seq (limit <= 0: its default) in one transaction, ending
	// early once stop reports true; done when none is left.
	IndexSecondary(ctx context.Context, seq int64, limit int, stop func() bool) (done bool, err error)
	// SecondarySeq returns the seq through which the secondary indexes
	// are written.
	SecondarySeq(ctx context.Context) (int64, error)
}

// Indexer copies archived turns into a TurnIndex in sequence order. Into a
// SplitIndex (NewSplitIndexer) it runs two loops: one makes new turns searchable as they are
// archived, the other writes their secondary indexes, each step a task of
// Work's Index class, ending early while a newer turn waits for the first
// loop.
type Indexer struct {
	archive engram.Archive
	index   engram.TurnIndex
	split   SplitIndex // index as a SplitIndex (NewSplitIndexer); nil: each batch whole

	// BatchSize is the most turns written in one palace transaction.
	BatchSize int
	// RetryDelay is the first pause after a failed batch; it doubles up to 30s.
	RetryDelay time.Duration
	Logger     *slog.Logger
	// Work, if set, runs each secondary step as a task of class Index: the
	// steps share the cores left to background work with the layer jobs,
	// ahead of them.
	Work *work.Scheduler
	// Background has Open leave the catch-up to the followers, which it
	// starts at once: a server answers while the turns another process
	// archived (an `engram ingest`) are indexed; until then Lag says how
	// many are behind and an acknowledgement waits for them (its bound).
	Background bool

	prog       *progress // every index of the turns, session units too
	searchable *progress // the turns and their keyword indexes
	f          *follower // the searchable loop
	sf         *follower // the secondary loop; nil without a SplitIndex
}

// NewIndexer returns an indexer from archive a into index idx, which
// indexes each batch whole (PutTurns). Call Open to catch up and start
// following.
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

// NewSplitIndexer returns an indexer from archive a into idx that indexes
// each batch in its two parts: what serves a process taking writes, whose
// acknowledgements wait for the first part only.
func NewSplitIndexer(a engram.Archive, idx SplitIndex) *Indexer {
	ix := NewIndexer(a, idx)
	ix.split = idx
	return ix
}

// Open catches the index up with the archive (with Background, leaves it
// to the followers), then follows new commits in the background until
// Close. A catch-up that fails (a full disk, a palace
// that cannot be written) does not fail Open: the error is reported by Err
// and the follower retries with backoff, so the engine starts degraded
// instead of not at all. Open fails for a palace ahead of its archive
// (ECONFLICT), or when ctx ends.
func (ix *Indexer) Open(ctx context.Context) error {
	catchUp := ix.CatchUp
	if ix.Background {
		catchUp = ix.watermark
	}
	switch err := catchUp(ctx); {
	case err == nil:
	case ctx.Err() != nil || ix.Err() == nil:
		// Cancelled, or no batch failed: the watermark is unreadable or
		// the palace is ahead of the archive.
		return err
	default:
		ix.Logger.Warn("indexer: catching up failed; retrying in the background", "err", err)
	}
	ix.f = &follower{name: "indexing", source: archiveSignal(ix.archive), step: ix.catchUpSearchable,
		retryDelay: ix.RetryDelay, logger: ix.Logger}
	ix.f.start()
	if ix.split != nil {
		ix.sf = &follower{name: "secondary indexing", source: ix.searchable.notify, step: ix.catchUpSecondary,
			retryDelay: ix.RetryDelay, logger: ix.Logger}
		ix.sf.start()
	}
	return nil
}

// CatchUp indexes every archived turn after the index's watermark, once,
// and returns the first error: what a rebuild runs, where a failure must
// stop it. ECONFLICT when the palace claims more than the archive holds.
func (ix *Indexer) CatchUp(ctx context.Context) error {
	if err := ix.watermark(ctx); err != nil {
		return err
	}
	if err := ix.catchUp(ctx); err != nil {
		return fmt.Errorf("catch up index: %w", err)
	}
	return nil
}

// watermark reads the index's watermark and starts the indexer's progress
// there; ECONFLICT when the palace claims more than the archive holds.
func (ix *Indexer) watermark(ctx context.Context) error {
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
	complete := seq
	if ix.split != nil {
		sec, err := ix.split.SecondarySeq(ctx)
		if err != nil {
			return fmt.Errorf("read the secondary indexes' watermark: %w", err)
		}
		complete = min(seq, sec)
	}
	ix.prog, ix.searchable = newProgress(complete), newProgress(seq)
	return nil
}

// Close stops following. Turns archived but not yet indexed are picked up
// at the next Open.
func (ix *Indexer) Close() error {
	if ix.f != nil {
		ix.f.stop()
	}
	if ix.sf != nil {
		ix.sf.stop()
	}
	return nil
}

// Indexed returns the indexer's watermark: every turn up to this seq is
// searchable by keyword (with a SplitIndex, its session units and
// substring rows may follow a moment later: Wait).
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
// keyword, or ctx ends: what an acknowledgement waits for. With a
// SplitIndex that comes before the rest of the batch's indexing (the
// session units and substring rows), which Wait waits for.
func (ix *Indexer) WaitSearchable(ctx context.Context, seq int64) error {
	return ix.searchable.wait(ctx, seq)
}

// WaitCurrent waits until the index has caught up with everything archived
// when it was called.
func (ix *Indexer) WaitCurrent(ctx context.Context) error {
	return ix.Wait(ctx, ix.archive.LastSeq())
}

// catchUp indexes every archived turn after the watermark: searchable
// first, then, with a SplitIndex, the secondary indexes of all of them.
func (ix *Indexer) catchUp(ctx context.Context) error {
	if err := ix.catchUpSearchable(ctx); err != nil {
		return err
	}
	return ix.catchUpSecondary(ctx)
}

// catchUpSearchable makes every archived turn after the watermark
// searchable, in batches: with a SplitIndex its first part, else all of
// its indexing.
func (ix *Indexer) catchUpSearchable(ctx context.Context) error {
	return streamBatches(ctx, ix.archive, ix.Indexed(), ix.BatchSize, func(batch []engram.Turn) error {
		last := batch[len(batch)-1].Seq
		if ix.split == nil {
			if err := ix.index.PutTurns(ctx, batch); err != nil {
				ix.searchable.fail(err)
				ix.prog.fail(err)
				return err
			}
			ix.searchable.advance(last)
			ix.prog.advance(last)
			return nil
		}
		if err := ix.split.PutTurnsSearchable(ctx, batch); err != nil {
			ix.searchable.fail(err)
			return err
		}
		ix.searchable.advance(last)
		// The acknowledgements that waited for these turns run before
		// the next write: woken on this P, each would wait for this
		// goroutine to block.
		runtime.Gosched()
		return nil
	})
}

// catchUpSecondary writes the secondary indexes of every searchable turn,
// a task of Work's Index class at a time. A step ends early while a newer
// turn waits to be made searchable, so that its acknowledgement waits for
// little of one; the next step takes up the rest.
func (ix *Indexer) catchUpSecondary(ctx context.Context) error {
	if ix.split == nil {
		return nil
	}
	newer := func() bool { return ix.archive.LastSeq() > ix.Indexed() }
	for {
		if ix.complete() >= ix.Indexed() {
			return nil
		}
		var done bool
		var through int64
		err := ix.Work.Do(ctx, work.Index, func() (err error) {
			// Read when the worker is granted, not when asked for: the
			// turns made searchable while the task waited go with it,
			// before the tasks that waited beside it.
			through = ix.Indexed()
			done, err = ix.split.IndexSecondary(ctx, through, 0, newer)
			return err
		})
		if err != nil {
			ix.prog.fail(err)
			return err
		}
		if done {
			ix.prog.advance(through)
		}
	}
}

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
