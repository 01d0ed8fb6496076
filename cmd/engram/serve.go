package main

import (
	"context"
	"fmt"

	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/httpapi"
	"github.com/engram-dev/engram/server"
)

func runServe(ctx context.Context, m *Main, args []string) error {
	fs := m.newFlagSet("serve", "serve [--addr HOST:PORT]")
	addr := fs.String("addr", "", "listen address (default from config, else "+httpapi.DefaultAddr+")")
	cfg, err := m.parseConfig(fs, args)
	if err != nil {
		return err
	}
	if *addr != "" {
		cfg.Addr = *addr
	}
	logger := m.logger(cfg)
	srv, err := server.Start(ctx, cfg, logger)
	if err != nil {
		return err
	}
	if err := server.WriteServeInfo(cfg.Home, srv.Addr()); err != nil {
		logger.Warn("could not write serve.json; CLI commands will not find this server", "err", err)
	}
	logger.Info("engram serving", "addr", srv.Addr(), "home", cfg.Home, "version", versionString(),
		"archive_seq", srv.Engine.LastSeq())
	<-ctx.Done()
	logger.Info("shutting down: finishing in-flight requests")
	if err := server.RemoveServeInfo(cfg.Home); err != nil {
		fmt.Fprintln(m.Stderr, "engram: remove", engine.ServeFile+":", err)
	}
	err = srv.Close()
	if err == nil {
		logger.Info("engram stopped cleanly")
	}
	return err
}
