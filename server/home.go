package server

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/engine"
)

// CheckNotServed refuses (ECONFLICT) a command that needs cfg's home to
// itself (rebuild, repair, restore) while a server answers for the home,
// naming the server; nil when none answers.
func CheckNotServed(ctx context.Context, cfg Config, command string) error {
	if c := Discover(ctx, cfg); c != nil {
		return engram.Errorf(engram.ECONFLICT, "engram serve is running on %s (%s): stop it, run `engram %s`, start it again", cfg.Home, c.Base(), command)
	}
	return nil
}

// Rebuild rebuilds the palace of cfg's home from its archive and vaults
// (engine.Rebuild), refused while a server answers for the home; with a
// Chroma vector index it then refills the collection, which is derived
// too (refilled reports it). An error after the rebuild says so.
func Rebuild(ctx context.Context, cfg Config, logger *slog.Logger, progress func(stage string, done, total int64), keep bool) (rep engine.RebuildReport, refilled bool, err error) {
	if err := CheckNotServed(ctx, cfg, "rebuild"); err != nil {
		return rep, false, err
	}
	if rep, err = engine.Rebuild(ctx, cfg.Config, logger, progress, keep); err != nil {
		return rep, false, err
	}
	if cfg.VectorIndex != config.VectorsChroma || rep.Model == "" {
		return rep, false, nil
	}
	if progress != nil {
		progress("refilling the Chroma collection", 0, 0)
	}
	if err := engine.RefillChroma(ctx, cfg.Config, logger); err != nil {
		return rep, false, fmt.Errorf("the palace is rebuilt, but refilling Chroma failed (run `engram reindex vectors`): %w", err)
	}
	return rep, true, nil
}

// Restore restores the backup in dir into cfg's home (engine.OpenBackup,
// then Backup.Restore), refused while a server answers for the home. The
// restored home is opened to check it with the configuration load returns,
// read once the restored config.toml is in place, and the logger newLogger
// makes of it.
func Restore(ctx context.Context, cfg Config, dir string, force bool, load func() (Config, error), newLogger func(Config) *slog.Logger) (engine.RestoreReport, error) {
	b, err := engine.OpenBackup(dir, cfg.Home)
	if err != nil {
		return engine.RestoreReport{}, err
	}
	if err := CheckNotServed(ctx, cfg, "restore"); err != nil {
		return engine.RestoreReport{}, err
	}
	return b.Restore(ctx, force, func(ctx context.Context) (*engine.Engine, error) {
		restored, err := load()
		if err != nil {
			return nil, fmt.Errorf("restored into %s, but its config does not load: %w", cfg.Home, err)
		}
		if restored.Store == config.StorePostgres {
			// A backup is a home's files (engram backup refuses a home on
			// PostgreSQL); served with store = "postgres" they would not
			// be read, and the counts below would compare the database.
			return nil, engram.Errorf(engram.EINVALID, "restored the backup's files into %s, but its config (config.toml or ENGRAM_STORE) selects store = %q, which reads the turns from the database, not these files: "+
				"serve them with store = %q, or copy them into an empty database with engram migrate --to postgres://...", cfg.Home, config.StorePostgres, config.StoreFiles)
		}
		e, err := engine.Open(ctx, restored.Config, newLogger(restored))
		if err != nil {
			return nil, fmt.Errorf("restored into %s, but it does not open: %w", cfg.Home, err)
		}
		return e, nil
	})
}

// Doctor runs the checks of cfg's home: by the running server when one
// answers (GET /v1/doctor; at is its address), else on the home here
// (engine.DoctorHome, which checks a home too damaged to open), logging to
// logger.
func Doctor(ctx context.Context, cfg Config, logger *slog.Logger) (rep engram.DoctorReport, at string, err error) {
	if c := Discover(ctx, cfg); c != nil {
		rep, err = c.Doctor(ctx)
		return rep, strings.TrimPrefix(c.Base(), "http://"), err
	}
	return engine.DoctorHome(ctx, cfg.Config, logger), "", nil
}

// Repair writes the damaged lines of the archive of cfg's home again from
// the palace's copies of their turns (engine.RepairArchive), refused while
// a server answers for the home.
func Repair(ctx context.Context, cfg Config, logger *slog.Logger) (archive.RepairReport, error) {
	if err := CheckNotServed(ctx, cfg, "repair"); err != nil {
		return archive.RepairReport{}, err
	}
	return engine.RepairArchive(ctx, cfg.Config, logger)
}
