package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/engram-dev/engram"
)

// Notifier is implemented by archives that can wake followers on commit.
type Notifier interface {
	// Notify returns a channel that is closed at the next commit.
	Notify() <-chan struct{}
}

// Indexer defaults.
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

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	indexed int64
	lastErr error
	changed chan struct{} // closed and replaced whenever indexed or lastErr changes
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
		changed:    make(chan struct{}),
	}
}

// Open catches the index up with the archive, then follows new commits in
// the background until Close.
func (ix *Indexer) Open(ctx context.Context) error {
	seq, err := ix.index.IndexedSeq(ctx)
	if err != nil {
		return fmt.Errorf("read index watermark: %w", err)
	}
	ix.indexed = seq
	if last := ix.archive.LastSeq(); seq > last {
		// The palace claims more than the archive holds: it belongs to
		// another archive, or the archive lost files. Refuse rather than
		// serve results whose sources do not exist.
		return engram.Errorf(engram.ECONFLICT,
			"the palace is indexed up to seq %d but the archive ends at seq %d; run `engram rebuild` to rebuild the palace from the archive", seq, last)
	}
	if err := ix.catchUp(ctx); err != nil {
		return fmt.Errorf("catch up index: %w", err)
	}
	ix.ctx, ix.cancel = context.WithCancel(context.Background())
	ix.wg.Add(1)
	go func() { defer ix.wg.Done(); ix.follow() }()
	return nil
}

// Close stops following. Turns archived but not yet indexed are picked up
// at the next Open.
func (ix *Indexer) Close() error {
	if ix.cancel != nil {
		ix.cancel()
		ix.wg.Wait()
	}
	return nil
}

// Indexed returns the indexer's watermark: every turn up to this seq is
// searchable.
func (ix *Indexer) Indexed() int64 {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.indexed
}

// Err returns the error of the last failed batch, or nil once a later batch
// succeeded.
func (ix *Indexer) Err() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.lastErr
}

// Lag returns how many archived turns are not indexed yet.
func (ix *Indexer) Lag() int64 {
	lag := ix.archive.LastSeq() - ix.Indexed()
	if lag < 0 {
		return 0
	}
	return lag
}

// Wait blocks until every turn up to seq is indexed, or ctx ends.
func (ix *Indexer) Wait(ctx context.Context, seq int64) error {
	for {
		ix.mu.Lock()
		done, ch := ix.indexed >= seq, ix.changed
		ix.mu.Unlock()
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

// WaitCurrent waits until the index has caught up with everything archived
// when it was called.
func (ix *Indexer) WaitCurrent(ctx context.Context) error {
	return ix.Wait(ctx, ix.archive.LastSeq())
}

func (ix *Indexer) follow() {
	delay := ix.RetryDelay
	var notify <-chan struct{}
	if n, ok := ix.archive.(Notifier); ok {
		notify = n.Notify()
	}
	for {
		var retry <-chan time.Time
		if err := ix.catchUp(ix.ctx); err != nil {
			if errors.Is(err, context.Canceled) {
				return
			}
			ix.Logger.Warn("indexing failed; will retry", "err", err, "retry_in", delay)
			retry = time.After(delay)
			delay = min(delay*2, maxRetryDelay)
		} else {
			delay = ix.RetryDelay
		}
		if notify == nil {
			// An archive without commit notification is polled.
			retry = time.After(ix.RetryDelay)
		}
		select {
		case <-ix.ctx.Done():
			return
		case <-notify:
			notify = ix.archive.(Notifier).Notify()
		case <-retry:
			if n, ok := ix.archive.(Notifier); ok {
				notify = n.Notify()
			}
		}
	}
}

// catchUp indexes every archived turn after the watermark, in batches.
func (ix *Indexer) catchUp(ctx context.Context) error {
	batch := make([]engram.Turn, 0, ix.batchSize())
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := ix.index.PutTurns(ctx, batch); err != nil {
			ix.setErr(err)
			return err
		}
		ix.advance(batch[len(batch)-1].Seq)
		batch = batch[:0]
		return nil
	}
	err := ix.archive.Stream(ctx, ix.Indexed(), func(t engram.Turn) error {
		batch = append(batch, t)
		if len(batch) >= ix.batchSize() {
			return flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}

func (ix *Indexer) batchSize() int {
	if ix.BatchSize <= 0 {
		return DefaultBatchSize
	}
	return ix.BatchSize
}

func (ix *Indexer) advance(seq int64) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if seq > ix.indexed {
		ix.indexed = seq
	}
	ix.lastErr = nil
	close(ix.changed)
	ix.changed = make(chan struct{})
}

func (ix *Indexer) setErr(err error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.lastErr = err
	close(ix.changed)
	ix.changed = make(chan struct{})
}
