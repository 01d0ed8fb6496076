package engine_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/config"
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
	cfg, err := config.LoadConfig(home, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	root, path, err := engine.AddVault(cfg, notes+"/./", "team", noEnv)
	if err != nil || root != notes || path != filepath.Join(home, config.ConfigFile) {
		t.Fatalf("AddVault: root %q, path %q, %v", root, path, err)
	}
	if cfg, err = config.LoadConfig(home, noEnv); err != nil || !cfg.HasVault(notes) || cfg.Vaults[0].Namespace != "team" {
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
