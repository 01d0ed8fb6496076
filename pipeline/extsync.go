package pipeline

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/engram-dev/engram"
)

// DefaultSyncBatch is how many vectors go to an external index per call
// (ChromaDB takes at most 5,461 per request).
const DefaultSyncBatch = 1000

// VectorJournal is the palace's journal of one model's vectors: every write
// gets a change number, and the number through which an external index has
// seen them is kept beside them.
type VectorJournal interface {
	// Since returns up to limit vectors written after change number after,
	// in change order, and the change number of the last one.
	Since(ctx context.Context, after int64, limit int) ([]engram.VectorItem, int64, error)
	// LastChange returns the newest change number.
	LastChange(ctx context.Context) (int64, error)
	SyncedSeq(ctx context.Context) (int64, error)
	SetSyncedSeq(ctx context.Context, seq int64) error
}

// ExternalSync pushes a model's vectors from the palace (the source of
// truth for vectors) to an external index such as a ChromaDB server. While
// the server is down, writes continue into the palace and the sync falls
// behind; when it returns, the missed vectors are pushed.
type ExternalSync struct {
	journal VectorJournal
	target  engram.VectorIndex

	BatchSize  int
	RetryDelay time.Duration
	Logger     *slog.Logger

	prog *progress
	f    *follower
}

// NewExternalSync returns a sync from journal to target; Open starts it.
func NewExternalSync(journal VectorJournal, target engram.VectorIndex) *ExternalSync {
	return &ExternalSync{journal: journal, target: target, BatchSize: DefaultSyncBatch,
		RetryDelay: DefaultRetryDelay, Logger: slog.Default(), prog: newProgress(0)}
}

// Open starts pushing in the background whenever signal fires (the vector
// indexer's progress), catching up first.
func (s *ExternalSync) Open(ctx context.Context, signal func() <-chan struct{}) error {
	seq, err := s.journal.SyncedSeq(ctx)
	if err != nil {
		return fmt.Errorf("read external sync watermark: %w", err)
	}
	s.prog = newProgress(seq)
	s.f = &follower{name: "external vector sync", source: signal, step: s.step, retryDelay: s.RetryDelay, logger: s.Logger}
	s.f.start()
	return nil
}

// Close stops the sync; what is not pushed yet is pushed after the next Open.
func (s *ExternalSync) Close() error {
	if s.f != nil {
		s.f.stop()
	}
	return nil
}

// Err is the last push's error, nil once a later push succeeded.
func (s *ExternalSync) Err() error {
	_, err := s.prog.get()
	return err
}

// Synced is the change number through which the external index is current.
func (s *ExternalSync) Synced() int64 {
	seq, _ := s.prog.get()
	return seq
}

// WaitCurrent waits until every vector in the journal when it was called is
// pushed. While pushes fail it returns the error at once.
func (s *ExternalSync) WaitCurrent(ctx context.Context) error {
	if err := s.Err(); err != nil {
		return err
	}
	last, err := s.journal.LastChange(ctx)
	if err != nil {
		return err
	}
	return s.prog.wait(ctx, last)
}

func (s *ExternalSync) step(ctx context.Context) error {
	size := s.BatchSize
	if size <= 0 {
		size = DefaultSyncBatch
	}
	for {
		items, last, err := s.journal.Since(ctx, s.Synced(), size)
		if err != nil {
			s.prog.fail(err)
			return err
		}
		if len(items) == 0 {
			return nil
		}
		if err := s.target.Upsert(ctx, items); err != nil {
			err = fmt.Errorf("push %d vectors to the external index: %w", len(items), err)
			s.prog.fail(err)
			return err
		}
		if err := s.journal.SetSyncedSeq(ctx, last); err != nil {
			s.prog.fail(err)
			return err
		}
		s.prog.advance(last)
	}
}
