package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/importer"
	"github.com/engram-dev/engram/internal/layertest"
	"github.com/engram-dev/engram/internal/testutil"
)

// backupHome opens the home of cfg and backs it up into dir, as `engram
// backup` does with no server; the backup must succeed.
func backupHome(tb testing.TB, cfg config.Config, dir string, force bool) engram.BackupReport {
	tb.Helper()
	rep, err := tryBackup(tb, cfg, dir, force)
	if err != nil {
		tb.Fatalf("backup into %s: %v", dir, err)
	}
	return rep
}

// tryBackup opens the home of cfg and backs it up into dir.
func tryBackup(tb testing.TB, cfg config.Config, dir string, force bool) (engram.BackupReport, error) {
	tb.Helper()
	e, err := engine.Open(tb.Context(), cfg, quiet())
	if err != nil {
		tb.Fatal(err)
	}
	defer e.Close()
	return e.Backup(tb.Context(), engram.BackupRequest{Dir: dir, Force: force})
}

// restoreHome restores the backup in dir into home, as `engram restore`
// does (the restored home opened with its restored config.toml).
func restoreHome(t *testing.T, dir, home string, force bool) (engine.RestoreReport, error) {
	t.Helper()
	b, err := engine.OpenBackup(dir, home)
	if err != nil {
		return engine.RestoreReport{}, err
	}
	return b.Restore(t.Context(), force, func(ctx context.Context) (*engine.Engine, error) {
		cfg, err := config.LoadConfig(home, noEnv)
		if err != nil {
			return nil, err
		}
		return engine.Open(ctx, cfg, quiet())
	})
}

// TestBackupRefusals: each refusal says what is wrong and changes nothing.
func TestBackupRefusals(t *testing.T) {
	tmp := t.TempDir()
	home := filepath.Join(tmp, "home")
	cfg := ingestHome(t, home, vectorTurns)
	writeConfig(t, home, "log_level = \"warn\"\n")
	dir := filepath.Join(tmp, "backup")
	rep := backupHome(t, cfg, dir, false)
	if rep.ArchiveSeq != 3 || rep.IndexedSeq != 3 || rep.Files != 3 { // a day file, palace.db, config.toml
		t.Fatalf("backup: %+v", rep)
	}

	for _, c := range []struct {
		name  string
		dir   string
		force bool
		want  string
	}{
		{"an earlier backup", dir, false, "holds an earlier backup; choose a new folder, or --force"},
		{"a folder with other files", tmp, true, "overlap"},
		{"inside the home", filepath.Join(home, "b"), false, "overlap"},
	} {
		if _, err := tryBackup(t, cfg, c.dir, c.force); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("backup into %s: %v; want %q", c.name, err, c.want)
		}
	}
	if _, err := restoreHome(t, dir, home, false); err == nil || !strings.Contains(err.Error(), "holds data") {
		t.Errorf("restore over data: %v", err)
	}
	if _, err := restoreHome(t, home, filepath.Join(tmp, "new"), false); err == nil || !strings.Contains(err.Error(), "is not an engram backup") {
		t.Errorf("restore of no backup: %v", err)
	}
	other := filepath.Join(tmp, "other")
	if err := os.MkdirAll(other, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "notes.txt"), []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := tryBackup(t, cfg, other, true); err == nil || !strings.Contains(err.Error(), "holds no engram backup") {
		t.Errorf("a forced backup into a folder of other files: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(other, "notes.txt")); err != nil || string(b) != "mine" {
		t.Errorf("the folder's files were touched: %q %v", b, err)
	}
	if rep2 := backupHome(t, cfg, dir, true); rep2.ArchiveSeq != 3 {
		t.Errorf("a forced backup over an earlier backup: %+v", rep2)
	}

	// Damaged backups: a changed byte, a changed hash in the manifest, a
	// manifest that does not parse or names a path outside the backup.
	// Nothing is written to the home then.
	damage := []struct {
		name string
		do   func(t *testing.T, d string)
		want string
	}{
		{"a changed byte", func(t *testing.T, d string) {
			day := findFile(t, filepath.Join(d, "archive"), ".jsonl")
			b, _ := os.ReadFile(day)
			b[10] ^= 1
			os.WriteFile(day, b, 0o600)
		}, "is damaged: archive/"},
		{"a changed hash", func(t *testing.T, d string) {
			editManifest(t, d, func(m map[string]any) {
				for _, f := range m["files"].([]any) {
					if f := f.(map[string]any); f["path"] == "palace.db" {
						f["sha256"] = strings.Repeat("ab", 32)
					}
				}
			})
		}, "is damaged: palace.db has"},
		{"a missing file", func(t *testing.T, d string) {
			os.Remove(filepath.Join(d, "config.toml"))
		}, "is damaged: config.toml is missing"},
		{"a manifest that does not parse", func(t *testing.T, d string) {
			os.WriteFile(filepath.Join(d, "engram-backup.json"), []byte(`{"version": 1, "files": [`), 0o600)
		}, "does not parse"},
		{"a path outside the backup", func(t *testing.T, d string) {
			editManifest(t, d, func(m map[string]any) {
				m["files"].([]any)[0].(map[string]any)["path"] = "../../etc/passwd"
			})
		}, "names a file outside the backup"},
		{"a newer format", func(t *testing.T, d string) {
			editManifest(t, d, func(m map[string]any) { m["version"] = 2 })
		}, "format version 2"},
	}
	for i, c := range damage {
		d := filepath.Join(tmp, fmt.Sprintf("damaged%d", i))
		copyTree(t, dir, d)
		c.do(t, d)
		target := filepath.Join(tmp, fmt.Sprintf("target%d", i))
		if _, err := restoreHome(t, d, target, false); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("restore of %s: %v; want %q", c.name, err, c.want)
		}
		if _, err := os.Stat(target); err == nil {
			t.Errorf("restore of %s created the home %s", c.name, target)
		}
	}
	if ents, _ := filepath.Glob(filepath.Join(tmp, "*.restore-tmp-*")); len(ents) > 0 {
		t.Errorf("temp folders left behind: %v", ents)
	}

	// Force moves the old home aside and keeps it.
	rr, err := restoreHome(t, dir, home, true)
	if err != nil || !strings.HasPrefix(rr.Aside, home+".before-restore-") {
		t.Fatalf("a forced restore: %+v %v", rr, err)
	}
	aside, _ := filepath.Glob(home + ".before-restore-*")
	if len(aside) != 1 || aside[0] != rr.Aside {
		t.Fatalf("old home kept as %v, the report says %s", aside, rr.Aside)
	}
	if _, err := os.Stat(filepath.Join(aside[0], "palace.db")); err != nil {
		t.Errorf("the old home lost its palace: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(home, "config.toml")); err != nil || !strings.Contains(string(b), "warn") {
		t.Errorf("config.toml not restored: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(home, "serve.json")); err == nil {
		t.Errorf("serve.json restored")
	}
}

func findFile(t *testing.T, dir, suffix string) string {
	t.Helper()
	var found string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, suffix) && found == "" {
			found = p
		}
		return err
	})
	if found == "" {
		t.Fatalf("no %s file under %s", suffix, dir)
	}
	return found
}

