package pgpalace

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/sqlrow"
	"github.com/engram-dev/engram/postgres"
	"github.com/engram-dev/engram/scheduler"
)

// workerKey is a worker's watermark row in palace_meta.
func workerKey(worker string) string { return "worker:" + worker }

// WorkerSeq returns a job's watermark: the position in its source through
// which it has written its results. 0 when it never ran.
func (db *DB) WorkerSeq(ctx context.Context, worker string) (int64, error) {
	seq, err := metaIn(ctx, db.pool, workerKey(worker))
	return seq, wrap("watermark of "+worker, err)
}

// SetWorkerSeq sets a job's watermark (it never moves back).
func (db *DB) SetWorkerSeq(ctx context.Context, worker string, seq int64) error {
	return db.update(ctx, "advance watermark of "+worker, func(tx pgx.Tx) error {
		return setMeta(ctx, tx, workerKey(worker), seq)
	})
}

// ResetWorkerSeqs deletes the watermark of every worker whose name starts
// with prefix, so that each starts over from the beginning of its source,
// and returns how many it deleted. Errors: EINVALID for an empty prefix.
func (db *DB) ResetWorkerSeqs(ctx context.Context, prefix string) (int64, error) {
	if prefix == "" {
		return 0, engram.Errorf(engram.EINVALID, "pgpalace: reset worker watermarks: empty prefix")
	}
	key := workerKey(prefix)
	var n int64
	err := db.update(ctx, fmt.Sprintf("reset worker watermarks %s*", prefix), func(tx pgx.Tx) error {
		// starts_with, not LIKE: a worker's name may hold % or _.
		tag, err := tx.Exec(ctx, `DELETE FROM palace_meta WHERE starts_with(key, $1)`, key)
		n = tag.RowsAffected()
		return err
	})
	return n, err
}

// Skip records that a worker gave up on the source range [from, to] (an
// LLM's output unusable after its retries) with the reason, and advances
// its watermark past it, in one transaction.
func (db *DB) Skip(ctx context.Context, worker string, from, to int64, reason string) error {
	return db.update(ctx, "record skip", func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO palace_layer_skips (worker, from_seq, to_seq, error, at) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (worker, from_seq) DO UPDATE SET to_seq = excluded.to_seq, error = excluded.error, at = excluded.at`,
			worker, from, to, postgres.Message(reason), db.now().UnixNano())
		if err != nil {
			return err
		}
		return setMeta(ctx, tx, workerKey(worker), to)
	})
}

// Skips lists the ranges workers skipped, newest first, at most limit.
func (db *DB) Skips(ctx context.Context, limit int) ([]engram.Skipped, error) {
	rows, err := db.pool.Query(ctx, `SELECT worker, from_seq, to_seq, error, at FROM palace_layer_skips
		ORDER BY at DESC LIMIT $1`, limitOrAll(limit))
	if err != nil {
		return nil, wrap("skips", err)
	}
	out, err := pgx.AppendRows([]engram.Skipped(nil), rows, func(r pgx.CollectableRow) (engram.Skipped, error) {
		var s engram.Skipped
		err := r.Scan(&s.Worker, &s.From, &s.To, &s.Error, sqlrow.Time(&s.At))
		return s, err
	})
	return out, wrap("skips", err)
}

// JobStates returns the store of the scheduled jobs' state in this palace
// (palace_job_state): one for every server of the database, so that a job
// that ran on one is not due on another.
func (db *DB) JobStates() scheduler.Store { return jobStates{db} }

// jobStates is a scheduler.Store over palace_job_state.
type jobStates struct{ db *DB }

// Load implements scheduler.Store.
func (s jobStates) Load(ctx context.Context) (map[string]scheduler.State, error) {
	rows, err := s.db.pool.Query(ctx, `SELECT name, last_run, last_success, last_error, failures FROM palace_job_state`)
	if err != nil {
		return nil, wrap("load job state", err)
	}
	m := make(map[string]scheduler.State)
	var st scheduler.State
	_, err = pgx.ForEachRow(rows, []any{&st.Name, sqlrow.Time(&st.LastRun), sqlrow.Time(&st.LastSuccess), &st.LastError, &st.Failures}, func() error {
		m[st.Name] = st
		return nil
	})
	if err != nil {
		return nil, wrap("load job state", err)
	}
	return m, nil
}

// Save implements scheduler.Store.
func (s jobStates) Save(ctx context.Context, st scheduler.State) error {
	_, err := s.db.pool.Exec(ctx, `INSERT INTO palace_job_state (name, last_run, last_success, last_error, failures)
		VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (name) DO UPDATE SET last_run = excluded.last_run, last_success = excluded.last_success,
			last_error = excluded.last_error, failures = excluded.failures`,
		st.Name, nanosOrNil(st.LastRun), nanosOrNil(st.LastSuccess), postgres.Message(st.LastError), st.Failures)
	return wrap(fmt.Sprintf("save job %q", st.Name), err)
}

// nanosOrNil is t in Unix nanoseconds, nil (NULL) for the zero time.
func nanosOrNil(t time.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	n := t.UnixNano()
	return &n
}
