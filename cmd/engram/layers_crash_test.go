package main_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engram-dev/engram/internal/layertest"
	"github.com/engram-dev/engram/palace"
	"github.com/engram-dev/engram/pipeline"
)

// conversationJSONL writes n turns of conversation to a JSONL file
// (layertest.Conversation).
var conversationJSONL = layertest.Conversation

func workerSeq(t *testing.T, home, worker string) int64 {
	t.Helper()
	p, err := palace.Open(filepath.Join(home, "palace.db"), palace.Options{})
	if err != nil {
		return -1 // not created yet
	}
	defer p.Close()
	seq, err := p.WorkerSeq(context.Background(), worker)
	if err != nil {
		return -1
	}
	return seq
}

// TestLayerJobsSIGKILL kills `engram jobs run` of each layer worker in the
// middle of its run, several times, then lets it finish: the derived layers
// must equal those of a home where every job ran uninterrupted.
func TestLayerJobsSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test skipped with -short")
	}
	const turns = 4000
	conv := conversationJSONL(t, turns)
	clean, killed := filepath.Join(t.TempDir(), "clean"), filepath.Join(t.TempDir(), "killed")
	workers := []string{pipeline.WorkerMemories, pipeline.WorkerScenes, pipeline.WorkerPersona, pipeline.WorkerGraph}
	for _, home := range []string{clean, killed} {
		if r := runCLI(t, home, "", "ingest", conv); r.code != 0 {
			t.Fatalf("ingest: %+v", r)
		}
	}
	for _, w := range workers {
		if r := runCLI(t, clean, "", "jobs", "run", w); r.code != 0 {
			t.Fatalf("jobs run %s: %+v", w, r)
		}
	}
	midway := 0
	for _, w := range workers {
		for round := range 3 {
			before := workerSeq(t, killed, w)
			cmd := exec.Command(engramBin, "jobs", "run", w)
			cmd.Env = append(os.Environ(), "ENGRAM_HOME="+killed)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			// Kill as soon as the job has committed a batch beyond where it
			// started (the palace is read by a second connection).
			deadline := time.Now().Add(2 * time.Minute)
		poll:
			for time.Now().Before(deadline) {
				select {
				case <-done:
					break poll
				case <-time.After(time.Duration(5+round*10) * time.Millisecond):
				}
				if seq := workerSeq(t, killed, w); seq > before {
					break
				}
			}
			cmd.Process.Kill()
			<-done
			after := workerSeq(t, killed, w)
			final := workerSeq(t, clean, w)
			t.Logf("%s round %d: killed at watermark %d (started at %d, complete at %d)", w, round, after, before, final)
			if after > before && after < final {
				midway++
			}
		}
		if r := runCLI(t, killed, "", "jobs", "run", w); r.code != 0 {
			t.Fatalf("jobs run %s after the kills: %+v", w, r)
		}
	}
	if midway == 0 {
		t.Fatalf("no kill landed in the middle of a job; make the conversation longer")
	}
	want, got := layertest.Dump(t, clean), layertest.Dump(t, killed)
	if !slices.Equal(got, want) {
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				t.Fatalf("layers differ after SIGKILLs (%d rows vs %d); first difference:\n got %s\nwant %s", len(got), len(want), got[i], want[i])
			}
		}
		t.Fatalf("layers differ after SIGKILLs: %d rows, want %d", len(got), len(want))
	}
	if !slices.ContainsFunc(want, func(s string) bool { return strings.HasPrefix(s, "mem-") && strings.Contains(s, " | mem-") }) {
		t.Errorf("the conversation superseded no memory; the test does not exercise supersession")
	}
	t.Logf("%d derived rows identical; %d kills landed mid-job", len(want), midway)

	// Rebuildable from L0: without palace.db the jobs derive the same layers
	// from the archive alone.
	for _, f := range []string{"palace.db", "palace.db-wal", "palace.db-shm"} {
		if err := os.Remove(filepath.Join(killed, f)); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	for _, w := range workers {
		if r := runCLI(t, killed, "", "jobs", "run", w); r.code != 0 {
			t.Fatalf("jobs run %s on a new palace: %+v", w, r)
		}
	}
	if got := layertest.Dump(t, killed); !slices.Equal(got, want) {
		t.Fatalf("layers rebuilt from the archive differ: %d rows, want %d", len(got), len(want))
	}
}
