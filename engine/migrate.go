package engine

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/homedir"
	"github.com/engram-dev/engram/postgres"
)

// MigrateToPostgres copies home's archive (every day file's lines,
// tombstones and redactions as they are) and its corrections journal into
// the empty PostgreSQL database at url, then checks both sides
// (postgres.Archive.Import). The home must not be open: stop its server
// first.
func MigrateToPostgres(ctx context.Context, home, url string, logger *slog.Logger) (postgres.DumpInfo, error) {
	dir := filepath.Join(home, homedir.ArchiveDir)
	if _, err := os.Stat(dir); err != nil {
		return postgres.DumpInfo{}, fmt.Errorf("migrate: the home %s has no archive: %w", home, err)
	}
	a, err := postgres.Open(ctx, url, postgres.Options{Logger: logger})
	if err != nil {
		return postgres.DumpInfo{}, err
	}
	defer a.Close()
	info, err := a.Import(ctx, dir, postgres.HomeFiles{Journal: filepath.Join(home, archive.CorrectionsFile), Config: filepath.Join(home, config.ConfigFile)})
	if err != nil {
		return info, fmt.Errorf("migrate: %w", err)
	}
	return info, nil
}

// MigrateFromPostgres writes the archive and the corrections of the
// database at url into home, a new home (created if missing) whose archive
// must be empty, and checks them the same way (postgres.Archive.Export);
// its indexes are then built by Rebuild. A home holding files engram did
// not write is refused before anything is written into it.
func MigrateFromPostgres(ctx context.Context, url, home string, logger *slog.Logger) (postgres.DumpInfo, error) {
	foreign, err := homedir.ForeignFiles(home)
	if err != nil {
		return postgres.DumpInfo{}, err
	}
	if len(foreign) > 0 {
		return postgres.DumpInfo{}, fmt.Errorf("migrate: %s holds files engram did not write (%s): migrate into a new home", home, strings.Join(foreign, ", "))
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return postgres.DumpInfo{}, err
	}
	a, err := postgres.Open(ctx, url, postgres.Options{Logger: logger})
	if err != nil {
		return postgres.DumpInfo{}, err
	}
	defer a.Close()
	info, err := a.Export(ctx, filepath.Join(home, homedir.ArchiveDir), postgres.HomeFiles{Journal: filepath.Join(home, archive.CorrectionsFile), Config: filepath.Join(home, config.ConfigFile)})
	if err != nil {
		return info, fmt.Errorf("migrate: %w", err)
	}
	return info, nil
}
