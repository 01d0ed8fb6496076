package server_test

import (
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/internal/testutil"
)

// mustMountTmpfs mounts a tmpfs of size (e.g. "8m") at a new folder and
// unmounts it when the test ends; it skips the test unless it runs as root
// on Linux (CI does).
func mustMountTmpfs(t *testing.T, size string) string {
	t.Helper()
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skip("needs root on Linux to mount a small tmpfs (CI runs as root)")
	}
	dir := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { // registered first, so it runs after every server of the test stopped
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

// fill writes a file into dir until the disk is full and returns its path.
func fill(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling %s: %v", dir, err)
			}
			break
		}
	}
	// The last pages: a byte at a time, until not one more fits.
	for {
		if _, err := f.Write([]byte{0}); err != nil {
			return path
		}
	}
}

// TestServeDiskFull serves a home in a small
// tmpfs: with the disk full, ingest answers 507 and archives nothing, a
// backup onto it 507 too, recall answers; a restart while it is still full
// (with archived turns the palace has not indexed) starts degraded instead
// of exiting; once space is back, the turns are indexed and ingest works.
func TestServeDiskFull(t *testing.T) {
	disk := mustMountTmpfs(t, "8m")
	home := filepath.Join(disk, "home")
	ingestHome(t, home, map[string]any{"id": "t1", "session": "s", "content": "the quokka migration is planned for May"})
	s, stop := serve(t, home, nil)
	filler := fill(t, disk)
	big := strings.Repeat("a long note that does not fit ", 4000) // 120 KB: more than any page left
	var e struct {
		Error struct{ Code, Message string }
	}
	code := call(t, s, "POST", "/v1/turns", map[string]any{"session": "s", "content": big}, &e)
	if code != http.StatusInsufficientStorage || e.Error.Code != engram.ENOSPACE {
		t.Fatalf("ingest on a full disk: %d %+v, want 507 no_space", code, e)
	}
	code = call(t, s, "POST", "/v1/backup", map[string]any{"dir": filepath.Join(disk, "backup")}, &e)
	if code != http.StatusInsufficientStorage || e.Error.Code != engram.ENOSPACE {
		t.Fatalf("backup onto a full disk: %d %+v, want 507 no_space", code, e)
	}
	if a := recallHTTP(t, s, "keyword", "quokka migration"); !has(a, "t1") {
		t.Fatalf("recall on a full disk: %+v", a)
	}
	stop()

	// Turns archived while the palace cannot take them (they fit in the
	// archive file's last page): the next start must index them, and fails.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	a, err := archive.Open(filepath.Join(home, "archive"), archive.Options{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Append(t.Context(), []engram.Turn{{ID: "t2", Namespace: "default", Session: "s", Role: engram.RoleUser,
		Content: "the wombat rollout follows the quokka migration", TS: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	filler = fill(t, disk)

	s = startServer(t, home, nil) // an error before: "catch up index: ... database or disk is full"
	// Whether the turn itself still fits depends on the pages SQLite
	// holds free (its WAL may have room left over): either the index lags
	// by it, or the writes after it (its vector, a checkpoint) fail. Either
	// way the start is degraded and says the disk is full.
	h := health(t, s)
	if h.Status != "degraded" || h.IndexLag > 1 || !strings.Contains(strings.Join(h.Problems, "\n"), "disk is full") {
		t.Fatalf("health of a start on a full disk: %+v", h)
	}
	if a := recallHTTP(t, s, "keyword", "quokka migration"); !has(a, "t1") {
		t.Fatalf("recall after a start on a full disk: %+v", a)
	}
	if code := call(t, s, "POST", "/v1/turns", map[string]any{"session": "s", "content": big}, &e); code != http.StatusInsufficientStorage {
		t.Fatalf("ingest after a start on a full disk: %d %+v", code, e)
	}

	// Space is back: the indexer's retry takes the turn in.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	testutil.WaitUntil(t, "the index to catch up once space is back", func() bool { return health(t, s).IndexLag == 0 })
	if a := recallHTTP(t, s, "keyword", "wombat rollout"); !has(a, "t2") {
		t.Fatalf("recall of the turn archived while the disk was full: %+v", a)
	}
	postTurns(t, s, map[string]any{"id": "t3", "session": "s", "content": "space is back"})
}
