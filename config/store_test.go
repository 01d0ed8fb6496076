package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStore: store is files by default or postgres, whose URL comes from
// ENGRAM_POSTGRES_URL only; a URL or password in config.toml is refused
// without quoting it, and a bad store names the setting.
func TestStore(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(home, ConfigFile), []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := LoadConfig(home, getenv)
	if err != nil || cfg.Store != StoreFiles || cfg.PostgresURL() != "" {
		t.Fatalf("defaults: store %q, url %q, %v", cfg.Store, cfg.PostgresURL(), err)
	}

	write("store = \"postgres\"\n")
	if _, err := LoadConfig(home, getenv); err == nil || !strings.Contains(err.Error(), "store") || !strings.Contains(err.Error(), EnvPostgresURL) {
		t.Errorf("postgres without a URL: %v", err)
	}
	env[EnvPostgresURL] = " postgres://engram:s3cret@db:5432/engram \n"
	if cfg, err = LoadConfig(home, getenv); err != nil || cfg.Store != StorePostgres || cfg.PostgresURL() != "postgres://engram:s3cret@db:5432/engram" {
		t.Fatalf("postgres: store %q, url %q, %v", cfg.Store, cfg.PostgresURL(), err)
	}
	if cfg.WithPostgresURL("postgres://x@y/z").PostgresURL() != "postgres://x@y/z" {
		t.Error("WithPostgresURL")
	}

	write("store = \"sqlite\"\n")
	if _, err := LoadConfig(home, getenv); err == nil || !strings.Contains(err.Error(), `store "sqlite"`) {
		t.Errorf("a bad store: %v", err)
	}
	write("")
	env["ENGRAM_STORE"] = "mysql"
	if _, err := LoadConfig(home, getenv); err == nil || !strings.Contains(err.Error(), `store "mysql"`) {
		t.Errorf("a bad ENGRAM_STORE: %v", err)
	}
	env["ENGRAM_STORE"] = "postgres"
	if cfg, err = LoadConfig(home, getenv); err != nil || cfg.Store != StorePostgres {
		t.Errorf("ENGRAM_STORE=postgres: %q, %v", cfg.Store, err)
	}
	delete(env, "ENGRAM_STORE")

	for _, key := range []string{"postgres_url", "postgres_password"} {
		write(key + " = \"postgres://engram:s3cret@db/engram\"\n")
		_, err := LoadConfig(home, getenv)
		if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), key) ||
			!strings.Contains(err.Error(), EnvPostgresURL) || !strings.Contains(err.Error(), "never read from a file") {
			t.Errorf("%s in config.toml: %v", key, err)
		}
	}
}

// TestPalace: the palace is the home's file by default, or the archive's
// database with store = "postgres" only; a bad palace names the setting.
func TestPalace(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{EnvPostgresURL: "postgres://engram@db/engram"}
	getenv := func(k string) string { return env[k] }
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(home, ConfigFile), []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if cfg, err := LoadConfig(home, getenv); err != nil || cfg.Palace != PalaceHome {
		t.Fatalf("default palace %q, %v; want home", cfg.Palace, err)
	}
	write("palace = \"postgres\"\n")
	if _, err := LoadConfig(home, getenv); err == nil || !strings.Contains(err.Error(), `palace "postgres" needs store = "postgres"`) {
		t.Errorf("palace postgres over the files: %v", err)
	}
	write("store = \"postgres\"\npalace = \"postgres\"\n")
	if cfg, err := LoadConfig(home, getenv); err != nil || cfg.Palace != PalacePostgres {
		t.Errorf("palace postgres: %q, %v", cfg.Palace, err)
	}
	write("store = \"postgres\"\npalace = \"postgres\"\nvector_index = \"chroma\"\n")
	if _, err := LoadConfig(home, getenv); err == nil || !strings.Contains(err.Error(), `vector_index = "chroma" does not work with palace = "postgres"`) {
		t.Errorf("chroma on the shared palace: %v", err)
	}
	write("store = \"postgres\"\n")
	env["ENGRAM_PALACE"] = "sqlite"
	if _, err := LoadConfig(home, getenv); err == nil || !strings.Contains(err.Error(), `palace "sqlite": want home or postgres`) {
		t.Errorf("a bad ENGRAM_PALACE: %v", err)
	}
}
