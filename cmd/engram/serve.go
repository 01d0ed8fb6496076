package main

import (
	"context"

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
	return server.Run(ctx, cfg, m.logger(cfg))
}
