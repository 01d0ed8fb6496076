package server_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/internal/layertest"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/server"
)

// lockedBuffer is a log's buffer that the server's goroutines write
// while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// post sends body to s's path from any goroutine (call fails the test, so
// only the test's own may use it) and decodes the answer into out.
func post(ctx context.Context, s *server.Server, path string, body, out any) (int, error) {
	return postTo(ctx, s.Addr(), path, body, out)
}

// postTo is post to the server at addr.
func postTo(ctx context.Context, addr, path string, body, out any) (int, error) {
	return testutil.PostJSON(ctx, "http://"+addr+path, body, out)
}

// TestBackupThroughServer backs up a served home while a writer posts
// turns, then restores the backup into a new home: every turn acknowledged
// up to the backup's seq is there, with its seq, and none after it.
func TestBackupThroughServer(t *testing.T) {
	tmp := t.TempDir()
	home := filepath.Join(tmp, "home")
	var log lockedBuffer
	s, stopServer := serveLogged(t, home, nil, slog.New(slog.NewTextHandler(&log, nil)))
	if err := server.WriteServeInfo(home, s.Addr()); err != nil { // as engram serve does
		t.Fatal(err)
	}
	ctx := t.Context()

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
		if code, err := post(ctx, s, "/v1/turns", map[string]any{"turns": turns}, &resp); err != nil || code != 201 {
			errs <- fmt.Errorf("POST /v1/turns: %d %v", code, err)
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
	testutil.WaitUntil(t, "turns before the backup", func() bool { return ackedSoFar() > 200 || len(errs) > 0 })

	before := ackedSoFar()
	dir := filepath.Join(tmp, "backup")
	var rep engram.BackupReport
	if code, err := post(ctx, s, "/v1/backup", map[string]any{"dir": dir}, &rep); err != nil || code != 200 {
		t.Fatalf("POST /v1/backup: %d %v", code, err)
	}
	if rep.ArchiveSeq < before || rep.IndexedSeq > rep.ArchiveSeq || rep.Dir != dir {
		t.Errorf("backup: %+v; %d was acknowledged before it began", rep, before)
	}
	// The writes went on meanwhile.
	testutil.WaitUntil(t, "turns after the backup", func() bool { return ackedSoFar() > rep.ArchiveSeq+50 || len(errs) > 0 })

	// A relative path, a folder that is not empty.
	var e struct{ Error struct{ Code, Field string } }
	if code, err := post(ctx, s, "/v1/backup", map[string]any{"dir": "relative/path"}, &e); err != nil || code != 400 || e.Error.Field != "dir" {
		t.Errorf("POST /v1/backup with a relative dir: %d %v %+v", code, err, e)
	}
	if code, err := post(ctx, s, "/v1/backup", map[string]any{"dir": dir}, &e); err != nil || code != 409 || e.Error.Code != engram.ECONFLICT {
		t.Errorf("POST /v1/backup into the earlier backup: %d %v %+v", code, err, e)
	}
	dir2 := filepath.Join(tmp, "backup2")
	var rep2 engram.BackupReport
	for _, force := range []bool{false, true} {
		if code, err := post(ctx, s, "/v1/backup", map[string]any{"dir": dir2, "force": force}, &rep2); err != nil || code != 200 || rep2.ArchiveSeq < rep.ArchiveSeq {
			t.Fatalf("POST /v1/backup (force %v): %d %v %+v", force, code, err, rep2)
		}
	}

	// Restoring over the served home is refused, found through serve.json
	// and, without it, through the archive's lock.
	restore := func(home string, force bool) (engine.RestoreReport, error) {
		cfg := server.Config{Config: config.Config{Home: home}}
		load := func() (server.Config, error) { return server.LoadConfig(home, func(string) string { return "" }) }
		return server.Restore(ctx, cfg, dir, force, load, func(server.Config) *slog.Logger { return quiet() })
	}
	if _, err := restore(home, true); err == nil || !strings.Contains(err.Error(), "engram serve is running") {
		t.Errorf("restore while serving: %v", err)
	}
	if err := os.Rename(filepath.Join(home, "serve.json"), filepath.Join(tmp, "serve.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := restore(home, true); err == nil || !strings.Contains(err.Error(), "in use by another engram process") {
		t.Errorf("restore while serving, without serve.json: %v", err)
	}
	if err := os.Rename(filepath.Join(tmp, "serve.json"), filepath.Join(home, "serve.json")); err != nil {
		t.Fatal(err)
	}

	stop()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	stopServer()
	if n := strings.Count(log.String(), "backup written"); n != 3 {
		t.Errorf("the server logged %d backups, want 3", n)
	}
	if ents, _ := filepath.Glob(filepath.Join(tmp, "*.tmp-*")); len(ents) > 0 {
		t.Errorf("temp folders left behind: %v", ents)
	}

	// The backup made while the writer was posting.
	restored := filepath.Join(tmp, "restored")
	if _, err := restore(restored, false); err != nil {
		t.Fatalf("restore: %v", err)
	}
	turns, last := layertest.ArchiveTurns(t, restored)
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
	rcfg, err := server.LoadConfig(restored, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.Open(ctx, rcfg.Config, quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if resp, err := eng.Recall(ctx, engram.RecallRequest{Query: "billing cache port 30007", Mode: engram.ModeKeyword}); err != nil || len(resp.Results) == 0 {
		t.Errorf("recall in the restored home finds nothing: %v", err)
	}
}
