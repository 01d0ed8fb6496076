package main_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engram-dev/engram/archive"
)

// TestCrashRecovery kills a loaded `engram serve` with SIGKILL at random
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
		s := startServer(t, home)
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
					code, err := s.post(ctx, "/v1/turns", map[string]any{"turns": turns}, &out)
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
	a, err := archive.Open(filepath.Join(home, "archive"), archive.Options{})
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
func verifyAcked(t *testing.T, s *server, home string, acked map[string]string, fresh map[string]bool, rng *rand.Rand, round int) {
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
	if code, err := s.get(context.Background(), "/v1/stats", &stats); err != nil || code != 200 {
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
		var resp recallResponse
		code, err := s.post(context.Background(), "/v1/recall",
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

// archivedIDs reads the ids of every complete, valid line in the archive
// files, as a reader independent of the server would (cat and jq style).
func archivedIDs(t *testing.T, home string) map[string]bool {
	t.Helper()
	ids := map[string]bool{}
	err := filepath.WalkDir(filepath.Join(home, "archive"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			line := append(sc.Bytes(), '\n')
			turn, err := archive.DecodeLine(line)
			if err != nil {
				continue // a torn tail is quarantined at the next open
			}
			ids[turn.ID] = true
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}
