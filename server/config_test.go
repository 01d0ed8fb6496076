package server_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/httpapi"
	"github.com/engram-dev/engram/server"
)

func writeConfig(t *testing.T, home, toml string) {
	t.Helper()
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, config.ConfigFile), []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestLoadConfig: the HTTP settings keep their config.toml keys and ENGRAM_*
// variables now that the server owns them; the engine's settings in the
// same file still reach the engine, and an unknown key, a bad host or a bad
// body limit is still refused by name.
func TestLoadConfig(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }

	cfg, err := server.LoadConfig(home, getenv)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != httpapi.DefaultAddr || cfg.MaxBodyBytes != httpapi.DefaultMaxBodyBytes || cfg.Token != "" || cfg.Home != home {
		t.Fatalf("defaults: %+v", cfg)
	}

	writeConfig(t, home, `addr = "127.0.0.1:4000"
token = "file-token"
allowed_hosts = ["engram.lan"]
allowed_origins = ["https://notes.example"]
max_body_bytes = 1024
max_batch = 7
[deep]
candidates = 50
`)
	if cfg, err = server.LoadConfig(home, getenv); err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != "127.0.0.1:4000" || cfg.Token != "file-token" || !slices.Equal(cfg.AllowedHosts, []string{"engram.lan"}) ||
		!slices.Equal(cfg.AllowedOrigins, []string{"https://notes.example"}) || cfg.MaxBodyBytes != 1024 || cfg.MaxBatch != 7 || cfg.Deep.Candidates != 50 {
		t.Fatalf("from the file: %+v", cfg)
	}

	env["ENGRAM_ADDR"] = "127.0.0.1:5000"
	env["ENGRAM_TOKEN"] = "env-token"
	env["ENGRAM_ALLOWED_HOSTS"] = "a.lan, b.lan"
	env["ENGRAM_ALLOWED_ORIGINS"] = "http://x.example"
	env["ENGRAM_MAX_BODY_BYTES"] = "2048"
	if cfg, err = server.LoadConfig(home, getenv); err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != "127.0.0.1:5000" || cfg.Token != "env-token" || !slices.Equal(cfg.AllowedHosts, []string{"a.lan", "b.lan"}) ||
		!slices.Equal(cfg.AllowedOrigins, []string{"http://x.example"}) || cfg.MaxBodyBytes != 2048 {
		t.Fatalf("from the environment: %+v", cfg)
	}
	clear(env)

	for _, c := range []struct{ toml, env, want string }{
		{toml: "adress = \"127.0.0.1:1\"\n", want: `unknown setting "adress"`},
		{toml: "[deep]\ncandidate = 5\n", want: `unknown setting "deep.candidate"`},
		{toml: "allowed_hosts = [\"http://x\"]\n", want: "allowed_hosts[0]"},
		{toml: "allowed_origins = [\"notes.example\"]\n", want: "allowed_origins[0]"},
		{toml: "max_body_bytes = 0\n", want: "max_body_bytes must be positive"},
		{env: "ENGRAM_MAX_BODY_BYTES=lots", want: `ENGRAM_MAX_BODY_BYTES="lots" is not an integer`},
		{toml: "embedder = \"magic\"\n", want: `embedder "magic"`},
	} {
		writeConfig(t, home, c.toml)
		clear(env)
		if k, v, ok := strings.Cut(c.env, "="); ok {
			env[k] = v
		}
		if _, err := server.LoadConfig(home, getenv); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q %q: %v, want an error naming %s", c.toml, c.env, err, c.want)
		}
	}
}

// TestAddVaultBesideHTTPSettings: `engram vault add` on a home whose
// config.toml holds the server's settings appends the vault (the engine
// checks the file again without knowing the server's keys) and leaves a
// file both loaders read.
func TestAddVaultBesideHTTPSettings(t *testing.T) {
	home := t.TempDir()
	noEnv := func(string) string { return "" }
	writeConfig(t, home, "addr = \"127.0.0.1:4000\"\ntoken = \"secret-token\"\n")
	cfg, err := server.LoadConfig(home, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	notes := t.TempDir()
	if _, _, err := engine.AddVault(cfg.Config, notes, "team", noEnv); err != nil {
		t.Fatalf("AddVault: %v", err)
	}
	if cfg, err = server.LoadConfig(home, noEnv); err != nil || !cfg.HasVault(notes) || cfg.Addr != "127.0.0.1:4000" {
		t.Fatalf("after AddVault: %+v, %v", cfg, err)
	}
}
