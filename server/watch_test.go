package server_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/engram-dev/engram/internal/testutil"
)

// TestServeWatchesVaults: with watch_vaults on (the default), a file added
// to a configured vault is indexed by a running server within moments,
// without the hook or the reconcile job: the server starts the engine's
// vault watcher.
func TestServeWatchesVaults(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	home := filepath.Join(t.TempDir(), "home")
	root := filepath.Join(t.TempDir(), "vault")
	if err := os.MkdirAll(filepath.Join(root, "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("[[vaults]]\npath = %q\nnamespace = \"team\"\n", root)
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, home, nil)
	// A new folder and a file in it, after the server started.
	if err := os.MkdirAll(filepath.Join(root, "notes", "late"), 0o755); err != nil {
		t.Fatal(err)
	}
	// No pause: the file may land before the watcher adds the new folder,
	// and the sync that a new folder starts finds it then.
	note := "# Watched note\n\nThe quokka deployment runs on port 7781.\n"
	if err := os.WriteFile(filepath.Join(root, "notes", "late", "watched.md"), []byte(note), 0o644); err != nil {
		t.Fatal(err)
	}
	testutil.WaitUntil(t, "the watcher to index the new file", func() bool {
		var g struct {
			Doc struct{ Path string } `json:"doc"`
		}
		return call(t, s, "GET", "/v1/graph?doc=notes/late/watched.md", nil, &g) == 200 && g.Doc.Path == "notes/late/watched.md"
	})
	// A folder moved in whole, its file already inside: one event, for the
	// folder; the sync it starts indexes the file (it waited for the
	// reconcile job, 15 minutes, before).
	outside := filepath.Join(t.TempDir(), "moved")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "inside.md"), []byte("# Moved in\n\nThe wombat service answers on 7782.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(outside, filepath.Join(root, "notes", "moved")); err != nil {
		t.Fatal(err)
	}
	testutil.WaitUntil(t, "the watcher to index a folder moved in", func() bool {
		var g struct {
			Doc struct{ Path string } `json:"doc"`
		}
		return call(t, s, "GET", "/v1/graph?doc=notes/moved/inside.md", nil, &g) == 200 && g.Doc.Path == "notes/moved/inside.md"
	})
	var resp struct {
		Results []struct {
			Kind string
			Doc  *struct{ Path string }
		}
	}
	if code := call(t, s, "POST", "/v1/recall", map[string]any{"query": "quokka 7781", "namespace": "team", "mode": "keyword"}, &resp); code != 200 ||
		len(resp.Results) == 0 || resp.Results[0].Doc == nil || resp.Results[0].Doc.Path != "notes/late/watched.md" {
		t.Fatalf("recall of the watched note: %d %+v", code, resp)
	}
}
