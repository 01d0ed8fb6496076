package palace

import (
	"context"
	"database/sql"
	"fmt"
)

// Optimize merges the full-text indexes' segments (FTS5 'optimize'), lets
// SQLite refresh its query planner statistics (PRAGMA optimize) and
// checkpoints the write-ahead log into the database file, truncating it.
// It is the scheduler's index-compaction job: searches get faster as
// segments merge, and the WAL stops growing between restarts.
func (db *DB) Optimize(ctx context.Context) error {
	err := db.Update(ctx, func(tx *sql.Tx) error {
		for _, table := range []string{"turns_fts", "turns_trigram", "turns_cjk"} {
			if _, err := tx.ExecContext(ctx, `INSERT INTO `+table+` (`+table+`) VALUES ('optimize')`); err != nil {
				return fmt.Errorf("%s: %w", table, err)
			}
		}
		_, err := tx.ExecContext(ctx, `PRAGMA optimize`)
		return err
	})
	if err != nil {
		return fmt.Errorf("palace: optimize: %w", err)
	}
	if _, err := db.w.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return fmt.Errorf("palace: checkpoint: %w", err)
	}
	return nil
}
