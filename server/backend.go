package server

import (
	"context"
	"log/slog"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/homedir"
	"github.com/engram-dev/engram/httpapi"
)

// Backend is what a CLI command needs of a home: the home opened in this
// process (*engine.Engine), or a client of the server that holds it
// (*httpapi.Client).
type Backend interface {
	engram.IngestService
	engram.RecallService
	engram.StatusService
	engram.LayerService
	engram.VaultAdmin
	engram.ForgetService
	engram.CorrectService
	engram.RedactService
	engram.BackupService
	// ListJobs and RunJobs list and run the scheduled jobs (RunJobs: the
	// one called name, or those due, or every job).
	ListJobs(ctx context.Context) ([]engram.JobStatus, error)
	RunJobs(ctx context.Context, name string, due bool) ([]engram.JobStatus, error)
	// DocGraph is engram.VaultService's: ENOTFOUND for an unknown document.
	DocGraph(ctx context.Context, vault, doc string, depth int) (engram.DocGraph, error)
	Close() error
}

var (
	_ Backend = (*engine.Engine)(nil)
	_ Backend = (*httpapi.Client)(nil)
)

// DiscoverWait is how long a command waits for the health of the server
// serve.json names before it opens the home itself.
const DiscoverWait = time.Second

// lockedServerWait is how long a command waits for the server that holds
// the home's lock to write serve.json and answer its health.
const lockedServerWait = 15 * time.Second

// OpenBackend returns a client of the home's running server if one answers
// (Discover), else opens the home in this process with logger. A home that
// holds files engram did not write is refused (homedir.Check) even when
// a server answers for it: some commands write into the home beside the
// server (the Claude Code importer's offsets), and the server would refuse
// the home at its next start.
func OpenBackend(ctx context.Context, cfg Config, logger *slog.Logger) (Backend, error) {
	if err := homedir.Check(cfg.Home); err != nil {
		return nil, err
	}
	if c := Discover(ctx, cfg); c != nil {
		return c, nil
	}
	e, err := engine.Open(ctx, cfg.Config, logger)
	if engram.ErrorCode(err) == engram.ELOCKED {
		// Another process holds the home: a server that did not answer
		// within the second (a loaded machine, a server still starting,
		// serve.json not written yet) is given longer before the lock's
		// error is the answer.
		if c := awaitServer(ctx, cfg, lockedServerWait); c != nil {
			return c, nil
		}
	}
	if err != nil {
		return nil, err
	}
	return e, nil
}
