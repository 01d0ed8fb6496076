package main

import (
	"context"

	"github.com/engram-dev/engram/server"
)

// backend is what CLI commands need: the home opened here, or the running
// server (server.OpenBackend).
type backend = server.Backend

// openBackend returns the backend of cfg's home (server.OpenBackend).
func (m *Main) openBackend(ctx context.Context, cfg server.Config) (backend, error) {
	return server.OpenBackend(ctx, cfg, m.logger(cfg))
}

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
