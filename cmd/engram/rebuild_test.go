package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// recallIDs runs fixed queries in every mode (as of a fixed time, so decay
// does not move) and returns the result ids, one line per query and mode.
func recallIDs(t *testing.T, home string) []string {
	t.Helper()
	var out []string
	for _, mode := range []string{"keyword", "shallow", "deep"} {
		for _, q := range []string{"billing service database decision", "where does Chen live", "favourite book", "coffee", "latency of service 7"} {
			r := runCLI(t, home, "", "recall", "--json", "--mode", mode, "--as-of", "2026-06-01T00:00:00Z", "--kinds", "turn,memory", q)
			if r.code != 0 {
				t.Fatalf("recall %s %q: %+v", mode, q, r)
			}
			var resp struct {
				Results []struct{ ID string } `json:"results"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &resp); err != nil {
				t.Fatal(err)
			}
			ids := make([]string, len(resp.Results))
			for i, x := range resp.Results {
				ids[i] = x.ID
			}
			out = append(out, mode+" "+q+": "+strings.Join(ids, " "))
		}
	}
	return out
}

func mustLayeredHome(t *testing.T, turns int) string {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	if r := runCLI(t, home, "", "ingest", conversationJSONL(t, turns)); r.code != 0 {
		t.Fatalf("ingest: %+v", r)
	}
	if r := runCLI(t, home, "", "jobs", "run", "--all"); r.code != 0 {
		t.Fatalf("jobs run --all: %+v", r)
	}
	return home
}

// TestRebuild_SIGKILL kills a rebuild while it fills the new palace: the old
// store is intact (same results) and serves, and the next rebuild cleans up.
func TestRebuild_SIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("rebuild test skipped with -short")
	}
	home := mustLayeredHome(t, 4000)
	before := recallIDs(t, home)
	next := filepath.Join(home, "palace.db.rebuild")
	cmd := exec.Command(engramBin, "rebuild")
	cmd.Env = append(os.Environ(), "ENGRAM_HOME="+home)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	deadline := time.Now().Add(time.Minute)
	for {
		if st, err := os.Stat(next); err == nil && st.Size() > 64<<10 {
			break
		}
		select {
		case <-done:
			t.Fatal("the rebuild finished before it could be killed; make the home larger")
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("no rebuild file appeared")
		}
	}
	cmd.Process.Kill()
	<-done
	if after := recallIDs(t, home); !slices.Equal(after, before) {
		t.Fatalf("the old palace changed after a killed rebuild")
	}
	s := startServer(t, home)
	var h struct {
		Status   string `json:"status"`
		IndexLag int64  `json:"index_lag"`
	}
	code, err := s.get(t.Context(), "/v1/health", &h)
	s.stop(t)
	if err != nil || code != 200 || h.IndexLag != 0 {
		t.Fatalf("serving after the killed rebuild: %d %v %+v", code, err, h)
	}
	if r := runCLI(t, home, "", "rebuild"); r.code != 0 {
		t.Fatalf("rebuild after the kill: %+v", r)
	}
	if _, err := os.Stat(next); err == nil {
		t.Error("the killed rebuild's file is still there")
	}
	if after := recallIDs(t, home); !slices.Equal(after, before) {
		t.Error("results differ after the completed rebuild")
	}
}

// BenchmarkRebuild times `engram rebuild` of a home with 100,000 archived
// turns (the team conversation of the SIGKILL tests) with the builtin
// embedder and the rules extractor: turns, vectors, the four layers and
// their vectors, verified and swapped in.
//
//	go test -run x -bench Rebuild -benchtime 1x ./cmd/engram/
func BenchmarkRebuild(b *testing.B) {
	home := filepath.Join(b.TempDir(), "home")
	conv := conversationJSONL(b, 100000)
	if r := runCLI(b, home, "", "ingest", conv); r.code != 0 {
		b.Fatalf("ingest: %+v", r)
	}
	for b.Loop() {
		start := time.Now()
		r := runCLI(b, home, "", "rebuild")
		if r.code != 0 {
			b.Fatalf("rebuild: %+v", r)
		}
		b.ReportMetric(time.Since(start).Seconds(), "s/rebuild")
		b.Logf("%s", strings.TrimSpace(r.stdout))
	}
}
