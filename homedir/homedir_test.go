package homedir_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/homedir"
	"github.com/engram-dev/engram/internal/testutil"
)

// otherToolDB is the start of an SQLite file: the database another tool,
// also named engram, keeps in ~/.engram/engram.db.
const otherToolDB = "SQLite format 3\x00 the other engram's observations"

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
		{"a future version's file its marker lists", map[string]string{"future.idx": "", homedir.MarkerFile: `{"names":["future.idx","archive"]}`}, nil},
		{"a damaged marker names nothing more", map[string]string{"future.idx": "", homedir.MarkerFile: `{"names":`}, []string{"future.idx"}},
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
				testutil.WriteTree(t, home, files)
			}
			got, err := homedir.ForeignFiles(home)
			if err != nil || !slices.Equal(got, c.foreign) {
				t.Fatalf("ForeignFiles = %q, %v; want %q", got, err, c.foreign)
			}
			err = homedir.Check(home)
			if c.foreign == nil {
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				return
			}
			var fe *homedir.ForeignError
			if !errors.As(err, &fe) || !slices.Equal(fe.Names, c.foreign) || engram.ErrorCode(err) != engram.ECONFLICT {
				t.Fatalf("Check: %v (%s), want a ForeignError naming %q", err, engram.ErrorCode(err), c.foreign)
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

// TestClaim: Claim marks a home it creates, and a home of an older version
// (no marker) when it first claims it, with the names its files take; a
// marker that lists more names (a later version's) keeps them, and a home
// that is marked already is not written again.
func TestClaim(t *testing.T) {
	claim := func(home string) {
		t.Helper()
		if err := homedir.Claim(home, "test", nil); err != nil {
			t.Fatal(err)
		}
	}
	readMarker := func(home string) (names []string, fi os.FileInfo) {
		t.Helper()
		path := filepath.Join(home, homedir.MarkerFile)
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

	// A new home: created, and marked.
	home := filepath.Join(t.TempDir(), "home")
	claim(home)
	if st, err := os.Stat(home); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("the new home: %v, %v", st, err)
	}
	names, fi := readMarker(home)
	for _, want := range []string{"archive", "palace.db", "config.toml", homedir.MarkerFile} {
		if !slices.Contains(names, want) {
			t.Errorf("the marker's names %q lack %q", names, want)
		}
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("marker mode %v", fi.Mode())
	}
	// Claimed again: the marker is as it was, the same file.
	claim(home)
	if _, fi2 := readMarker(home); !os.SameFile(fi, fi2) || !fi2.ModTime().Equal(fi.ModTime()) {
		t.Error("a marked home's marker was written again")
	}

	// An older version's home: no marker, engram's files only.
	if err := os.Remove(filepath.Join(home, homedir.MarkerFile)); err != nil {
		t.Fatal(err)
	}
	testutil.WriteTree(t, home, map[string]string{"archive/": "", "palace.db": "x", ".DS_Store": ""})
	claim(home)
	if names, _ := readMarker(home); !slices.Contains(names, "palace.db") {
		t.Errorf("the older home's new marker: %q", names)
	}

	// A later version's home: its marker names a file this version does
	// not know, which is kept in the marker and accepted.
	later := filepath.Join(t.TempDir(), "later")
	testutil.WriteTree(t, later, map[string]string{"vectors.hnsw": "x",
		homedir.MarkerFile: `{"names":["archive","palace.db","vectors.hnsw"]}`})
	claim(later)
	if names, _ := readMarker(later); !slices.Contains(names, "vectors.hnsw") || !slices.Contains(names, "corrections.jsonl") {
		t.Errorf("the later home's marker: %q", names)
	}
	if err := homedir.Check(later); err != nil {
		t.Fatal(err)
	}

	// Another program's home: refused, and nothing written into it.
	other := filepath.Join(t.TempDir(), "other")
	testutil.WriteTree(t, other, map[string]string{"engram.db": otherToolDB})
	var fe *homedir.ForeignError
	if err := homedir.Claim(other, "test", nil); !errors.As(err, &fe) {
		t.Fatalf("Claim of another program's home: %v", err)
	}
	if _, err := os.Stat(filepath.Join(other, homedir.MarkerFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a marker was written into another program's home: %v", err)
	}
}
