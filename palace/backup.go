package palace

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/sqlrow"
)

// Info is what a palace file holds, as Backup and ReadInfo report it.
type Info struct {
	// SchemaVersion is the highest migration applied.
	SchemaVersion int
	// IndexedSeq is the watermark: every archived turn up to it is stored.
	IndexedSeq int64
	// Turns counts the stored turns.
	Turns int64
}

// Backup writes a consistent copy of the database to path, a new file (it
// must not exist), while reads and writes go on: VACUUM INTO on a
// connection of its own reads one snapshot, in a read transaction that WAL
// lets run beside the writer, and writes it compacted into path, which is
// then fsynced. It returns what the copy holds, read from the copy.
//
// Every row of the copy belongs to one committed state of the palace, so
// its derived rows never run ahead of its watermarks: IndexedSeq, the
// workers' and the vector models' seqs are those of that state.
//
// It returns ECONFLICT when path exists, EUNAVAILABLE after Close and
// ctx.Err() when ctx ends (path is then removed).
func (db *DB) Backup(ctx context.Context, path string) (Info, error) {
	if db.closed.Load() {
		return Info{}, errClosed()
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return Info{}, fmt.Errorf("palace: backup: %w", err)
	}
	// Created first for its mode, as Open does: SQLite accepts an empty
	// file as the target of VACUUM INTO.
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return Info{}, engram.Errorf(engram.ECONFLICT, "palace backup: %s exists", abs)
	}
	if err != nil {
		return Info{}, fmt.Errorf("palace: backup: %w", err)
	}
	f.Close()
	if err := db.vacuumInto(ctx, abs); err != nil {
		os.Remove(abs)
		return Info{}, err
	}
	if err := syncFile(abs); err != nil {
		os.Remove(abs)
		return Info{}, fmt.Errorf("palace: backup: %w", err)
	}
	return ReadInfo(ctx, abs)
}

// vacuumInto runs VACUUM INTO on a connection of its own: the readers are
// query_only, which refuses it, and the writer would hold up every write
// for as long as the copy takes.
func (db *DB) vacuumInto(ctx context.Context, dst string) error {
	conn, err := sqlrow.OpenPool(sqlrow.FileDSN(db.path, url.Values{"_pragma": {"busy_timeout(5000)"}}), 1)
	if err != nil {
		return fmt.Errorf("palace: backup: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `VACUUM INTO ?`, dst); err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		return fmt.Errorf("palace: backup: vacuum into %s: %w", dst, err)
	}
	return nil
}

// ReadInfo reads the schema version, the watermark and the number of turns
// of the palace file at path without writing to it (nor creating -wal or
// -shm files beside it): the file must not be in use. ENOTFOUND when there
// is no such file.
func ReadInfo(ctx context.Context, path string) (Info, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Info{}, fmt.Errorf("palace: read info: %w", err)
	}
	if _, err := os.Stat(abs); errors.Is(err, os.ErrNotExist) {
		return Info{}, engram.Errorf(engram.ENOTFOUND, "palace %s does not exist", abs)
	}
	conn, err := sql.Open("sqlite", sqlrow.FileDSN(abs, url.Values{"mode": {"ro"}, "immutable": {"1"}}))
	if err != nil {
		return Info{}, fmt.Errorf("palace: read info: %w", err)
	}
	defer conn.Close()
	var info Info
	var version sql.NullInt64
	err = conn.QueryRowContext(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&version)
	if err == nil {
		info.SchemaVersion = int(version.Int64)
		err = conn.QueryRowContext(ctx, `SELECT count(*) FROM turns`).Scan(&info.Turns)
	}
	if err == nil {
		_, err = sqlrow.One(conn.QueryRowContext(ctx, `SELECT value FROM palace_meta WHERE key = ?`, keyIndexedSeq), &info.IndexedSeq)
	}
	if err != nil {
		return Info{}, fmt.Errorf("palace: read info of %s: %w", abs, err)
	}
	return info, nil
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// IsDiskFull reports whether err is SQLite's "database or disk is full"
// (a write, a VACUUM INTO, that found no room).
func IsDiskFull(err error) bool {
	var e *sqlite.Error
	return errors.As(err, &e) && e.Code()&0xff == sqlite3.SQLITE_FULL
}
