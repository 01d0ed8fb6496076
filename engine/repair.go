package engine

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/engine/archives"
	"github.com/engram-dev/engram/homedir"
	"github.com/engram-dev/engram/palace"
)

// RepairArchive writes the damaged lines of the home's archive again from
// the palace's copies of their turns (archive.Repair): the palace indexed a
// turn before its line was damaged, and keeps it word for word with its
// id, seq, times and meta. Lines whose turn the palace does not hold are
// left (the report's Left): a backup of their day file is the way back.
// It needs the home's lock: ELOCKED while a server or another command holds
// it. Nothing else of the home changes; the palace already holds the turns.
// A home that holds another program's files is refused (homedir.Check).
func RepairArchive(ctx context.Context, cfg config.Config, logger *slog.Logger) (archive.RepairReport, error) {
	if cfg.Store == config.StorePostgres {
		return archive.RepairReport{}, archives.ErrFilesOnly("engram repair", "a row that fails its checks comes back from a copy of the database (pg_dump); engram doctor names it")
	}
	if err := homedir.Claim(cfg.Home, cfg.Version, logger); err != nil {
		return archive.RepairReport{}, err
	}
	db, err := palace.Open(filepath.Join(cfg.Home, homedir.PalaceFile), palace.Options{})
	if err != nil {
		return archive.RepairReport{}, fmt.Errorf("open palace: %w", err)
	}
	defer db.Close()
	rep, err := archive.Repair(ctx, filepath.Join(cfg.Home, homedir.ArchiveDir), archive.Options{Logger: logger.With("component", "archive")},
		func(p archive.Problem) (engram.Turn, bool, error) { return db.TurnAt(ctx, p.Seq) })
	if err != nil {
		return rep, err
	}
	return rep, db.Close()
}
