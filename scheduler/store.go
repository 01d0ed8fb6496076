package scheduler

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/engram-dev/engram/internal/sqlrow"
)

// State is what the Scheduler remembers of a job between runs and restarts.
type State struct {
	Name        string
	LastRun     time.Time // start of the last run, zero if never run
	LastSuccess time.Time // start of the last successful run, zero if never
	LastError   string    // error of the last run, "" after a success
	Failures    int       // failed runs since the last success
}

// Store keeps job state. Implementations must be safe for concurrent use.
type Store interface {
	// Load returns the saved state of every job, keyed by name.
	Load(ctx context.Context) (map[string]State, error)
	// Save records st, replacing the state saved under st.Name.
	Save(ctx context.Context, st State) error
}

// Tx runs transactions; *palace.DB implements it. The scheduler takes this
// interface rather than the palace so that adapter packages stay independent.
type Tx interface {
	// Update runs fn in a write transaction, committed if fn returns nil.
	Update(ctx context.Context, fn func(*sql.Tx) error) error
	// View runs fn in a read-only transaction.
	View(ctx context.Context, fn func(*sql.Tx) error) error
}

// SQLStore is a Store over the job_state table (migration 0003_jobs).
type SQLStore struct {
	db Tx
}

var _ Store = (*SQLStore)(nil)

// NewSQLStore returns a Store that keeps job state in db's job_state table.
func NewSQLStore(db Tx) *SQLStore { return &SQLStore{db: db} }

// Load implements Store.
func (s *SQLStore) Load(ctx context.Context) (map[string]State, error) {
	m := make(map[string]State)
	err := s.db.View(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx,
			`SELECT name, last_run, last_success, last_error, failures FROM job_state`)
		if err != nil {
			return err
		}
		return sqlrow.Each(rows, func() error {
			var st State
			if err := rows.Scan(&st.Name, sqlrow.Time(&st.LastRun), sqlrow.Time(&st.LastSuccess), &st.LastError, &st.Failures); err != nil {
				return err
			}
			m[st.Name] = st
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("scheduler: load job state: %w", err)
	}
	return m, nil
}

// Save implements Store.
func (s *SQLStore) Save(ctx context.Context, st State) error {
	err := s.db.Update(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `
			INSERT INTO job_state (name, last_run, last_success, last_error, failures)
			VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (name) DO UPDATE SET
				last_run = excluded.last_run,
				last_success = excluded.last_success,
				last_error = excluded.last_error,
				failures = excluded.failures`,
			st.Name, toNanos(st.LastRun), toNanos(st.LastSuccess), st.LastError, st.Failures)
		return err
	})
	if err != nil {
		return fmt.Errorf("scheduler: save job %q: %w", st.Name, err)
	}
	return nil
}

// toNanos stores a time as Unix nanoseconds, NULL for the zero time (whose
// UnixNano is undefined).
func toNanos(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixNano(), Valid: true}
}
