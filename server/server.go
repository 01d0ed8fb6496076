package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"

	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/homedir"
	"github.com/engram-dev/engram/httpapi"
	"github.com/engram-dev/engram/mcp"
	"github.com/engram-dev/engram/ui"
	"github.com/engram-dev/engram/vault"
)

// Server is a home served over HTTP: its engine, the HTTP API (with /mcp,
// /metrics and the web view) on top, and the scheduled jobs running.
type Server struct {
	HTTP   *httpapi.Server
	Engine *engine.Engine
	// watcher syncs the vaults as their files change (nil when watch_vaults
	// is off or there are none). It starts before the API answers, so a
	// change made once the server is up is never missed.
	watcher *vault.Watcher
}

// Start opens the home of cfg and serves its HTTP API on cfg.Addr in the
// background, the jobs running on their intervals: the wiring of `engram
// serve`, which the benchmarks and the tests use to run a private engram
// the same way. Stop it with Close.
func Start(ctx context.Context, cfg Config, logger *slog.Logger) (*Server, error) {
	srv, err := httpapi.New(httpapi.Config{
		Addr: cfg.Addr, Token: cfg.Token, MaxBodyBytes: cfg.MaxBodyBytes, Limits: cfg.Limits(),
		AllowedHosts: cfg.AllowedHosts, AllowedOrigins: cfg.AllowedOrigins,
	}, logger.With("component", "http"))
	if err != nil {
		return nil, err
	}
	// The embedded vector index loads in the background: a server answers
	// at once at any size, by keyword until it is loaded.
	cfg.BackgroundLoad = true
	eng, err := engine.Open(ctx, cfg.Config, logger)
	if err != nil {
		return nil, err
	}
	Mount(srv, eng)
	if err := srv.Registerer().Register(eng.Collector()); err != nil {
		return nil, errors.Join(err, eng.Close())
	}
	if srv.MCP, err = MCPHandler(eng, logger); err != nil {
		return nil, errors.Join(err, eng.Close())
	}
	watcher, err := eng.StartVaultWatcher()
	if err != nil {
		logger.Warn("vault watching is off; the hook and the vault-reconcile job keep the vaults indexed", "err", err)
	}
	if err := srv.Open(); err != nil {
		watcher.Close()
		return nil, errors.Join(err, eng.Close())
	}
	s := &Server{HTTP: srv, Engine: eng, watcher: watcher}
	if err := eng.StartJobs(ctx); err != nil {
		return nil, errors.Join(err, s.Close())
	}
	return s, nil
}

// Mount sets eng as every service of srv (the routes of the HTTP API) and
// the web view, and starts warming the engine's in-memory indexes; /mcp and
// /metrics are the caller's to add.
func Mount(srv *httpapi.Server, eng *engine.Engine) {
	srv.Ingest, srv.Recall, srv.Status, srv.Reembed, srv.Jobs = eng, eng, eng, eng, eng
	srv.Layers = eng
	srv.Vaults, srv.VaultDocs = eng, eng
	srv.Doctor, srv.Reindex = eng, eng.Reindexer()
	srv.Backup = eng
	srv.Forget = eng
	srv.Correct = eng
	srv.Redact = eng
	srv.Browse = eng
	srv.UI = ui.Handler()
	eng.Warm()
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.HTTP.Addr() }

// Close stops watching the vaults and accepting requests, lets the
// in-flight ones finish (their fsyncs included) for up to
// engine.ShutdownTimeout, then closes the engine. It returns the first
// error.
func (s *Server) Close() error {
	s.watcher.Close()
	sctx, cancel := context.WithTimeout(context.Background(), engine.ShutdownTimeout)
	defer cancel()
	err := s.HTTP.Close(sctx)
	if cerr := s.Engine.Close(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	return err
}

// MCPHandler returns the streamable HTTP transport of the MCP tools on eng,
// which `engram serve` mounts at /mcp.
func MCPHandler(eng *engine.Engine, logger *slog.Logger) (http.Handler, error) {
	srv := MCPServer(eng, eng.Config(), logger)
	srv.HostChecked = true // by the HTTP API's guard, with allowed_hosts
	return srv.Handler()
}

// MCPServer returns the MCP tools on svc (an engine, or a client of the
// running server), with the limits and the version of cfg.
func MCPServer(svc mcp.Services, cfg config.Config, logger *slog.Logger) *mcp.Server {
	srv := mcp.NewServerFor(svc)
	srv.Limits, srv.Version, srv.Logger = cfg.Limits(), cfg.Version, logger.With("component", "mcp")
	return srv
}

// Run serves the home of cfg until ctx ends: what `engram serve` does. It
// starts the server (Start), records its address in serve.json so CLI
// commands find it, and once ctx ends removes serve.json and closes the
// server, letting the in-flight requests finish. It logs each step.
func Run(ctx context.Context, cfg Config, logger *slog.Logger) error {
	srv, err := Start(ctx, cfg, logger)
	if err != nil {
		return err
	}
	if err := WriteServeInfo(cfg.Home, srv.Addr()); err != nil {
		logger.Warn("could not write "+homedir.ServeFile+"; CLI commands will not find this server", "err", err)
	}
	logger.Info("engram serving", "addr", srv.Addr(), "home", cfg.Home, "version", cfg.Version,
		"archive_seq", srv.Engine.LastSeq())
	<-ctx.Done()
	logger.Info("shutting down: finishing in-flight requests")
	if err := RemoveServeInfo(cfg.Home); err != nil {
		logger.Warn("could not remove "+homedir.ServeFile, "err", err)
	}
	err = srv.Close()
	if err == nil {
		logger.Info("engram stopped cleanly")
	}
	return err
}

// ServeMCPIO serves the MCP tools on in and out until the client closes in
// or ctx ends: what `engram mcp` runs. The tools go through the home's
// running server when one answers (OpenBackend), else through the home
// opened here, warmed at once so that the first recall does not wait.
func ServeMCPIO(ctx context.Context, cfg Config, logger *slog.Logger, in io.Reader, out io.Writer) error {
	be, err := OpenBackend(ctx, cfg, logger.With("component", "mcp"))
	if err != nil {
		return err
	}
	if e, ok := be.(*engine.Engine); ok {
		e.Warm()
	}
	err = MCPServer(be, cfg.Config, logger).ServeIO(ctx, in, out)
	if cerr := be.Close(); err == nil {
		err = cerr
	}
	return err
}
