package palace

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/engram-dev/engram/migrations"
)

// migrate applies the migrations of list the database lacks, in order, each
// in its own transaction together with its row in schema_migrations. A
// database that records a version beyond the last of list is refused with
// ErrSchemaTooNew before anything is applied.
//
// The writer begins IMMEDIATE transactions, so two processes opening the
// same new database serialise here; each re-checks inside its transaction
// whether the version was applied meanwhile.
func (db *DB) migrate(ctx context.Context, list []migrations.Migration) error {
	const create = `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT NOT NULL,
		applied_at TEXT NOT NULL
	)`
	if _, err := db.w.ExecContext(ctx, create); err != nil {
		return fmt.Errorf("palace: migrate: %w", err)
	}
	var have sql.NullInt64
	if err := db.w.QueryRowContext(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&have); err != nil {
		return fmt.Errorf("palace: migrate: %w", err)
	}
	if known := len(list); have.Int64 > int64(known) {
		return fmt.Errorf("palace: %s has schema version %d, this binary knows up to %d (upgrade engram): %w",
			db.path, have.Int64, known, ErrSchemaTooNew)
	}
	applied := false
	for _, m := range list {
		if int64(m.Version) <= have.Int64 {
			continue
		}
		applied = true
		err := db.Update(ctx, func(tx *sql.Tx) error {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE version = ?`, m.Version).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return nil // another process applied it while we waited for the lock
			}
			if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
				m.Version, m.Name, db.now().UTC().Format(time.RFC3339Nano))
			return err
		})
		if err != nil {
			return fmt.Errorf("palace: migration %04d_%s: %w", m.Version, m.Name, err)
		}
	}
	if applied {
		db.reclaim(ctx)
	}
	return nil
}

// reclaim gives back to the file system the pages that migrations freed
// (0012 rewrote every vector at half its size) when they are a quarter of
// the file or more: VACUUM writes the database anew without them. Its
// failure (a full disk: VACUUM needs room for a copy) is harmless: the free
// pages stay in the file and SQLite reuses them for new rows.
func (db *DB) reclaim(ctx context.Context) {
	var size int
	if err := db.w.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&size); err != nil || size != pageSize {
		return // convertPageSize's VACUUM follows
	}
	var free, total int64
	if err := db.w.QueryRowContext(ctx, `PRAGMA freelist_count`).Scan(&free); err != nil {
		return
	}
	if err := db.w.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&total); err != nil {
		return
	}
	if free*4 < total {
		return
	}
	db.w.ExecContext(ctx, `VACUUM`)
}
