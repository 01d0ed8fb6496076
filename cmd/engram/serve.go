package main

import (
	"context"
	"os"
	"time"

	"github.com/engram-dev/engram/httpapi"
)

// shutdownTimeout bounds how long serve waits for in-flight requests.
const shutdownTimeout = 30 * time.Second

func runServe(ctx context.Context, m *Main, args []string) error {
	fs := m.newFlagSet("serve", "serve [--addr HOST:PORT]")
	addr := fs.String("addr", "", "listen address (default from config, else "+httpapi.DefaultAddr+")")
	if err := parseNone(fs, args); err != nil {
		return err
	}
	cfg, err := m.loadConfig()
	if err != nil {
		return err
	}
	if *addr != "" {
		cfg.Addr = *addr
	}
	logger := m.logger(cfg)
	srv, eng, err := startServer(ctx, cfg, logger)
	if err != nil {
		return err
	}
	if err := writeServeInfo(cfg.Home, serveInfo{Addr: srv.Addr(), PID: os.Getpid(), StartedAt: time.Now().UTC()}); err != nil {
		logger.Warn("could not write serve.json; CLI commands will not find this server", "err", err)
	}
	logger.Info("engram serving", "addr", srv.Addr(), "home", cfg.Home, "version", versionString(),
		"archive_seq", eng.archive.LastSeq())
	watcher, err := eng.startVaultWatcher()
	if err != nil {
		logger.Warn("vault watching is off; the hook and the vault-reconcile job keep the vaults indexed", "err", err)
	}

	<-ctx.Done()
	logger.Info("shutting down: finishing in-flight requests")
	watcher.close()
	removeServeInfo(cfg.Home)
	err = stopServer(srv, eng)
	if err == nil {
		logger.Info("engram stopped cleanly")
	}
	return err
}
