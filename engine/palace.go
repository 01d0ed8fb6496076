package engine

import (
	"context"
	"fmt"
	"path/filepath"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/homedir"
	"github.com/engram-dev/engram/palace"
	"github.com/engram-dev/engram/pgpalace"
	"github.com/engram-dev/engram/pgpalace/pgvectors"
	"github.com/engram-dev/engram/pipeline"
	"github.com/engram-dev/engram/scheduler"
	"github.com/engram-dev/engram/vault"
	"github.com/engram-dev/engram/vecindex"
)

// palaceStore is everything the engine asks of its palace, by role (the
// root's interfaces; docs/architecture.md, "The palace's seam"), so that
// its work does not depend on the database that holds the palace. What
// only a SQLite file has is palaceFile, asked for apart (Engine.file).
type palaceStore interface {
	pipeline.SplitIndex // the indexer's writes, TurnIndex's searches, Stats
	engram.TurnLookup
	engram.UnitIndex
	engram.LayerStore
	engram.LayerIndex
	engram.LayerService
	engram.BrowseService
	engram.TurnRewriter
	engram.CorrectionStore
	engram.WorkerMarks
	engram.KeywordIndexes
	Vault(vectors vectorRows) vault.Store // the vaults' tables, the chunks' vectors in vectors (nil: none)
	JobStates() scheduler.Store           // the scheduled jobs' last runs

	ActiveModel(ctx context.Context) (model string, dim int, ok bool, err error)
	ActivateModel(ctx context.Context, model string) error
	Vectors(ctx context.Context, model string, dim int) (vectorRows, error) // dim 0: as stored
	Optimize(ctx context.Context) error                                     // the compact job
	Close() error
}

// palaceFile is what a palace in one SQLite file does besides: engram
// backup copies it, doctor checks it, a forget deletes the copy a rebuild
// left beside it.
type palaceFile interface {
	Path() string
	Backup(ctx context.Context, path string) (palace.Info, error)
	CountTurnIndexes(ctx context.Context) (palace.TurnCounts, error)
	FileCheck(ctx context.Context) engram.DoctorCheck     // integrity_check
	NearKeysCheck(ctx context.Context) engram.DoctorCheck // the memories' near-duplicate keys
}

// file returns the palace as a SQLite file; false for a palace in a
// database server, which answers backups and checks its own way.
func (e *Engine) file() (palaceFile, bool) {
	f, ok := e.palace.(palaceFile)
	return f, ok
}

// vectorRows is one model's stored vectors: what the in-process index
// loads and follows, the vector jobs write, an external index follows, a
// vault sync writes with its rows, and engram reindex and doctor read.
type vectorRows interface {
	vecindex.Store
	pipeline.VectorStore
	pipeline.LayerVectorStore
	pipeline.VectorJournal
	Check(ctx context.Context, throughSeq int64) (engram.VectorCheck, error)
	DropBad(ctx context.Context) ([]engram.BadVector, error)
	TurnsWithoutVector(ctx context.Context, afterSeq, throughSeq int64, limit int) ([]engram.Turn, error)
	CountByKind(ctx context.Context) (map[string]int, error)
	Notify() <-chan struct{} // closed after the next committed write
}

// sqlitePalace is the palace in its SQLite file (package palace).
type sqlitePalace struct{ *palace.DB }

// JobStates keeps the jobs' state in the file's job_state table.
func (p sqlitePalace) JobStates() scheduler.Store { return scheduler.NewSQLStore(p.DB) }

func (p sqlitePalace) Vectors(ctx context.Context, model string, dim int) (vectorRows, error) {
	v, err := p.DB.Vectors(ctx, model, dim)
	if err != nil {
		return nil, err // not a nil *VectorStore in an interface
	}
	return v, nil
}

// Vault is the file's vault tables, the chunks' vectors in vectors (nil:
// keyword search only), written in one transaction with their rows.
func (p sqlitePalace) Vault(vectors vectorRows) vault.Store {
	s := vault.SQLStore{DB: p.DB}
	if v, ok := vectors.(*palace.VectorStore); ok {
		s.Vectors = v
	}
	return s
}

var _ palaceFile = sqlitePalace{} // and a palaceStore, as Open holds it

// pgPalace is the palace in PostgreSQL (package pgpalace), one for every
// server of the database (palace = "postgres").
type pgPalace struct{ *pgpalace.DB }

func (p pgPalace) Vectors(ctx context.Context, model string, dim int) (vectorRows, error) {
	v, err := p.DB.Vectors(ctx, model, dim)
	if err != nil {
		return nil, err // not a nil *VectorStore in an interface
	}
	return v, nil
}

// Vault is the database's vault tables, the chunks' vectors in vectors
// (nil: keyword search only).
func (p pgPalace) Vault(vectors vectorRows) vault.Store {
	v, _ := vectors.(*pgvectors.Store)
	return p.DB.Vault(v)
}

var _ palaceStore = pgPalace{}

// openPalace opens the palace cfg names: the home's SQLite file (with
// opts), or, with palace = "postgres", the tables of the archive's
// database, which every server shares.
func openPalace(ctx context.Context, cfg config.Config, opts palace.Options) (palaceStore, error) {
	if cfg.Palace == config.PalacePostgres {
		db, err := pgpalace.Open(ctx, cfg.PostgresURL())
		if err != nil {
			return nil, fmt.Errorf("open palace: %w", err)
		}
		return pgPalace{db}, nil
	}
	p, err := palace.Open(filepath.Join(cfg.Home, homedir.PalaceFile), opts)
	if err != nil {
		return nil, fmt.Errorf("open palace: %w", err)
	}
	return sqlitePalace{p}, nil
}

// palaceJob is run, a job over the palace: where the servers share the
// palace, on one of them at a time (sharedJob, with no interval: the
// jobs follow the palace's watermarks, so a run after another's finds
// only what came since); otherwise on each server, over its own.
func (e *Engine) palaceJob(name string, run func(context.Context) error) func(context.Context) error {
	if _, shared := e.palace.(pgPalace); shared {
		return e.sharedJob(name, 0, run)
	}
	return run
}

// checkPalaceDB adds the checks of a palace in the database (its schema,
// this server's indexes against the tables).
func (e *Engine) checkPalaceDB(ctx context.Context, r *engram.DoctorReport) {
	if p, ok := e.palace.(pgPalace); ok {
		for _, c := range p.Checks(ctx) {
			r.Add(c)
		}
	}
}
