package palace

import (
	"context"
	"fmt"
)

// pageSize is the palace's page size: 8 KB, where SQLite's default is 4 KB.
// When vectors were stored in half precision, a 512-dimension row and its
// key fitted three to a 4 KB page, a fifth of the page unused, and seven to
// an 8 KB page, and the palace was smaller (docs/benchmarks.md, "Pages of 8
// KB"). A new palace is created with it
// (dsn); an older one is written anew with it once, when it opens.
const pageSize = 8192

// convertPageSize writes the palace anew with pageSize pages (VACUUM) if it
// has others. It runs on the writer before the readers and the checkpointer
// connect: VACUUM needs the database to itself, and a page size changes
// only out of WAL mode. It needs room for a copy of the database and some
// seconds (about 10 at 100,000 turns); where it cannot run (a full disk,
// another process holding the database) the palace keeps its pages, works
// as before, and the next open tries again.
func (db *DB) convertPageSize(ctx context.Context) (err error) {
	var have int
	if err := db.w.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&have); err != nil {
		return fmt.Errorf("palace: page size: %w", err)
	}
	if have == pageSize {
		return nil
	}
	var mode string
	if err := db.w.QueryRowContext(ctx, `PRAGMA journal_mode = DELETE`).Scan(&mode); err != nil || mode != "delete" {
		// Another connection holds the database in WAL mode.
		return nil
	}
	defer func() {
		if werr := db.w.QueryRowContext(ctx, `PRAGMA journal_mode = WAL`).Scan(&mode); werr != nil || mode != "wal" {
			err = fmt.Errorf("palace: back to WAL mode after changing the page size: got %q: %w", mode, werr)
		}
	}()
	if _, err := db.w.ExecContext(ctx, fmt.Sprintf(`PRAGMA page_size = %d`, pageSize)); err != nil {
		return nil
	}
	if _, err := db.w.ExecContext(ctx, `VACUUM`); err != nil {
		return nil // the pages stay as they were
	}
	return nil
}
