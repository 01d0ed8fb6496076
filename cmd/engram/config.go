package main

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/httpapi"
)

// Config is engram's configuration: defaults, then <home>/config.toml, then
// ENGRAM_* environment variables, then flags.
type Config struct {
	Home string `toml:"-"`

	// Addr is where `engram serve` listens.
	Addr string `toml:"addr"`
	// Token is the bearer token; required when Addr is not loopback.
	Token string `toml:"token"`
	// MaxBodyBytes limits an HTTP request body.
	MaxBodyBytes int64 `toml:"max_body_bytes"`
	// MaxContentBytes limits one turn's content.
	MaxContentBytes int `toml:"max_content_bytes"`
	// MaxBatch limits the turns of one request.
	MaxBatch int `toml:"max_batch"`
	// LogLevel is debug, info, warn or error.
	LogLevel string `toml:"log_level"`
}

// configFile is the name of the config file in the home.
const configFile = "config.toml"

func defaultConfig() Config {
	return Config{
		Addr:            httpapi.DefaultAddr,
		MaxBodyBytes:    httpapi.DefaultMaxBodyBytes,
		MaxContentBytes: engram.DefaultMaxContentBytes,
		MaxBatch:        engram.DefaultMaxBatch,
		LogLevel:        "info",
	}
}

// loadConfig resolves the home and reads the configuration. It does not
// create the home.
func (m *Main) loadConfig() (Config, error) {
	cfg := defaultConfig()
	home, err := m.resolveHome()
	if err != nil {
		return cfg, err
	}
	cfg.Home = home
	path := filepath.Join(home, configFile)
	md, err := toml.DecodeFile(path, &cfg)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return cfg, fmt.Errorf("read %s: %w", path, err)
	default:
		if und := md.Undecoded(); len(und) > 0 {
			return cfg, fmt.Errorf("%s: unknown setting %q", path, und[0].String())
		}
	}
	if err := m.applyEnv(&cfg); err != nil {
		return cfg, err
	}
	return cfg, cfg.validate()
}

func (m *Main) resolveHome() (string, error) {
	home := m.home
	if home == "" {
		home = m.Getenv("ENGRAM_HOME")
	}
	if home == "" {
		u, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no --home given, ENGRAM_HOME unset, and no user home directory: %w", err)
		}
		home = filepath.Join(u, ".engram")
	}
	return filepath.Abs(home)
}

func (m *Main) applyEnv(cfg *Config) error {
	if v := m.Getenv("ENGRAM_ADDR"); v != "" {
		cfg.Addr = v
	}
	if v := m.Getenv("ENGRAM_TOKEN"); v != "" {
		cfg.Token = v
	}
	if v := m.Getenv("ENGRAM_LOG_LEVEL"); v != "" {
		cfg.LogLevel = v
	}
	for _, e := range []struct {
		name string
		dst  any
	}{
		{"ENGRAM_MAX_BODY_BYTES", &cfg.MaxBodyBytes},
		{"ENGRAM_MAX_CONTENT_BYTES", &cfg.MaxContentBytes},
		{"ENGRAM_MAX_BATCH", &cfg.MaxBatch},
	} {
		v := m.Getenv(e.name)
		if v == "" {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("%s=%q is not an integer", e.name, v)
		}
		switch d := e.dst.(type) {
		case *int64:
			*d = n
		case *int:
			*d = int(n)
		}
	}
	return nil
}

func (c Config) validate() error {
	if c.MaxBodyBytes <= 0 {
		return fmt.Errorf("max_body_bytes must be positive, got %d", c.MaxBodyBytes)
	}
	if c.MaxContentBytes <= 0 {
		return fmt.Errorf("max_content_bytes must be positive, got %d", c.MaxContentBytes)
	}
	if c.MaxBatch <= 0 {
		return fmt.Errorf("max_batch must be positive, got %d", c.MaxBatch)
	}
	if _, err := parseLevel(c.LogLevel); err != nil {
		return err
	}
	return nil
}

func (c Config) limits() engram.Limits {
	return engram.Limits{MaxContentBytes: c.MaxContentBytes, MaxBatch: c.MaxBatch}.WithDefaults()
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToUpper(s))); err != nil {
		return l, fmt.Errorf("log_level %q: want debug, info, warn or error", s)
	}
	return l, nil
}

func (m *Main) logger(cfg Config) *slog.Logger {
	lvl, _ := parseLevel(cfg.LogLevel)
	return slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: lvl}))
}
