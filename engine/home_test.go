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
	"github.com/engram-dev/engram/internal/filetest"
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

// mustWrite writes files (name: contents; a name ending in / is a folder)
// into dir.
func mustWrite(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o700); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
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

// TestForeignFiles: what engram wrote at a home's top level (by its names,
// of this version or of the versions the home's marker lists), a vault
// config.toml names, and the files an operating system leaves in any
// folder are the home's; the rest is foreign, another tool's engram.db
// first of all.
func TestForeignFiles(t *testing.T) {
	for _, c := range []struct {
		name    string
		files   map[string]string
		foreign []string
	}{
		{"missing", nil, nil},
		{"empty", map[string]string{}, nil},
		{"engram's, without a marker (older versions)", map[string]string{
			"archive/2026/11/2026-11-29.jsonl": "{}\n", "archive/LOCK": "", "palace.db": "x", "palace.db-wal": "", "palace.db-shm": "",
			"palace.db.rebuild": "", "palace.db.before-rebuild": "", "config.toml": "", "corrections.jsonl": "", "serve.json": "{}",
			"logs/hook.log": "", "hooks/claude-code-offsets.json": "{}", ".serve.json.tmp-123": "", ".corrections.jsonl.tmp-9": "",
		}, nil},
		{"what an operating system leaves", map[string]string{".DS_Store": "", "._palace.db": "", "Thumbs.db": "", "desktop.ini": "", ".directory": "", ".localized": ""}, nil},
		{"an editor's files beside config.toml", map[string]string{"config.toml~": "", ".config.toml.swp": "", "#config.toml#": "", ".#config.toml": "", "config.toml.bak": ""}, nil},
		{"an editor's files beside another file", map[string]string{".notes.txt.swp": "", "palace.db~": ""}, []string{".notes.txt.swp", "palace.db~"}},
		{"another tool's engram.db", map[string]string{"engram.db": otherToolDB, "palace.db": "x"}, []string{"engram.db"}},
		{"the other tool's files alone", map[string]string{"engram.db": otherToolDB, "engram.db-wal": "", "plugins/": ""}, []string{"engram.db", "engram.db-wal", "plugins"}},
		{"unknown names, hidden ones too", map[string]string{"notes.txt": "", ".git/": "", ".env": "", "archive/": ""}, []string{".env", ".git", "notes.txt"}},
		{"a name engram uses, inside a folder of another's", map[string]string{"other/palace.db": ""}, []string{"other"}},
		{"a vault config.toml names", map[string]string{"notes/a.md": "# A\n", "config.toml": "[[vaults]]\npath = \"VAULT\"\n"}, nil},
		{"a future version's file its marker lists", map[string]string{"future.idx": "", engine.HomeFile: `{"names":["future.idx","archive"]}`}, nil},
		{"a damaged marker names nothing more", map[string]string{"future.idx": "", engine.HomeFile: `{"names":`}, []string{"future.idx"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			home := filepath.Join(t.TempDir(), "home")
			if c.files != nil {
				os.Mkdir(home, 0o700)
				vault := filepath.Join(home, "notes") // a configured vault inside the home
				files := map[string]string{}
				for k, v := range c.files {
					files[k] = strings.ReplaceAll(v, "VAULT", vault)
				}
				mustWrite(t, home, files)
			}
			got, err := engine.ForeignFiles(home)
			if err != nil || !slices.Equal(got, c.foreign) {
				t.Fatalf("ForeignFiles = %q, %v; want %q", got, err, c.foreign)
			}
			err = engine.CheckHome(home)
			if c.foreign == nil {
				if err != nil {
					t.Fatalf("CheckHome: %v", err)
				}
				return
			}
			var fe *engine.ForeignHomeError
			if !errors.As(err, &fe) || !slices.Equal(fe.Names, c.foreign) || engram.ErrorCode(err) != engram.ECONFLICT {
				t.Fatalf("CheckHome: %v (%s), want a ForeignHomeError naming %q", err, engram.ErrorCode(err), c.foreign)
			}
			msg := engram.ErrorText(err)
			for _, want := range append([]string{home, "--home", "ENGRAM_HOME"}, c.foreign...) {
				if !strings.Contains(msg, want) {
					t.Errorf("the error does not name %q: %s", want, msg)
				}
			}
		})
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
		mustWrite(t, home, files)
		cfg := testConfig(home)
		before := filetest.Snapshot(t, home)
		mustRefuse := func(what string, err error) {
			t.Helper()
			var fe *engine.ForeignHomeError
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

// TestHomeMarker: engram marks a home it creates, and a home of an older
// version (no marker) when it first opens it, with the names its files
// take; a marker that lists more names (a later version's) keeps them, and
// a home that is marked already is not written again.
func TestHomeMarker(t *testing.T) {
	ctx := t.Context()
	readMarker := func(home string) (names []string, fi os.FileInfo) {
		t.Helper()
		path := filepath.Join(home, engine.HomeFile)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var m struct{ Names []string }
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if fi, err = os.Stat(path); err != nil {
			t.Fatal(err)
		}
		return m.Names, fi
	}

	// A new home.
	cfg := testConfig(filepath.Join(t.TempDir(), "home"))
	openIngestClose(t, cfg)
	names, fi := readMarker(cfg.Home)
	for _, want := range []string{"archive", "palace.db", "config.toml", engine.HomeFile} {
		if !slices.Contains(names, want) {
			t.Errorf("the marker's names %q lack %q", names, want)
		}
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("marker mode %v", fi.Mode())
	}
	// Opened again: the marker is as it was, the same file.
	openIngestClose(t, cfg)
	if _, fi2 := readMarker(cfg.Home); !os.SameFile(fi, fi2) || !fi2.ModTime().Equal(fi.ModTime()) {
		t.Error("a marked home's marker was written again")
	}

	// An older version's home: no marker, engram's files only.
	if err := os.Remove(filepath.Join(cfg.Home, engine.HomeFile)); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, cfg.Home, map[string]string{".DS_Store": ""})
	openIngestClose(t, cfg)
	if names, _ := readMarker(cfg.Home); !slices.Contains(names, "palace.db") {
		t.Errorf("the older home's new marker: %q", names)
	}

	// A later version's home: its marker names a file this version does
	// not know, which is kept in the marker and accepted.
	later := testConfig(filepath.Join(t.TempDir(), "later"))
	mustWrite(t, later.Home, map[string]string{"vectors.hnsw": "x",
		engine.HomeFile: `{"names":["archive","palace.db","vectors.hnsw"]}`})
	openIngestClose(t, later)
	if names, _ := readMarker(later.Home); !slices.Contains(names, "vectors.hnsw") || !slices.Contains(names, "corrections.jsonl") {
		t.Errorf("the later home's marker: %q", names)
	}
	e, err := engine.Open(ctx, later, quiet())
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
}
