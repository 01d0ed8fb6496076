package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/engram-dev/engram/httpapi"
	"github.com/engram-dev/engram/internal/atomicfile"
	"github.com/engram-dev/engram/mcp"
	"github.com/engram-dev/engram/ui"
)

// ShutdownTimeout bounds how long a server waits for in-flight requests,
// and the scheduler for a running job, when they stop.
const ShutdownTimeout = 30 * time.Second

// Server is a home served over HTTP: its engine, the HTTP API (with /mcp
// and /metrics) on top, and the scheduled jobs running.
type Server struct {
	HTTP   *httpapi.Server
	Engine *Engine
	// watcher syncs the vaults as their files change (nil when watch_vaults
	// is off or there are none). It starts before the API answers, so a
	// change made once the server is up is never missed.
	watcher *VaultWatcher
}

// StartServer opens the home of cfg and serves its HTTP API on cfg.Addr in
// the background, the jobs running on their intervals: the wiring of
// `engram serve`, which the benchmarks and the tests use to run a private
// engram the same way. Stop it with Close.
func StartServer(ctx context.Context, cfg Config, logger *slog.Logger) (*Server, error) {
	srv, err := httpapi.New(httpapi.Config{
		Addr: cfg.Addr, Token: cfg.Token, MaxBodyBytes: cfg.MaxBodyBytes, Limits: cfg.Limits(),
		AllowedHosts: cfg.AllowedHosts, AllowedOrigins: cfg.AllowedOrigins,
	}, logger.With("component", "http"))
	if err != nil {
		return nil, err
	}
	cfg.BackgroundLoad = true
	eng, err := Open(ctx, cfg, logger)
	if err != nil {
		return nil, err
	}
	eng.Serve(srv)
	if err := srv.Registerer().Register(eng.Collector()); err != nil {
		return nil, errors.Join(err, eng.Close())
	}
	if srv.MCP, err = eng.MCPHandler(); err != nil {
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
	// The jobs run on their intervals, and catch up at once on what is
	// overdue (a laptop that slept, a server that was down).
	if err := eng.sched.Start(ctx); err != nil {
		return nil, errors.Join(err, s.Close())
	}
	eng.startFollower()
	return s, nil
}

// Serve sets the engine as every service of srv (the routes of the HTTP
// API); /mcp and /metrics are the caller's to add.
func (e *Engine) Serve(srv *httpapi.Server) {
	srv.Ingest, srv.Recall, srv.Status, srv.Reembed, srv.Jobs = e.ingester, e.recall, e, e, e
	srv.Layers = e
	srv.Vaults, srv.VaultDocs = e, e
	srv.Doctor, srv.Reindex = e, e.Reindexer()
	srv.Backup = e
	srv.Forget = e
	srv.Correct = e
	srv.Redact = e
	srv.Browse = e
	srv.UI = ui.Handler()
	e.Warm()
}

// Warm starts loading, in the background, what a long-running process
// answers recall from in memory: the keyword index of the turns (searches
// use SQLite's full-text index until it is ready). The embedded vector
// index is loaded by Open, in the background with cfg.BackgroundLoad.
func (e *Engine) Warm() { e.palace.WarmKeywordIndex() }

// LoadKeywordIndexes loads the in-memory keyword indexes (of the turns,
// the units and the scenes) and waits until they are; Warm starts the same
// in the background.
func (e *Engine) LoadKeywordIndexes(ctx context.Context) error { return e.palace.LoadKeywordIndex(ctx) }

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.HTTP.Addr() }

// Close stops watching the vaults and accepting requests, lets the
// in-flight ones finish (their fsyncs included) for up to ShutdownTimeout,
// then closes the engine. It returns the first error.
func (s *Server) Close() error {
	s.watcher.Close()
	sctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	err := s.HTTP.Close(sctx)
	if cerr := s.Engine.Close(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	return err
}

// MCPHandler returns the streamable HTTP transport of the MCP tools on the
// engine, which `engram serve` mounts at /mcp.
func (e *Engine) MCPHandler() (http.Handler, error) {
	srv := e.MCPServer()
	srv.HostChecked = true // by the HTTP API's guard, with allowed_hosts
	return srv.Handler()
}

// MCPServer returns the MCP tools on the engine.
func (e *Engine) MCPServer() *mcp.Server {
	srv := mcp.NewServerFor(e)
	srv.Limits, srv.Version, srv.Logger = e.cfg.Limits(), e.cfg.Version, e.logger.With("component", "mcp")
	return srv
}

// ServeInfo is the home's ServeFile: where the process serving the home
// listens. CLI commands read it to talk to that server instead of opening
// the home, which the server has locked.
type ServeInfo struct {
	Addr      string    `json:"addr"`
	PID       int       `json:"pid"`
	StartedAt time.Time `json:"started_at"`
}

// WriteServeInfo records in home's ServeFile, atomically, that this process
// serves the home at addr.
func WriteServeInfo(home, addr string) error {
	b, err := json.Marshal(ServeInfo{Addr: addr, PID: os.Getpid(), StartedAt: time.Now().UTC()})
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(home, ServeFile), b, 0o600)
}

// ReadServeInfo reads home's ServeFile. A missing file is fs.ErrNotExist;
// one that does not parse or names no address is an error too.
func ReadServeInfo(home string) (ServeInfo, error) {
	var info ServeInfo
	b, err := os.ReadFile(filepath.Join(home, ServeFile))
	if err != nil {
		return info, err
	}
	if err := json.Unmarshal(b, &info); err != nil {
		return info, fmt.Errorf("%s: %w", ServeFile, err)
	}
	if info.Addr == "" {
		return info, fmt.Errorf("%s names no address", ServeFile)
	}
	return info, nil
}

// RemoveServeInfo removes home's ServeFile, when the server stops; a
// missing one is no error.
func RemoveServeInfo(home string) error {
	if err := os.Remove(filepath.Join(home, ServeFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
