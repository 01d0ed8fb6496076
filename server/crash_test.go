package server_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/homedir"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/server"
)

// childEnv makes this test binary, run again by a test, serve the home in
// ENGRAM_HOME on ENGRAM_TEST_ADDR as `engram serve` does (server.Run) until
// SIGTERM: a server a test can kill.
const childEnv = "ENGRAM_SERVER_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "" {
		os.Exit(m.Run())
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	cfg, err := server.LoadConfig(os.Getenv("ENGRAM_HOME"), func(string) string { return "" })
	if err == nil {
		cfg.Addr = os.Getenv("ENGRAM_TEST_ADDR")
		err = server.Run(ctx, cfg, slog.New(slog.NewTextHandler(os.Stderr, nil)))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// serveChild is this test binary serving a home in a process of its own.
type serveChild struct {
	cmd  *exec.Cmd
	addr string
	log  *lockedBuffer
	done chan struct{} // closed when it has exited
}

// startServeChild serves home in a child process and waits until it
// answers its health.
func startServeChild(t *testing.T, home string) *serveChild {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	s := &serveChild{addr: addr, log: &lockedBuffer{}, done: make(chan struct{})}
	s.cmd = exec.Command(os.Args[0], "-test.run=^$")
	s.cmd.Env = append(os.Environ(), childEnv+"=1", "ENGRAM_HOME="+home, "ENGRAM_TEST_ADDR="+addr)
	s.cmd.Stderr = s.log
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.cmd.Wait(); close(s.done) }()
	t.Cleanup(s.kill) // never leave a server behind a failed test
	testutil.WaitUntil(t, "the child server's health", func() bool {
		select {
		case <-s.done:
			t.Fatalf("the child server exited before answering:\n%s", s.log)
		default:
		}
		var h engram.Health
		code, err := testutil.GetJSON(t.Context(), "http://"+addr+"/v1/health", &h)
		return err == nil && code == 200
	})
	return s
}

// kill sends SIGKILL and waits for the process to be gone.
func (s *serveChild) kill() {
	s.cmd.Process.Kill()
	<-s.done
}

// stop sends SIGTERM and waits for a clean exit.
func (s *serveChild) stop(t *testing.T) {
	t.Helper()
	s.cmd.Process.Signal(syscall.SIGTERM)
	<-s.done
	if !s.cmd.ProcessState.Success() {
		t.Fatalf("the child server exited with %v after SIGTERM\n%s", s.cmd.ProcessState, s.log)
	}
}

