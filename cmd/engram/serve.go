package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/engram-dev/engram/httpapi"
)

// shutdownTimeout bounds how long serve waits for in-flight requests.
const shutdownTimeout = 30 * time.Second

func runServe(ctx context.Context, m *Main, args []string) error {
	fs := m.newFlagSet("serve", "serve [--addr HOST:PORT]")
	addr := fs.String("addr", "", "listen address (default from config, else "+httpapi.DefaultAddr+")")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return &usageError{msg: fmt.Sprintf("unexpected argument %q", pos[0])}
	}
	cfg, err := m.loadConfig()
	if err != nil {
		return err
	}
	if *addr != "" {
		cfg.Addr = *addr
	}
	logger := m.logger(cfg)
	srv, err := httpapi.New(httpapi.Config{
		Addr: cfg.Addr, Token: cfg.Token, MaxBodyBytes: cfg.MaxBodyBytes, Limits: cfg.limits(),
	}, logger.With("component", "http"))
	if err != nil {
		return err
	}
	eng, err := openEngine(ctx, cfg, logger)
	if err != nil {
		return err
	}
	srv.Ingest, srv.Recall, srv.Status = eng.ingester, eng.recall, eng
	if err := srv.Open(); err != nil {
		return errors.Join(err, eng.Close())
	}
	if err := writeServeInfo(cfg.Home, serveInfo{Addr: srv.Addr(), PID: os.Getpid(), StartedAt: time.Now().UTC()}); err != nil {
		logger.Warn("could not write serve.json; CLI commands will not find this server", "err", err)
	}
	logger.Info("engram serving", "addr", srv.Addr(), "home", cfg.Home, "version", versionString(),
		"archive_seq", eng.archive.LastSeq())

	<-ctx.Done()
	logger.Info("shutting down: finishing in-flight requests")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	removeServeInfo(cfg.Home)
	err = srv.Close(sctx)
	if cerr := eng.Close(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	if err == nil {
		logger.Info("engram stopped cleanly")
	}
	return err
}
