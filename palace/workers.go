package palace

import (
	"context"
	"database/sql"
	"fmt"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/sqlrow"
)

// workerKey is a worker's watermark row in palace_meta.
func workerKey(worker string) string { return "worker:" + worker }

// WorkerSeq returns a pipeline worker's watermark: the position in its
// source (archive seq, or memory change number) through which it has
// written its results. 0 when it never ran.
func (db *DB) WorkerSeq(ctx context.Context, worker string) (int64, error) {
	var seq int64
	err := db.View(ctx, func(tx *sql.Tx) error {
		var err error
		seq, err = metaIn(ctx, tx, workerKey(worker))
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("palace: watermark of %s: %w", worker, err)
	}
	return seq, nil
}

// setWorkerSeq advances a worker's watermark inside tx; it never moves back.
func setWorkerSeq(ctx context.Context, tx *sql.Tx, worker string, seq int64) error {
	if err := setMeta(ctx, tx, workerKey(worker), seq); err != nil {
		return fmt.Errorf("advance watermark of %s: %w", worker, err)
	}
	return nil
}

// SetWorkerSeq sets a worker's watermark (it never moves back).
func (db *DB) SetWorkerSeq(ctx context.Context, worker string, seq int64) error {
	return db.Update(ctx, func(tx *sql.Tx) error { return setWorkerSeq(ctx, tx, worker, seq) })
}

// Skip records that a worker gave up on the source range [from, to] (an
// LLM's output unusable after its retries) with the reason, and advances
// its watermark past it, in one transaction.
func (db *DB) Skip(ctx context.Context, worker string, from, to int64, reason string) error {
	return db.Update(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO layer_skips (worker, from_seq, to_seq, error, at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (worker, from_seq) DO UPDATE SET to_seq = excluded.to_seq, error = excluded.error, at = excluded.at`,
			worker, from, to, reason, db.now().UnixNano())
		if err != nil {
			return fmt.Errorf("palace: record skip: %w", err)
		}
		return setWorkerSeq(ctx, tx, worker, to)
	})
}

// Skips lists the ranges workers skipped, newest first, at most limit.
func (db *DB) Skips(ctx context.Context, limit int) ([]engram.Skipped, error) {
	return viewList(ctx, db, "skips", sqlrow.Scanner(func(s *engram.Skipped) []any {
		return []any{&s.Worker, &s.From, &s.To, &s.Error, sqlrow.Time(&s.At)}
	}), `SELECT worker, from_seq, to_seq, error, at FROM layer_skips ORDER BY at DESC LIMIT ?`, limit)
}

var _ engram.LayerStore = (*DB)(nil)