func editManifest(t *testing.T, dir string, edit func(map[string]any)) {
	t.Helper()
	path := filepath.Join(dir, "engram-backup.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// copyTree copies a folder with plain file copies, as cp -r or a copy to
// another machine would.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o700)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
}

// recallOrder runs fixed queries in every mode, as of a fixed time so that
// decay does not move, and returns the result ids in order, one line per
// query and mode; and the home's archived turns.
func recallOrder(t *testing.T, home string) ([]string, int64) {
	t.Helper()
	e, err := engine.Open(t.Context(), homeConfig(t, home), quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	asOf := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	var out []string
	for _, mode := range []string{"keyword", "shallow", "deep"} {
		for _, q := range []string{"which database did we decide on for billing", "where does Chen live", "favourite book", "coffee", "p99 latency of service 7"} {
			resp, err := e.Recall(t.Context(), engram.RecallRequest{Query: q, Mode: mode, K: 10, AsOf: asOf})
			if err != nil {
				t.Fatalf("recall %s %q: %v", mode, q, err)
			}
			ids := make([]string, len(resp.Results))
			for i, x := range resp.Results {
				ids[i] = x.ID
			}
			out = append(out, mode+" "+q+": "+strings.Join(ids, " "))
		}
	}
	st, err := e.Stats(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return out, st.Archive.Turns
}

// ingestConversation is a home that archived n turns of a team's
// conversation (layertest.Conversation), with their vectors.
func ingestConversation(tb testing.TB, home string, n int) config.Config {
	tb.Helper()
	b, err := os.ReadFile(layertest.Conversation(tb, n))
	if err != nil {
		tb.Fatal(err)
	}
	cfg, err := config.LoadConfig(home, noEnv)
	if err != nil {
		tb.Fatal(err)
	}
	e, err := engine.Open(tb.Context(), cfg, quiet())
	if err != nil {
		tb.Fatal(err)
	}
	defer e.Close()
	imp := importer.NewImporter(e, cfg.Limits(), "", true, io.Discard)
	_, err = imp.Import(tb.Context(), func(emit func(importer.Record) error) (string, error) {
		_, err := importer.ReadLines(bytes.NewReader(b), "", emit)
		return "", err
	})
	if err = imp.Result(err, "lines"); err != nil {
		tb.Fatalf("ingest: %v", err)
	}
	return cfg
}

// conversationHome is ingestConversation's home after every job ran once:
// turns with their vectors and the rules extractor's layers.
func conversationHome(tb testing.TB, home string, n int) config.Config {
	tb.Helper()
	cfg := ingestConversation(tb, home, n)
	e, err := engine.Open(tb.Context(), cfg, quiet())
	if err != nil {
		tb.Fatal(err)
	}
	defer e.Close()
	jobs, err := e.RunJobs(tb.Context(), "", false)
	if err != nil {
		tb.Fatal(err)
	}
	for _, j := range jobs {
		if j.Failing {
			tb.Fatalf("job %s failed: %s", j.Name, j.LastError)
		}
	}
	return cfg
}

// TestMoveHome: moving to a new machine is copying the home folder. A home
// with turns and derived layers, copied with plain file copies to another
// path, answers recall with the same ids in the same order and holds the
// same layers; so does a backup restored into a new home.
func TestMoveHome(t *testing.T) {
	testutil.LongRun(t)
	tmp := t.TempDir()
	home := filepath.Join(tmp, "home")
	cfg := conversationHome(t, home, 800)
	layers := layertest.Dump(t, home)
	if len(layers) < 100 {
		t.Fatalf("the home has %d derived rows; want layers", len(layers))
	}

	moved := filepath.Join(tmp, "elsewhere", "engram")
	copyTree(t, home, moved)
	backup := filepath.Join(tmp, "backup")
	backupHome(t, cfg, backup, false)
	restored := filepath.Join(tmp, "restored")
	if _, err := restoreHome(t, backup, restored, false); err != nil {
		t.Fatalf("restore: %v", err)
	}

	want, _ := recallOrder(t, home)
	t.Logf("%d derived rows; recall %s", len(layers), want[len(want)-1])
	empty := 0
	for _, line := range want {
		if strings.HasSuffix(line, ": ") {
			empty++
		}
	}
	if empty > len(want)/3 {
		t.Fatalf("%d of %d queries find nothing:\n%s", empty, len(want), strings.Join(want, "\n"))
	}
	for _, h := range []string{moved, restored} {
		got, turns := recallOrder(t, h)
		if !slices.Equal(got, want) {
			t.Errorf("recall in %s differs from the original:\n got %s\nwant %s", h, strings.Join(got, "\n     "), strings.Join(want, "\n     "))
		}
		if got := layertest.Dump(t, h); !slices.Equal(got, layers) {
			t.Errorf("the layers in %s differ from the original's: %d rows, want %d", h, len(got), len(layers))
		}
		if turns != 800 {
			t.Errorf("stats in %s: %d turns, want 800", h, turns)
		}
	}
}

// BenchmarkBackup times the backup of a home with 100,000 turns (the team
// conversation of the SIGKILL tests, with the builtin embedder's vectors
// and the rules extractor's layers), as `engram backup` makes it without a
// server: s/op includes opening the home; ms/backup is the copy itself.
//
//	go test -run '^$' -bench Backup -benchtime 3x ./engine/
func BenchmarkBackup(b *testing.B) {
	home := filepath.Join(b.TempDir(), "home")
	start := time.Now()
	cfg := conversationHome(b, home, 100000)
	b.Logf("home of 100,000 turns with its vectors and layers built in %.1f s", time.Since(start).Seconds())
	dir := b.TempDir()
	var took float64
	var bytes int64
	n := 0
	for b.Loop() {
		rep := backupHome(b, cfg, filepath.Join(dir, fmt.Sprint(n)), false)
		n++
		if rep.ArchiveTurns != 100000 {
			b.Fatalf("backup: %+v", rep)
		}
		took, bytes = took+rep.TookMS, rep.Bytes
	}
	b.ReportMetric(took/float64(n), "ms/backup")
	b.ReportMetric(float64(bytes)/1e6, "MB")
}
