package engine_test

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/internal/testutil"
)

// TestVaultWatcherBurst: files written one after another while the
// watcher's quiet period is far shorter than the gaps between them, so
// timers fire and syncs run while new events arrive. Every file is
// indexed, and Close returns (a timer restarted after it fired used to
// run its sync twice and panic on the wait group).
func TestVaultWatcherBurst(t *testing.T) {
	ctx := t.Context()
	root := t.TempDir()
	cfg := config.DefaultConfig()
	cfg.Home = filepath.Join(t.TempDir(), "home")
	cfg.Embedder, cfg.Extractor = config.EmbedderNone, config.ExtractorNone
	cfg.Vaults = []config.VaultConfig{{Path: root, Namespace: "team"}}
	cfg.WatchVaults = true
	e, err := engine.Open(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := e.Close(); err != nil {
			t.Error(err)
		}
	}()
	vw, err := e.StartVaultWatcher()
	if err != nil || vw == nil {
		t.Fatalf("watcher: %v, %v", vw, err)
	}
	vw.SetDebounce(time.Millisecond)
	const n = 40
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("d%d", i%4))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		body := fmt.Sprintf("# Note %d\n\nSee [[note-%d]].\n", i, (i+1)%n)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("note-%d.md", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	testutil.WaitUntil(t, "every file indexed", func() bool {
		docs, err := e.Docs(ctx, root)
		return err == nil && len(docs) == n
	})
	vw.Close()
}
