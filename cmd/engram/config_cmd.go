package main

import (
	"flag"
	"log/slog"

	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/server"
)

// loadConfig resolves the home and reads the configuration (defaults, then
// <home>/config.toml, then ENGRAM_*; the flags are applied by each command).
// It does not create the home.
func (m *Main) loadConfig() (server.Config, error) {
	home, err := m.resolveHome()
	if err != nil {
		return server.DefaultConfig(), err
	}
	cfg, err := server.LoadConfig(home, m.Getenv)
	cfg.Version = versionString()
	return cfg, err
}

// parseConfig parses the flags of a command that takes no arguments, then
// loads the configuration.
func (m *Main) parseConfig(fs *flag.FlagSet, args []string) (server.Config, error) {
	if err := parseNone(fs, args); err != nil {
		return server.Config{}, err
	}
	return m.loadConfig()
}

func (m *Main) resolveHome() (string, error) { return config.ResolveHome(m.home, m.Getenv) }

func (m *Main) logger(cfg server.Config) *slog.Logger {
	lvl, _ := config.ParseLevel(cfg.LogLevel)
	return slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: lvl}))
}

// errorLogger logs errors only, to stderr: for a command whose output says
// what went wrong, which the engine's warnings would only repeat.
func (m *Main) errorLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
}