// TestCrashRecovery kills a loaded server (server.Run in a process of its own) with SIGKILL at random
// moments and checks, after every restart, that each turn whose POST got a
// 201 is in the archive and found by recall, and that the archive opens
// cleanly.
func TestCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test skipped with -short")
	}
	const rounds = 20
	home := t.TempDir()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	acked := map[string]string{} // turn id -> its unique token
	fresh := map[string]bool{}   // acknowledged since the last restart
	var next int
	for round := 0; round <= rounds; round++ {
		s := startServeChild(t, home)
		verifyAcked(t, s, home, acked, fresh, rng, round)
		clear(fresh)
		if round == rounds {
			s.stop(t)
			break
		}
		// Load: 8 writers post batches of 1-8 turns until the kill.
		ctx, cancel := context.WithCancel(context.Background())
		var mu sync.Mutex
		var wg sync.WaitGroup
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					mu.Lock()
					n := 1 + next%8
					toks := make([]string, n)
					turns := make([]map[string]any, n)
					for i := range turns {
						next++
						toks[i] = fmt.Sprintf("zq%07d", next)
						turns[i] = map[string]any{"namespace": "crash", "session": fmt.Sprintf("round-%d", round),
							"content": "crash test turn " + toks[i]}
					}
					mu.Unlock()
					var out struct{ IDs []string }
					code, err := postTo(ctx, s.addr, "/v1/turns", map[string]any{"turns": turns}, &out)
					if err != nil || code != 201 {
						continue // not acknowledged: it may or may not be archived
					}
					mu.Lock()
					for i, id := range out.IDs {
						acked[id] = toks[i]
						fresh[id] = true
					}
					mu.Unlock()
				}
			}()
		}
		time.Sleep(time.Duration(20+rng.IntN(250)) * time.Millisecond) // the random moment of the crash
		s.kill()
		cancel()
		wg.Wait()
	}
	if len(acked) < rounds*10 {
		t.Fatalf("only %d turns were acknowledged in %d rounds: the load did not run", len(acked), rounds)
	}
	t.Logf("%d acknowledged turns survived %d SIGKILLs", len(acked), rounds)

	// The archive opens cleanly: no corrupt line, seqs unique and in order.
	a, err := archive.Open(filepath.Join(home, homedir.ArchiveDir), archive.Options{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	rep, err := a.Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// A torn line cut off by a SIGKILL mid-write is quarantined at the next
	// open (never acknowledged, kept for inspection): expected here. Any
	// other finding (a bad checksum, seqs out of order) is a failure.
	for _, p := range rep.Problems {
		if p.Kind != archive.ProblemQuarantined {
			t.Errorf("archive verify after crashes: %v", p)
		}
	}
	if rep.Turns < int64(len(acked)) {
		t.Errorf("archive holds %d turns, fewer than the %d acknowledged", rep.Turns, len(acked))
	}
}

// verifyAcked checks every acknowledged turn against the archive files, and
// through recall on the running server every turn acknowledged since the last
// restart (the ones the crash put at risk) plus a sample of older ones.
// Recall of every older turn was verified after its own restart; that the
// palace still holds all of them is checked by count.
func verifyAcked(t *testing.T, s *serveChild, home string, acked map[string]string, fresh map[string]bool, rng *rand.Rand, round int) {
	t.Helper()
	inArchive := archivedIDs(t, home)
	var missing []string
	for id := range acked {
		if !inArchive[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		t.Fatalf("round %d: %d acknowledged turns are not in the archive, e.g. %v", round, len(missing), missing[:min(5, len(missing))])
	}
	var stats struct {
		Namespaces map[string]map[string]int64 `json:"namespaces"`
	}
	if code, err := testutil.GetJSON(context.Background(), "http://"+s.addr+"/v1/stats", &stats); err != nil || code != 200 {
		t.Fatalf("round %d: stats: %d %v", round, code, err)
	}
	if got, want := stats.Namespaces["crash"]["turns"], int64(len(inArchive)); got != want {
		t.Fatalf("round %d: the palace holds %d turns, the archive %d", round, got, want)
	}
	// Recall: query the unique tokens in groups; each turn must come back.
	byTok := make(map[string]string, len(acked))
	toks := make([]string, 0, len(acked))
	for id, tok := range acked {
		if fresh[id] || rng.IntN(len(acked)) < 100 {
			byTok[tok] = id
			toks = append(toks, tok)
		}
	}
	sort.Strings(toks)
	const group = 25 // the palace ORs at most 32 query terms
	for i := 0; i < len(toks); i += group {
		part := toks[i:min(i+group, len(toks))]
		var resp engram.RecallResponse
		code, err := postTo(context.Background(), s.addr, "/v1/recall",
			map[string]any{"namespace": "crash", "query": strings.Join(part, " "), "k": len(part), "mode": "keyword"}, &resp)
		if err != nil || code != 200 {
			t.Fatalf("round %d: recall: %d %v", round, code, err)
		}
		found := map[string]bool{}
		for _, r := range resp.Results {
			found[r.ID] = true
		}
		for _, tok := range part {
			if !found[byTok[tok]] {
				t.Fatalf("round %d: acknowledged turn %s (%s) not found by recall", round, byTok[tok], tok)
			}
		}
	}
}
