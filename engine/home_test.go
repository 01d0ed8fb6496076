package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/homedir"
	"github.com/engram-dev/engram/internal/filetest"
	"github.com/engram-dev/engram/internal/testutil"
)

// otherToolDB is the start of an SQLite file: the database another tool,
// also named engram, keeps in ~/.engram/engram.db.
const otherToolDB = "SQLite format 3\x00 the other engram's observations"

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// testConfig is the configuration of home with nothing that needs a
// server or derives layers.
func testConfig(home string) config.Config {
	cfg := config.DefaultConfig()
	cfg.Home = home
	cfg.Extractor = config.ExtractorNone
	cfg.Embedder = config.EmbedderNone
	return cfg
}

// openIngestClose opens cfg's home, archives one turn and closes it: an
// engram home as engram leaves it.
func openIngestClose(t *testing.T, cfg config.Config) {
	t.Helper()
	e, err := engine.Open(t.Context(), cfg, quiet())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Ingest(t.Context(), []engram.Turn{{ID: "t1", Namespace: engram.DefaultNamespace, Session: "s1",
		Role: engram.RoleUser, Content: "The quokka migration is planned for May."}}); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestOpenRefusesAForeignHome: a home holding another tool's engram.db is
// refused by every way engram writes into a home (open, which every
// command does, rebuild, repair, adding a vault, a restore even with
// force) and by the doctor, which names the file; not one byte of the
// folder changes, and nothing appears beside it.
func TestOpenRefusesAForeignHome(t *testing.T) {
	ctx := t.Context()
	// A backup to restore, from a home of engram's own.
	own := testConfig(filepath.Join(t.TempDir(), "own"))
	e, err := engine.Open(ctx, own, quiet())
	if err != nil {
		t.Fatal(err)
	}
	backupDir := filepath.Join(t.TempDir(), "backup")
	if _, err := e.Backup(ctx, engram.BackupRequest{Dir: backupDir}); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	for _, files := range []map[string]string{
		{"engram.db": otherToolDB},
		// A home shared with engram by an older version: engram's files
		// beside the other tool's.
		{"engram.db": otherToolDB, "archive/": "", "palace.db": "", "config.toml": ""},
	} {
		home := filepath.Join(t.TempDir(), ".engram")
		testutil.WriteTree(t, home, files)
		cfg := testConfig(home)
		before := filetest.Snapshot(t, home)
		mustRefuse := func(what string, err error) {
			t.Helper()
			var fe *homedir.ForeignError
			if !errors.As(err, &fe) || !slices.Contains(fe.Names, "engram.db") {
				t.Errorf("%s: %v, want the home refused for engram.db", what, err)
			}
			filetest.MustBeUnchanged(t, what, home, before)
		}
		e, err := engine.Open(ctx, cfg, quiet())
		if err == nil {
			e.Close()
		}
		mustRefuse("open", err)
		_, err = engine.Rebuild(ctx, cfg, quiet(), nil, true)
		mustRefuse("rebuild", err)
		_, err = engine.RepairArchive(ctx, cfg, quiet())
		mustRefuse("repair", err)
		_, err = engine.AppendVault(home, config.VaultConfig{Path: t.TempDir()}, noEnv)
		mustRefuse("vault add", err)
		for _, force := range []bool{false, true} {
			b, err := engine.OpenBackup(backupDir, home)
			if err != nil {
				t.Fatal(err)
			}
			_, err = b.Restore(ctx, force, func(ctx context.Context) (*engine.Engine, error) { return engine.Open(ctx, cfg, quiet()) })
			mustRefuse("restore", err)
		}
		rep := engine.DoctorHome(ctx, cfg, quiet())
		filetest.MustBeUnchanged(t, "doctor", home, before)
		if !rep.Failed() || len(rep.Checks) == 0 || rep.Checks[0].Name != "home" || !strings.Contains(rep.Checks[0].Finding, "engram.db") {
			t.Errorf("doctor: %+v, want a failed home check naming engram.db", rep.Checks)
		}
	}
}

// TestOpenMarksTheHome: the home engram opens is claimed (homedir.Claim,
// whose own tests say how): a new home is marked as engram's, with the
// names its files take, and it opens again.
func TestOpenMarksTheHome(t *testing.T) {
	cfg := testConfig(filepath.Join(t.TempDir(), "home"))
	openIngestClose(t, cfg)
	b, err := os.ReadFile(filepath.Join(cfg.Home, homedir.MarkerFile))
	if err != nil {
		t.Fatal(err)
	}
	var m struct{ Names []string }
	if err := json.Unmarshal(b, &m); err != nil || !slices.Contains(m.Names, homedir.PalaceFile) {
		t.Fatalf("the marker %s: %v", b, err)
	}
	openIngestClose(t, cfg)
}
