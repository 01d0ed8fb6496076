package engine

import (
	"context"
	"path/filepath"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/engine/archives"
	"github.com/engram-dev/engram/postgres"
)

// correctionJournal is the corrections journal as the engine uses it: the
// home's file (fileJournal) or, with store = "postgres", the table every
// server on the database shares (pgJournal). Its reads take a ctx and
// return an error, as a database's must.
type correctionJournal interface {
	All(ctx context.Context) ([]engram.Correction, error)
	// Append records c, durably, before the palace applies it.
	Append(ctx context.Context, c engram.Correction) error
	// Rewrite replaces each correction by what edit returns (keep false
	// drops it), as a forget or a redaction needs; it returns how many
	// changed or went.
	Rewrite(ctx context.Context, edit func(engram.Correction) (engram.Correction, bool)) (int, error)
	// Backup copies the journal's lines to dst (see archive.Journal).
	Backup(dst string) (size int64, sum string, ok bool, err error)
}

// sharedJournal is a corrections journal other servers append to too:
// Changed is closed at their next append, and Since reads the entries
// after a number (team.go's correction follower).
type sharedJournal interface {
	correctionJournal
	Since(ctx context.Context, n int64) ([]postgres.JournaledCorrection, error)
	Changed() <-chan struct{}
}

// fileJournal is the home's file as a correctionJournal.
type fileJournal struct{ *archive.Journal }

var _ correctionJournal = fileJournal{}

func (j fileJournal) All(context.Context) ([]engram.Correction, error) { return j.Journal.All(), nil }
func (j fileJournal) Append(_ context.Context, c engram.Correction) error {
	return j.Journal.Append(c)
}
func (j fileJournal) Rewrite(_ context.Context, edit func(engram.Correction) (engram.Correction, bool)) (int, error) {
	return j.Journal.Rewrite(edit)
}

// pgJournal is the database's journal as a sharedJournal.
type pgJournal struct{ *postgres.Corrections }

var _ sharedJournal = pgJournal{}

func (j pgJournal) Append(ctx context.Context, c engram.Correction) error {
	_, err := j.Corrections.Append(ctx, c)
	return err
}

func (pgJournal) Backup(string) (int64, string, bool, error) {
	return 0, "", false, archives.ErrFilesOnly("engram backup", "back up the database with pg_dump; engram migrate --from URL --to DIR writes its turns and corrections into a home")
}

// openCorrections opens the corrections journal of e's archive: the
// database's when the archive is in PostgreSQL, else the home's file.
func (e *Engine) openCorrections() (correctionJournal, error) {
	if pa, ok := e.archive.(interface{ Corrections() *postgres.Corrections }); ok {
		return pgJournal{pa.Corrections()}, nil
	}
	j, err := archive.OpenJournal(filepath.Join(e.cfg.Home, archive.CorrectionsFile))
	if err != nil {
		return nil, err
	}
	return fileJournal{j}, nil
}
