package engine_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/homedir"
	"github.com/engram-dev/engram/internal/layertest"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/palace"
	"github.com/engram-dev/engram/pipeline"
)

// childEnv selects what this test binary does when a test runs it again as
// a process of its own, to kill it: "rebuild" rebuilds the palace of the
// home in ENGRAM_HOME, "job" runs the job ENGRAM_TEST_JOB on it.
const childEnv = "ENGRAM_ENGINE_TEST_CHILD"

func TestMain(m *testing.M) {
	mode := os.Getenv(childEnv)
	if mode == "" {
		os.Exit(m.Run())
	}
	if err := runChild(mode, os.Getenv("ENGRAM_HOME"), os.Getenv("ENGRAM_TEST_JOB")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// runChild does what mode names, as `engram rebuild` and `engram jobs run
// NAME` do.
func runChild(mode, home, job string) error {
	ctx := context.Background()
	cfg, err := config.LoadConfig(home, noEnv)
	if err != nil {
		return err
	}
	switch mode {
	case "team-ingest":
		return teamIngest(ctx, home, os.Getenv(teamURLEnv), os.Getenv(teamPrefixEnv), os.Getenv(teamPalaceEnv))
	case "rebuild":
		_, err := engine.Rebuild(ctx, cfg, quiet(), nil, true)
		return err
	case "job":
		e, err := engine.Open(ctx, cfg, quiet())
		if err != nil {
			return err
		}
		defer e.Close()
		st, err := e.RunJob(ctx, job)
		if err == nil && st.Failing {
			err = fmt.Errorf("job %s failed: %s", job, st.LastError)
		}
		return err
	}
	return fmt.Errorf("unknown child mode %q", mode)
}

// child is this test binary run again in mode on home (runChild).
type child struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when it has exited
}

func startChild(t *testing.T, mode, home string, env ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), childEnv+"="+mode, "ENGRAM_HOME="+home), env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, done: make(chan struct{})}
	go func() { cmd.Wait(); close(c.done) }()
	t.Cleanup(c.kill) // never leave a child behind a failed test
	return c
}

// kill sends SIGKILL and waits for the process to be gone.
func (c *child) kill() {
	c.cmd.Process.Kill()
	<-c.done
}

// crashTurns is the length of the crash tests' conversation: long enough
// for a kill to land in the middle of a job or a rebuild; shorter under the
// race detector, whose slower code gives a kill the same chance.
func crashTurns() int {
	if raceEnabled {
		return 1000
	}
	return 4000
}

// recallIDsOf opens the home of cfg and returns recallIDs.
func recallIDsOf(t *testing.T, cfg config.Config) []string {
	t.Helper()
	var out []string
	withEngine(t, cfg, func(e *engine.Engine) { out = recallIDs(t, e) })
	return out
}

// TestRebuild_SIGKILL kills a rebuild while it fills the new palace: the old
// store is intact (same results) and serves, and the next rebuild cleans up.
func TestRebuild_SIGKILL(t *testing.T) {
	testutil.LongRun(t)
	home := filepath.Join(t.TempDir(), "home")
	cfg := conversationHome(t, home, crashTurns())
	before := recallIDsOf(t, cfg)
	next := filepath.Join(home, homedir.PalaceFile+".rebuild")
	c := startChild(t, "rebuild", home)
	for {
		if st, err := os.Stat(next); err == nil && st.Size() > 64<<10 {
			break
		}
		select {
		case <-c.done:
			t.Fatal("the rebuild finished before it could be killed; make the home larger")
		case <-time.After(5 * time.Millisecond): // the file is looked at again
		}
	}
	c.kill()
	if after := recallIDsOf(t, cfg); !slices.Equal(after, before) {
		t.Fatalf("the old palace changed after a killed rebuild")
	}
	withEngine(t, cfg, func(e *engine.Engine) {
		if h := e.Health(t.Context()); h.IndexLag != 0 {
			t.Fatalf("serving after the killed rebuild: %+v", h)
		}
	})
	rebuildHome(t, cfg)
	if _, err := os.Stat(next); err == nil {
		t.Error("the killed rebuild's file is still there")
	}
	if after := recallIDsOf(t, cfg); !slices.Equal(after, before) {
		t.Error("results differ after the completed rebuild")
	}
}

// BenchmarkRebuild times the rebuild of a home with 100,000 archived turns
// (the team conversation of the SIGKILL tests) with the builtin embedder
// and the rules extractor: turns, vectors, the four layers and their
// vectors, verified and swapped in.
//
//	go test -run x -bench Rebuild -benchtime 1x ./engine/
func BenchmarkRebuild(b *testing.B) {
	home := filepath.Join(b.TempDir(), "home")
	cfg := ingestConversation(b, home, 100000)
	for b.Loop() {
		start := time.Now()
		rep, err := engine.Rebuild(b.Context(), cfg, quiet(), nil, true)
		if err != nil {
			b.Fatalf("rebuild: %v", err)
		}
		b.ReportMetric(time.Since(start).Seconds(), "s/rebuild")
		b.Logf("%+v", rep)
	}
}

func workerSeq(t *testing.T, home, worker string) int64 {
	t.Helper()
	p, err := palace.Open(filepath.Join(home, homedir.PalaceFile), palace.Options{})
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

// runJobOnce opens the home of cfg and runs the job name, which must pass.
func runJobOnce(t *testing.T, cfg config.Config, name string) {
	t.Helper()
	withEngine(t, cfg, func(e *engine.Engine) {
		if st, err := e.RunJob(t.Context(), name); err != nil || st.Failing {
			t.Fatalf("job %s: %+v %v", name, st, err)
		}
	})
}

// TestLayerJobsSIGKILL kills the run of each layer worker's job in the
// middle, several times, then lets it finish: the derived layers must
// equal those of a home where every job ran uninterrupted.
func TestLayerJobsSIGKILL(t *testing.T) {
	testutil.LongRun(t)
	turns := crashTurns()
	clean, killed := filepath.Join(t.TempDir(), "clean"), filepath.Join(t.TempDir(), "killed")
	workers := []string{pipeline.WorkerMemories, pipeline.WorkerScenes, pipeline.WorkerPersona, pipeline.WorkerGraph}
	cleanCfg, killedCfg := ingestConversation(t, clean, turns), ingestConversation(t, killed, turns)
	for _, w := range workers {
		runJobOnce(t, cleanCfg, w)
	}
	midway := 0
	for _, w := range workers {
		for round := range 3 {
			before := workerSeq(t, killed, w)
			c := startChild(t, "job", killed, "ENGRAM_TEST_JOB="+w)
			// Kill as soon as the job has committed a batch beyond where it
			// started (the palace is read by a second connection).
		poll:
			for {
				select {
				case <-c.done:
					break poll
				case <-time.After(time.Duration(5+round*10) * time.Millisecond):
				}
				if seq := workerSeq(t, killed, w); seq > before {
					break
				}
			}
			c.kill()
			after := workerSeq(t, killed, w)
			final := workerSeq(t, clean, w)
			t.Logf("%s round %d: killed at watermark %d (started at %d, complete at %d)", w, round, after, before, final)
			if after > before && after < final {
				midway++
			}
		}
		runJobOnce(t, killedCfg, w)
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
		runJobOnce(t, killedCfg, w)
	}
	if got := layertest.Dump(t, killed); !slices.Equal(got, want) {
		t.Fatalf("layers rebuilt from the archive differ: %d rows, want %d", len(got), len(want))
	}
}
