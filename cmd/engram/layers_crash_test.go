package main_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engram-dev/engram/palace"
	"github.com/engram-dev/engram/pipeline"
)

// conversationJSONL writes n turns of a long-running team conversation with
// fixed ids: decisions, preferences, moves (so facts are superseded), plans
// and small talk, in English and Chinese, over many sessions and days.
func conversationJSONL(t testing.TB, n int) string {
	t.Helper()
	cities := []string{"Berlin", "Lisbon", "Osaka", "Toronto", "Nairobi"}
	dbs := []string{"Postgres", "SQLite", "Redis", "ClickHouse"}
	people := []string{"Alice", "Bob", "Chen", "Dana"}
	lines := []func(i int, who string) string{
		func(i int, who string) string { return fmt.Sprintf("I live in %s now.", cities[(i/997)%len(cities)]) },
		func(i int, who string) string {
			return fmt.Sprintf("We decided to use %s for the billing service because it is simpler to run.", dbs[(i/1301)%len(dbs)])
		},
		func(i int, who string) string {
			return fmt.Sprintf("I really like %s coffee.", []string{"Ethiopian", "Kenyan", "cold brew"}[i%3])
		},
		func(i int, who string) string { return "I'm going to refactor the ingest path next week." },
		func(i int, who string) string {
			return fmt.Sprintf("Sounds good, thanks %s!", people[(i+1)%len(people)])
		},
		func(i int, who string) string { return "我们决定用SQLite做存储，因为部署简单。" },
		func(i int, who string) string {
			return fmt.Sprintf("My favourite book is %s.", []string{"Dune", "Solaris", "Neuromancer"}[(i/2003)%3])
		},
		func(i int, who string) string { return "I usually run before work." },
		func(i int, who string) string {
			return fmt.Sprintf("The p99 latency of service %d was %d ms today.", i%13, 20+i%50)
		},
	}
	path := filepath.Join(t.TempDir(), "conv.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	start := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	for i := range n {
		who := people[i%len(people)]
		ts := start.Add(time.Duration(i) * 7 * time.Minute) // a session every 40 turns, hours apart
		if err := enc.Encode(map[string]any{
			"id": fmt.Sprintf("turn-%06d", i), "session": fmt.Sprintf("s%04d", i/40), "speaker": who, "role": "user",
			"ts": ts.Format(time.RFC3339), "content": lines[(i*7+i/40)%len(lines)](i, who),
		}); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// layerDump is every derived row of a palace, as comparable text.
func layerDump(t *testing.T, home string) []string {
	t.Helper()
	p, err := palace.Open(filepath.Join(home, "palace.db"), palace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var out []string
	err = p.View(context.Background(), func(tx *sql.Tx) error {
		for _, q := range []string{
			`SELECT id, type, subject, text, sources, importance, coalesce(superseded_by, ''), seq FROM memories ORDER BY id`,
			`SELECT id, memory FROM memory_merges ORDER BY id`,
			`SELECT id, session, title, summary, participants, turns, coalesce(draft, ''), seq FROM scenes ORDER BY id`,
			`SELECT speaker, facet, key, value, since, evidence, history FROM persona_facets ORDER BY 1, 2, 3`,
			`SELECT e.name, a.norm FROM kg_aliases a JOIN kg_entities e ON e.n = a.entity ORDER BY 2`,
			`SELECT id, predicate, valid_from, coalesce(valid_to, 0), confidence, sources FROM kg_triples ORDER BY id`,
			`SELECT key, value FROM palace_meta WHERE key LIKE 'worker:%' ORDER BY key`,
		} {
			rows, err := tx.Query(q)
			if err != nil {
				return err
			}
			cols, _ := rows.Columns()
			for rows.Next() {
				vals := make([]any, len(cols))
				ptrs := make([]any, len(cols))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				if err := rows.Scan(ptrs...); err != nil {
					rows.Close()
					return err
				}
				row := make([]string, len(vals))
				for i, v := range vals {
					if b, ok := v.([]byte); ok {
						v = string(b)
					}
					row[i] = fmt.Sprint(v)
				}
				out = append(out, strings.Join(row, " | "))
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

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
	want, got := layerDump(t, clean), layerDump(t, killed)
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
	if got := layerDump(t, killed); !slices.Equal(got, want) {
		t.Fatalf("layers rebuilt from the archive differ: %d rows, want %d", len(got), len(want))
	}
}
