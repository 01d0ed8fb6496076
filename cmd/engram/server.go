package main

import (
	"context"
	"errors"
	"log/slog"

	"github.com/engram-dev/engram/httpapi"
)

// startServer opens the home of cfg and serves its HTTP API on cfg.Addr in
// the background: the wiring of `engram serve`, shared with the benchmarks,
// which run a private engram the same way. Stop it with stopServer.
func startServer(ctx context.Context, cfg Config, logger *slog.Logger) (*httpapi.Server, *engine, error) {
	srv, err := httpapi.New(httpapi.Config{
		Addr: cfg.Addr, Token: cfg.Token, MaxBodyBytes: cfg.MaxBodyBytes, Limits: cfg.limits(),
	}, logger.With("component", "http"))
	if err != nil {
		return nil, nil, err
	}
	eng, err := openEngine(ctx, cfg, logger)
	if err != nil {
		return nil, nil, err
	}
	srv.Ingest, srv.Recall, srv.Status, srv.Reembed, srv.Jobs = eng.ingester, eng.recall, eng, eng, eng
	srv.Layers = eng.palace
	srv.Vaults, srv.VaultDocs = vaultAdmin{eng}, eng.palace
	srv.Doctor, srv.Reindex = eng, &reindexer{e: eng}
	srv.Backup = eng
	if err := srv.Registerer().Register(engineCollector{eng}); err != nil {
		return nil, nil, errors.Join(err, eng.Close())
	}
	if srv.MCP, err = newMCPHandler(eng, cfg, logger); err != nil {
		return nil, nil, errors.Join(err, eng.Close())
	}
	if err := srv.Open(); err != nil {
		return nil, nil, errors.Join(err, eng.Close())
	}
	// The jobs run on their intervals, and catch up at once on what is
	// overdue (a laptop that slept, a server that was down).
	if err := eng.sched.Start(ctx); err != nil {
		return nil, nil, errors.Join(err, stopServer(srv, eng))
	}
	eng.startFollower()
	return srv, eng, nil
}

// stopServer stops accepting requests, lets the in-flight ones finish (their
// fsyncs included) for up to shutdownTimeout, then closes the engine. It
// returns the first error.
func stopServer(srv *httpapi.Server, eng *engine) error {
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	err := srv.Close(sctx)
	if cerr := eng.Close(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	return err
}
