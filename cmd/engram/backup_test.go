package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/internal/testutil"
)

// backupReport is the JSON of `engram backup --json` and POST /v1/backup.
type backupReport struct {
	Dir          string  `json:"dir"`
	ArchiveSeq   int64   `json:"archive_seq"`
	ArchiveTurns int64   `json:"archive_turns"`
	IndexedSeq   int64   `json:"indexed_seq"`
	Files        int     `json:"files"`
	Bytes        int64   `json:"bytes"`
	TookMS       float64 `json:"took_ms"`
}

func backupJSON(tb testing.TB, home, dir string, args ...string) backupReport {
	tb.Helper()
	r := runCLI(tb, home, "", append([]string{"backup", "--json"}, append(args, dir)...)...)
	if r.code != 0 {
		tb.Fatalf("backup %s: %+v", dir, r)
	}
	var rep backupReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		tb.Fatalf("backup --json: %v: %q", err, r.stdout)
	}
	return rep
}

// archiveTurns opens the archive of home and returns its turns by id.
func archiveTurns(t *testing.T, home string) (map[string]engram.Turn, int64) {
	t.Helper()
	a, err := archive.Open(filepath.Join(home, "archive"), archive.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	turns := map[string]engram.Turn{}
	if err := a.Stream(context.Background(), 0, func(tn engram.Turn) error {
		turns[tn.ID] = tn
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return turns, a.LastSeq()
}

// TestBackupThroughServer backs up a served home while a writer posts
// turns, then restores the backup into a new home: every turn acknowledged
// up to the backup's seq is there, with its seq, and none after it.
func TestBackupThroughServer(t *testing.T) {
	tmp := t.TempDir()
	home := filepath.Join(tmp, "home")
	s := startServer(t, home)
	ctx := context.Background()

	var mu sync.Mutex
	acked := map[string]int64{} // id -> seq
	var maxAcked int64
	errs := make(chan error, 1)
	stop := testutil.Writers(t, 1, func(_, i int) bool {
		var turns []map[string]any
		for j := range 1 + i%5 {
			turns = append(turns, map[string]any{"id": fmt.Sprintf("w-%d-%d", i, j), "session": fmt.Sprintf("s%d", i/20),
				"content": fmt.Sprintf("turn %d.%d: we moved the billing cache to port %d", i, j, 30000+i)})
		}
		var resp struct {
			Turns []struct {
				ID  string `json:"id"`
				Seq int64  `json:"seq"`
			} `json:"turns"`
		}
		code, err := s.post(ctx, "/v1/turns", map[string]any{"turns": turns}, &resp)
		if err == nil && code != 201 {
			err = fmt.Errorf("POST /v1/turns: %d", code)
		}
		if err != nil {
			errs <- err
			return false
		}
		mu.Lock()
		for _, tn := range resp.Turns {
			acked[tn.ID] = tn.Seq
			maxAcked = max(maxAcked, tn.Seq)
		}
		mu.Unlock()
		return true
	})
	ackedSoFar := func() int64 {
		mu.Lock()
		defer mu.Unlock()
		return maxAcked
	}
	waitFor(t, "turns before the backup", func() bool { return ackedSoFar() > 200 || len(errs) > 0 })

	before := ackedSoFar()
	dir := filepath.Join(tmp, "backup")
	rep := backupJSON(t, home, dir)
	if rep.ArchiveSeq < before || rep.IndexedSeq > rep.ArchiveSeq || rep.Dir != dir {
		t.Errorf("backup: %+v; %d was acknowledged before it began", rep, before)
	}
	// The server made it: the CLI did not open the home (the server holds
	// its lock), and the writes went on meanwhile.
	waitFor(t, "turns after the backup", func() bool { return ackedSoFar() > rep.ArchiveSeq+50 || len(errs) > 0 })

	// The API itself: a relative path, a folder that is not empty.
	var e struct{ Error struct{ Code, Field string } }
	if code, err := s.post(ctx, "/v1/backup", map[string]any{"dir": "relative/path"}, &e); err != nil || code != 400 || e.Error.Field != "dir" {
		t.Errorf("POST /v1/backup with a relative dir: %d %v %+v", code, err, e)
	}
	if code, err := s.post(ctx, "/v1/backup", map[string]any{"dir": dir}, &e); err != nil || code != 409 || e.Error.Code != engram.ECONFLICT {
		t.Errorf("POST /v1/backup into the earlier backup: %d %v %+v", code, err, e)
	}
	dir2 := filepath.Join(tmp, "backup2")
	var rep2 backupReport
	for _, force := range []bool{false, true} {
		if code, err := s.post(ctx, "/v1/backup", map[string]any{"dir": dir2, "force": force}, &rep2); err != nil || code != 200 || rep2.ArchiveSeq < rep.ArchiveSeq {
			t.Fatalf("POST /v1/backup (force %v): %d %v %+v", force, code, err, rep2)
		}
	}

	// Restoring over the served home is refused, found through serve.json
	// and, without it, through the archive's lock.
	r := runCLI(t, home, "", "restore", "--force", dir)
	if r.code != 1 || !strings.Contains(r.stderr, "engram serve is running") {
		t.Errorf("restore while serving: %+v", r)
	}
	if err := os.Rename(filepath.Join(home, "serve.json"), filepath.Join(tmp, "serve.json")); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, home, "", "restore", "--force", dir)
	if r.code != 1 || !strings.Contains(r.stderr, "in use by another engram process") {
		t.Errorf("restore while serving, without serve.json: %+v", r)
	}
	if err := os.Rename(filepath.Join(tmp, "serve.json"), filepath.Join(home, "serve.json")); err != nil {
		t.Fatal(err)
	}

	stop()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	s.stop(t)
	if n := strings.Count(s.stderr.String(), "backup written"); n != 3 {
		t.Errorf("the server logged %d backups, want 3 (the CLI's and two through the API)", n)
	}
	if ents, _ := filepath.Glob(filepath.Join(tmp, "*.tmp-*")); len(ents) > 0 {
		t.Errorf("temp folders left behind: %v", ents)
	}

	// The backup the CLI asked for while the writer was posting.
	restored := filepath.Join(tmp, "restored")
	r = runCLI(t, restored, "", "restore", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "restored") {
		t.Fatalf("restore: %+v", r)
	}
	turns, last := archiveTurns(t, restored)
	if last != rep.ArchiveSeq || int64(len(turns)) != rep.ArchiveTurns {
		t.Errorf("restored archive: %d turns up to seq %d; the backup reported %d up to %d", len(turns), last, rep.ArchiveTurns, rep.ArchiveSeq)
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("backup at seq %d (indexed %d) while the writer went on to seq %d; %d turns acknowledged", rep.ArchiveSeq, rep.IndexedSeq, maxAcked, len(acked))
	missing := 0
	for id, seq := range acked {
		tn, ok := turns[id]
		switch {
		case seq <= rep.ArchiveSeq && (!ok || tn.Seq != seq):
			missing++
			if missing < 5 {
				t.Errorf("acknowledged turn %s (seq %d) is not in the restored home (%+v)", id, seq, tn)
			}
		case seq > rep.ArchiveSeq && ok:
			t.Errorf("turn %s (seq %d) is past the backup's seq %d but restored", id, seq, rep.ArchiveSeq)
		}
	}
	if missing > 0 {
		t.Errorf("%d acknowledged turns missing", missing)
	}
	// The restored home serves recall, the palace caught up.
	resp, _ := recallJSON(t, restored, "--mode", "keyword", "billing cache port 30007")
	if len(resp.Results) == 0 {
		t.Errorf("recall in the restored home finds nothing")
	}
}

// TestBackupRefusals: each refusal says what is wrong and changes nothing.
func TestBackupRefusals(t *testing.T) {
	tmp := t.TempDir()
	home := filepath.Join(tmp, "home")
	if r := runCLI(t, home, vectorTurns, "ingest", "-"); r.code != 0 {
		t.Fatalf("ingest: %+v", r)
	}
	writeConfig(t, home, "log_level = \"warn\"\n")
	dir := filepath.Join(tmp, "backup")
	rep := backupJSON(t, home, dir)
	if rep.ArchiveSeq != 3 || rep.IndexedSeq != 3 || rep.Files != 3 { // a day file, palace.db, config.toml
		t.Fatalf("backup: %+v", rep)
	}

	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no folder", []string{"backup"}, 2, "want one argument"},
		{"an earlier backup", []string{"backup", dir}, 1, "holds an earlier backup; choose a new folder, or --force"},
		{"a folder with other files", []string{"backup", "--force", tmp}, 1, "overlap"},
		{"inside the home", []string{"backup", filepath.Join(home, "b")}, 1, "overlap"},
		{"restore over data", []string{"restore", dir}, 1, "holds data"},
		{"restore no backup", []string{"restore", "--home", filepath.Join(tmp, "new"), home}, 1, "is not an engram backup"},
	} {
		r := runCLI(t, home, "", c.args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%s: %+v; want exit %d and %q", c.name, r, c.code, c.want)
		}
	}
	other := filepath.Join(tmp, "other")
	if err := os.MkdirAll(other, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "notes.txt"), []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, home, "", "backup", "--force", other); r.code != 1 || !strings.Contains(r.stderr, "holds no engram backup") {
		t.Errorf("backup --force into a folder of other files: %+v", r)
	}
	if b, err := os.ReadFile(filepath.Join(other, "notes.txt")); err != nil || string(b) != "mine" {
		t.Errorf("the folder's files were touched: %q %v", b, err)
	}
	rep2 := backupJSON(t, home, dir, "--force")
	if rep.ArchiveSeq != 3 {
		t.Errorf("backup --force over an earlier backup: %+v", rep2)
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
		r := runCLI(t, target, "", "restore", d)
		if r.code != 1 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("restore of %s: %+v; want %q", c.name, r, c.want)
		}
		if _, err := os.Stat(target); err == nil {
			t.Errorf("restore of %s created the home %s", c.name, target)
		}
	}
	if ents, _ := filepath.Glob(filepath.Join(tmp, "*.restore-tmp-*")); len(ents) > 0 {
		t.Errorf("temp folders left behind: %v", ents)
	}

	// --force moves the old home aside and keeps it.
	r := runCLI(t, home, "", "restore", "--force", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "the previous home is kept as "+home+".before-restore-") {
		t.Fatalf("restore --force: %+v", r)
	}
	aside, _ := filepath.Glob(home + ".before-restore-*")
	if len(aside) != 1 {
		t.Fatalf("old home kept as %v", aside)
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
// query and mode.
func recallOrder(t *testing.T, home string) []string {
	t.Helper()
	var out []string
	for _, mode := range []string{"keyword", "shallow", "deep"} {
		for _, q := range []string{"which database did we decide on for billing", "where does Chen live", "favourite book", "coffee", "p99 latency of service 7"} {
			resp, _ := recallJSON(t, home, "--mode", mode, "--k", "10", "--as-of", "2026-06-01T00:00:00Z", q)
			ids := make([]string, len(resp.Results))
			for i, x := range resp.Results {
				ids[i] = x.ID
			}
			out = append(out, mode+" "+q+": "+strings.Join(ids, " "))
		}
	}
	return out
}

// TestMoveHome: moving to a new machine is copying the home folder. A home
// with turns and derived layers, copied with plain file copies to another
// path, answers recall with the same ids in the same order and holds the
// same layers; so does a backup restored into a new home.
func TestMoveHome(t *testing.T) {
	tmp := t.TempDir()
	home := filepath.Join(tmp, "home")
	if r := runCLI(t, home, "", "ingest", conversationJSONL(t, 800)); r.code != 0 {
		t.Fatalf("ingest: %+v", r)
	}
	if r := runCLI(t, home, "", "jobs", "run", "--all"); r.code != 0 {
		t.Fatalf("jobs run --all: %+v", r)
	}
	layers := layerDump(t, home)
	if len(layers) < 100 {
		t.Fatalf("the home has %d derived rows; want layers", len(layers))
	}

	moved := filepath.Join(tmp, "elsewhere", "engram")
	copyTree(t, home, moved)
	backup := filepath.Join(tmp, "backup")
	backupJSON(t, home, backup)
	restored := filepath.Join(tmp, "restored")
	if r := runCLI(t, restored, "", "restore", backup); r.code != 0 {
		t.Fatalf("restore: %+v", r)
	}

	want := recallOrder(t, home)
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
		got := recallOrder(t, h)
		if !slices.Equal(got, want) {
			t.Errorf("recall in %s differs from the original:\n got %s\nwant %s", h, strings.Join(got, "\n     "), strings.Join(want, "\n     "))
		}
		if got := layerDump(t, h); !slices.Equal(got, layers) {
			t.Errorf("the layers in %s differ from the original's: %d rows, want %d", h, len(got), len(layers))
		}
		r := runCLI(t, h, "", "stats", "--json")
		if r.code != 0 || !strings.Contains(r.stdout, `"turns": 800`) {
			t.Errorf("stats in %s: %+v", h, r)
		}
	}
}

// BenchmarkBackup times `engram backup` of a home with 100,000 turns (the
// team conversation of the SIGKILL tests, with the builtin embedder's
// vectors and the rules extractor's layers), through the CLI without a server: s/op includes opening the
// home; ms/backup is the copy itself.
//
//	go test -run '^$' -bench Backup -benchtime 3x ./cmd/engram/
func BenchmarkBackup(b *testing.B) {
	home := filepath.Join(b.TempDir(), "home")
	start := time.Now()
	if r := runCLI(b, home, "", "ingest", conversationJSONL(b, 100000)); r.code != 0 {
		b.Fatalf("ingest: %+v", r)
	}
	// Settle the home first: opening it embeds what ingest left unembedded,
	// and the layer jobs derive the memories, scenes, persona and graph.
	if r := runCLI(b, home, "", "jobs", "run", "--all"); r.code != 0 {
		b.Fatalf("jobs run --all: %+v", r)
	}
	b.Logf("home of 100,000 turns with its vectors and layers built in %.1f s", time.Since(start).Seconds())
	dir := b.TempDir()
	var took float64
	var bytes int64
	n := 0
	for b.Loop() {
		rep := backupJSON(b, home, filepath.Join(dir, fmt.Sprint(n)))
		n++
		if rep.ArchiveTurns != 100000 {
			b.Fatalf("backup: %+v", rep)
		}
		took, bytes = took+rep.TookMS, rep.Bytes
	}
	b.ReportMetric(took/float64(n), "ms/backup")
	b.ReportMetric(float64(bytes)/1e6, "MB")
}
