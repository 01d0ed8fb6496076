package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/engine"
)

func noEnv(string) string { return "" }

// TestAddVault: a folder is recorded once, as its absolute path; a file,
// a missing folder, the same vault again, and a folder inside it are
// refused, config.toml left as it was.
func TestAddVault(t *testing.T) {
	home, notes := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(notes, "adr"), 0o700)
	os.WriteFile(filepath.Join(notes, "a.md"), []byte("# A\n"), 0o600)
	cfg, err := engine.LoadConfig(home, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	root, path, err := engine.AddVault(cfg, notes+"/./", "team", noEnv)
	if err != nil || root != notes || path != filepath.Join(home, engine.ConfigFile) {
		t.Fatalf("AddVault: root %q, path %q, %v", root, path, err)
	}
	if cfg, err = engine.LoadConfig(home, noEnv); err != nil || !cfg.HasVault(notes) || cfg.Vaults[0].Namespace != "team" {
		t.Fatalf("config after: %+v, %v", cfg.Vaults, err)
	}
	before, _ := os.ReadFile(path)
	for dir, code := range map[string]string{
		notes:                          engram.ECONFLICT,
		filepath.Join(notes, "adr"):    engram.ECONFLICT,
		filepath.Join(notes, "a.md"):   engram.EINVALID,
		filepath.Join(notes, "absent"): engram.ENOTFOUND,
	} {
		if _, _, err := engine.AddVault(cfg, dir, "", noEnv); engram.ErrorCode(err) != code {
			t.Errorf("%s: %v, want %s", dir, err, code)
		}
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Errorf("config.toml changed by the refusals:\n%s", after)
	}
}

// TestWithPending: the vaults config.toml records but the server does not
// serve come last, marked pending.
func TestWithPending(t *testing.T) {
	cfg := engine.Config{Vaults: []engine.VaultConfig{{Path: "/notes/"}, {Path: "/added", Namespace: "x"}}}
	got := cfg.WithPending([]engram.VaultStatus{{Path: "/notes", Namespace: "default", Docs: 3}})
	if len(got) != 2 || got[0].Pending != "" || got[1].Path != "/added" || got[1].Namespace != "x" ||
		!strings.Contains(got[1].Pending, "restart it") {
		t.Fatalf("%+v", got)
	}
	if got := (engine.Config{}).WithPending(nil); len(got) != 0 {
		t.Fatalf("no vaults: %+v", got)
	}
}
