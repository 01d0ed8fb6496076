package server

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/httpapi"
)

// Config is the configuration of a server: the engine's, and the settings of
// the HTTP transport. Both come from the same sources (defaults, then
// <home>/config.toml, then ENGRAM_* variables, then flags) under the same
// keys as before the engine stopped holding the transport's.
type Config struct {
	config.Config
	HTTP
}

// HTTP is the HTTP transport's part of config.toml.
type HTTP struct {
	// Addr is where `engram serve` listens.
	Addr string `toml:"addr"`
	// Token is the bearer token; required when Addr is not loopback.
	Token string `toml:"token"`
	// AllowedHosts are the names a request's Host may give besides the
	// listen address, localhost and the loopback IPs ("*": any); the rest
	// is refused, which stops DNS rebinding.
	AllowedHosts []string `toml:"allowed_hosts"`
	// AllowedOrigins are the origins (scheme://host[:port]) whose web
	// pages may call the API, besides pages engram serves itself.
	AllowedOrigins []string `toml:"allowed_origins"`
	// MaxBodyBytes limits an HTTP request body.
	MaxBodyBytes int64 `toml:"max_body_bytes"`
}

// DefaultConfig returns the defaults, before config.toml and the
// environment.
func DefaultConfig() Config {
	return Config{
		Config: config.DefaultConfig(),
		HTTP:   HTTP{Addr: httpapi.DefaultAddr, MaxBodyBytes: httpapi.DefaultMaxBodyBytes},
	}
}

// LoadConfig reads the configuration of home as config.LoadConfig does, the
// HTTP settings included: defaults, then home/config.toml (an unknown
// setting is an error), then the ENGRAM_* variables getenv returns,
// validated. It does not create the home.
func LoadConfig(home string, getenv func(string) string) (Config, error) {
	cfg := DefaultConfig()
	ecfg, err := config.LoadConfig(home, getenv, &cfg.HTTP)
	cfg.Config = ecfg
	if err != nil {
		return cfg, err
	}
	if err := cfg.HTTP.applyEnv(getenv); err != nil {
		return cfg, err
	}
	return cfg, cfg.HTTP.Validate()
}

// applyEnv overrides h with the ENGRAM_* variables.
func (h *HTTP) applyEnv(getenv func(string) string) error {
	if v := getenv("ENGRAM_ADDR"); v != "" {
		h.Addr = v
	}
	if v := getenv("ENGRAM_TOKEN"); v != "" {
		h.Token = v
	}
	if v := getenv("ENGRAM_ALLOWED_HOSTS"); v != "" {
		h.AllowedHosts = splitList(v)
	}
	if v := getenv("ENGRAM_ALLOWED_ORIGINS"); v != "" {
		h.AllowedOrigins = splitList(v)
	}
	if v := getenv("ENGRAM_MAX_BODY_BYTES"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("ENGRAM_MAX_BODY_BYTES=%q is not an integer", v)
		}
		h.MaxBodyBytes = n
	}
	return nil
}

// splitList reads a comma-separated list of an environment variable.
func splitList(v string) []string {
	var out []string
	for _, f := range strings.Split(v, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// Validate checks the HTTP settings and names the first bad one.
func (h HTTP) Validate() error {
	for i, host := range h.AllowedHosts {
		if err := httpapi.CheckAllowedHost(host); err != nil {
			return fmt.Errorf("allowed_hosts[%d]: %w", i, err)
		}
	}
	for i, o := range h.AllowedOrigins {
		if _, err := httpapi.NormalOrigin(o); err != nil {
			return fmt.Errorf("allowed_origins[%d]: %w", i, err)
		}
	}
	if h.MaxBodyBytes <= 0 {
		return fmt.Errorf("max_body_bytes must be positive, got %d", h.MaxBodyBytes)
	}
	return nil
}

// Validate checks every setting, the engine's and the HTTP transport's, and
// names the first bad one.
func (c Config) Validate() error {
	if err := c.HTTP.Validate(); err != nil {
		return err
	}
	return c.Config.Validate()
}
