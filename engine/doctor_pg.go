package engine

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/homedir"
	"github.com/engram-dev/engram/palace"
	"github.com/engram-dev/engram/postgres"
)

// applied reads what the palace p applied of the shared archive: its
// watermarks of the archive, of the rewrite journal and of the
// corrections journal.
func applied(ctx context.Context, p palaceStore) (postgres.Applied, error) {
	seq, err := p.IndexedSeq(ctx)
	if err != nil {
		return postgres.Applied{}, err
	}
	rw, err := p.WorkerSeq(ctx, rewriteWorker)
	if err != nil {
		return postgres.Applied{}, err
	}
	cw, err := p.WorkerSeq(ctx, correctionWorker)
	return postgres.Applied{IndexedSeq: seq, Rewrites: rw, Corrections: cw}, err
}

// stoppedApplied reads what the palace of cfg's home applied, before
// DoctorHome opens the home: opening it starts catching it up, and the
// lag of a stopped server is what it finds as it starts. A home without
// a palace yet has applied nothing.
func stoppedApplied(ctx context.Context, cfg config.Config) (postgres.Applied, error) {
	a := postgres.Applied{Stopped: true}
	if cfg.Palace == config.PalacePostgres {
		p, err := openPalace(ctx, cfg, palace.Options{})
		if err != nil {
			return a, err
		}
		defer p.Close()
		got, err := applied(ctx, p)
		got.Stopped = true
		return got, err
	}
	path := filepath.Join(cfg.Home, homedir.PalaceFile)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return a, nil
	}
	p, err := palace.Open(path, palace.Options{})
	if err != nil {
		return a, err
	}
	defer p.Close()
	got, err := applied(ctx, sqlitePalace{p})
	got.Stopped = true
	return got, err
}

// checkPostgres adds the checks of the database of a server with store =
// "postgres" (postgres.Doctor: reachable, schema, this server's lag), and
// reports whether its archive can be used: when it cannot, the checks that
// read the archive would only fail after waiting on it. before, when not
// nil, is what the palace had applied before this doctor opened the home.
func (e *Engine) checkPostgres(ctx context.Context, r *engram.DoctorReport, before *postgres.Applied) bool {
	if e.cfg.Store != config.StorePostgres {
		return true
	}
	var a postgres.Applied
	var aerr error
	if before != nil {
		a = *before
	} else {
		e.settleIndex(ctx)
		a, aerr = applied(ctx, e.palace)
	}
	if s, ok := e.archive.(interface{ SchemaFound() int }); ok {
		a.SchemaFound = s.SchemaFound()
	}
	checks, usable := postgres.Doctor(ctx, e.cfg.PostgresURL(), a)
	for _, c := range checks {
		if c.Name == postgres.CheckLag && aerr != nil {
			c = failCheck(c.Name, "the palace's watermarks could not be read: "+engram.ErrorText(aerr), fixRebuild)
		}
		r.Add(c)
	}
	return usable
}
