package main

import (
	"context"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/httpapi"
	"github.com/engram-dev/engram/server"
)

// backend is what CLI commands need: the home opened here
// (*engine.Engine), or the running server (*httpapi.Client).
type backend interface {
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
	_ backend = (*engine.Engine)(nil)
	_ backend = (*httpapi.Client)(nil)
)

// openBackend returns a client of the home's running server if one answers,
// else opens the home in this process. A home that holds files engram did
// not write is refused (engine.CheckHome) even when a server answers for
// it: some commands write into the home beside the server (the Claude Code
// importer's offsets), and the server would refuse the home at its next
// start.
func (m *Main) openBackend(ctx context.Context, cfg server.Config) (backend, error) {
	if err := engine.CheckHome(cfg.Home); err != nil {
		return nil, err
	}
	if c := discoverServer(ctx, cfg); c != nil {
		return c, nil
	}
	e, err := engine.Open(ctx, cfg.Config, m.logger(cfg))
	if engram.ErrorCode(err) == engram.ELOCKED {
		// Another process holds the home: a server that did not answer
		// within the second (a loaded machine, a server still starting)
		// is given longer before the lock's error is the answer.
		if c := server.Discover(ctx, cfg, lockedServerWait); c != nil {
			return c, nil
		}
	}
	if err != nil {
		return nil, err
	}
	return e, nil
}

// lockedServerWait is how long a command waits for the health of the
// server that serve.json names when that server holds the home's lock.
const lockedServerWait = 15 * time.Second

// openHome loads the configuration and returns the backend of its home
// (openBackend): what most commands begin with.
func (m *Main) openHome(ctx context.Context) (server.Config, backend, error) {
	cfg, err := m.loadConfig()
	if err != nil {
		return cfg, nil, err
	}
	be, err := m.openBackend(ctx, cfg)
	return cfg, be, err
}

// withHome opens the home's backend (openHome), calls f on it and closes
// it: what a command that makes one call begins with.
func withHome[T any](ctx context.Context, m *Main, f func(backend) (T, error)) (T, error) {
	_, be, err := m.openHome(ctx)
	if err != nil {
		var zero T
		return zero, err
	}
	defer be.Close()
	return f(be)
}

// discoverServer returns a client of the server serve.json names, if it
// answers /v1/health within a second; nil otherwise.
func discoverServer(ctx context.Context, cfg server.Config) *httpapi.Client {
	return server.Discover(ctx, cfg, time.Second)
}
