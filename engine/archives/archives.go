// Package archives opens the L0 archive an engine works on, as one
// interface (Store): the file archive in the home, or, with store =
// "postgres", the table every server of one database shares. What only
// the files have fails on the table with EINVALID naming what to do
// instead (ErrFilesOnly).
package archives

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/homedir"
	"github.com/engram-dev/engram/postgres"
)

// Store is the L0 archive as the engine uses it: the file archive in the
// home (fileArchive) or, with store = "postgres", the table shared by
// every server on one database (pgArchive). The methods that ask the
// archive about ids take a ctx and return an error, as a database's must;
// those only the file archive has (Backup of its day files, RewriteDamaged)
// fail with EINVALID on the other.
type Store interface {
	archive.Rewriter
	// Redact is Rewrite for a redaction replacing every span of texts by
	// marker: the PostgreSQL archive records it (its marker, not the
	// texts) in its rewrite journal, for the other servers' palaces
	// (engine/team.go).
	Redact(ctx context.Context, ids []string, edit archive.Edit, texts []string, marker, reason string) (archive.RewriteResult, error)
	Stats(ctx context.Context) (archive.Stats, error)
	// Corrupt counts the damaged lines (rows) skipped, as Stats does, but
	// without counting the rest: health checks ask it often.
	Corrupt() int64
	// DamagedLines and RewriteDamaged reach the turns whose lines are
	// damaged; a table has no such lines.
	DamagedLines(ctx context.Context, turns []engram.Turn) (map[string]map[int]engram.Turn, error)
	RewriteDamaged(ctx context.Context, turns []engram.Turn, edit archive.Edit) (archive.RewriteResult, error)
	Backup(ctx context.Context, dst string) (archive.BackupInfo, error)
}

// fileArchive is the file archive as an Store: its answers from
// memory cannot fail.
type fileArchive struct{ *archive.Archive }

var _ Store = fileArchive{}

func (a fileArchive) Known(_ context.Context, id string) (bool, error) {
	return a.Archive.Known(id), nil
}
func (a fileArchive) Forgotten(_ context.Context, id string) (bool, error) {
	return a.Archive.Forgotten(id), nil
}
func (a fileArchive) Tombstones(context.Context) (map[string]int64, error) {
	return a.Archive.Tombstones(), nil
}
func (a fileArchive) Redact(ctx context.Context, ids []string, edit archive.Edit, _ []string, _, _ string) (archive.RewriteResult, error) {
	return a.Archive.Rewrite(ctx, ids, edit)
}
func (a fileArchive) Stats(context.Context) (archive.Stats, error) { return a.Archive.Stats(), nil }
func (a fileArchive) Corrupt() int64                               { return a.Archive.Stats().CorruptLines }

// pgArchive is the PostgreSQL archive as an Store.
type pgArchive struct{ *postgres.Archive }

var _ Store = pgArchive{}

func (a pgArchive) Stats(ctx context.Context) (archive.Stats, error) {
	st, err := a.Archive.Stats(ctx)
	if err != nil {
		return archive.Stats{}, err
	}
	return archive.Stats{Turns: st.Turns, Forgotten: st.Forgotten, Redacted: st.Redacted, Bytes: st.Bytes,
		Batches: st.Batches, Commits: st.Commits, CorruptLines: st.CorruptRows}, nil
}

func (a pgArchive) Corrupt() int64 { return a.CorruptRows() }

func (a pgArchive) Redact(ctx context.Context, ids []string, edit archive.Edit, texts []string, marker, reason string) (archive.RewriteResult, error) {
	return a.Archive.Redact(ctx, ids, edit, postgres.Redaction{Marker: marker, Reason: reason})
}

// DamagedLines finds none: a row whose line fails its checks is skipped
// and counted (Stats.CorruptLines), and only a copy of the database
// brings it back.
func (pgArchive) DamagedLines(context.Context, []engram.Turn) (map[string]map[int]engram.Turn, error) {
	return map[string]map[int]engram.Turn{}, nil
}

func (pgArchive) RewriteDamaged(context.Context, []engram.Turn, archive.Edit) (archive.RewriteResult, error) {
	return archive.RewriteResult{}, ErrFilesOnly("rewriting damaged archive lines", "restore the database from pg_dump")
}

func (pgArchive) Backup(context.Context, string) (archive.BackupInfo, error) {
	return archive.BackupInfo{}, ErrFilesOnly("engram backup", "back up the database with pg_dump, or write its turns as JSONL files with engram archive export")
}

// ErrFilesOnly is EINVALID for what needs the file archive, naming what
// to do instead with the PostgreSQL one.
func ErrFilesOnly(what, instead string) error {
	return engram.Errorf(engram.EINVALID, "%s needs store = %q; with store = %q the archive is in PostgreSQL: %s",
		what, config.StoreFiles, config.StorePostgres, instead)
}

// Open opens the archive cfg names: the home's files, which take
// the home's lock, or the PostgreSQL table, with the home's lock taken
// for the palace alone (release undoes it; nil for the files, whose Close
// releases it).
func Open(ctx context.Context, cfg config.Config, logger *slog.Logger) (Store, error) {
	logger = logger.With("component", "archive")
	if cfg.Store != config.StorePostgres {
		a, err := archive.Open(filepath.Join(cfg.Home, homedir.ArchiveDir), archive.Options{Logger: logger})
		if err != nil {
			return nil, err
		}
		return fileArchive{a}, nil
	}
	// The palace in the home is this server's alone: the home's lock
	// keeps a second process off it, as with the files.
	dir := filepath.Join(cfg.Home, homedir.ArchiveDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	lock, err := archive.LockDir(dir)
	if err != nil {
		return nil, err
	}
	a, err := postgres.Open(ctx, cfg.PostgresURL(), postgres.Options{Logger: logger})
	if err != nil {
		lock.Unlock()
		return nil, err
	}
	return lockedPG{pgArchive{a}, lock}, nil
}

// lockedPG is the PostgreSQL archive holding the home's lock until Close.
type lockedPG struct {
	pgArchive
	lock *archive.DirLock
}

func (a lockedPG) Close() error {
	err := a.pgArchive.Close()
	if uerr := a.lock.Unlock(); err == nil {
		err = uerr
	}
	return err
}
