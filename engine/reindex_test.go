package engine_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/embedder"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/internal/vecrow"
)

// runAllJobsOnce opens the home of cfg and runs every job once, as `engram
// jobs run --all` does; none may fail.
func runAllJobsOnce(t *testing.T, cfg config.Config) {
	t.Helper()
	e, err := engine.Open(t.Context(), cfg, quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	runAllJobs(t, e)
}

// vectorsByKind counts the stored vectors of home by kind.
func vectorsByKind(t *testing.T, home string) map[string]int {
	t.Helper()
	db := openPalaceDB(t, home)
	defer db.Close()
	rows, err := db.Query(`SELECT kind, count(*) FROM vectors GROUP BY kind`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var k string
		var n int
		if err := rows.Scan(&k, &n); err != nil {
			t.Fatal(err)
		}
		out[k] = n
	}
	return out
}

// TestReindexLayers damages a memory vector and a vault chunk vector: the
// reindex drops them and embeds the layers and the vault again, through
// their reset watermarks; a reindex with reembed does the same for
// everything.
func TestReindexLayers(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	vault := t.TempDir()
	if err := os.WriteFile(filepath.Join(vault, "db.md"), []byte("# Database\n\nWe chose PostgreSQL for billing.\n\n## Backups\n\nNightly, kept for 30 days.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	writeConfig(t, home, "[[vaults]]\npath = \""+vault+"\"\n")
	cfg := ingestHome(t, home, vectorTurns)
	runAllJobsOnce(t, cfg)
	before := vectorsByKind(t, home)
	if before["turn"] != 3 || before["memory"] == 0 || before["doc"] == 0 {
		t.Fatalf("vectors by kind: %v", before)
	}

	db := openPalaceDB(t, home)
	zero := vecrow.Encode(nil, make([]float32, embedder.New().Dim()))
	for _, kind := range []string{"memory", "doc"} {
		if n := testutil.MustExec(t, db, `UPDATE vectors SET vec = ? WHERE rowid = (SELECT min(rowid) FROM vectors WHERE kind = ?)`, zero, kind); n != 1 {
			t.Fatalf("no %s vector to damage", kind)
		}
	}
	db.Close()
	rep := doctor(t, cfg, true)
	testutil.MustFindCheck(t, rep, "vectors", "fail", "2 stored vectors", "(memory): all zeros", "(doc): all zeros")

	if st := reindexVectors(t, cfg, false); st.Dropped != 2 {
		t.Fatalf("reindex vectors: %+v, want 2 unusable dropped", st)
	}
	if after := vectorsByKind(t, home); after["memory"] != before["memory"] || after["doc"] != before["doc"] || after["turn"] != 3 {
		t.Fatalf("vectors by kind after the reindex: %v, before %v", after, before)
	}
	doctor(t, cfg, false)

	st := reindexVectors(t, cfg, true)
	if after := vectorsByKind(t, home); after["memory"] != before["memory"] || after["doc"] != before["doc"] || after["turn"] != 3 {
		t.Fatalf("vectors by kind after the reembed: %v, before %v", after, before)
	}
	// Every turn, layer row and chunk was embedded again.
	total := 0
	for _, n := range before {
		total += n
	}
	wantReindexed(t, st, 0, int64(total), int64(total))
	resp := recallOnce(t, cfg, "", "PostgreSQL billing", 0, engram.KindDoc)
	if len(resp.Results) == 0 {
		t.Fatalf("doc recall after the reembed: %+v", resp)
	}
}

// TestReindexChroma rebuilds a Chroma collection with no server running:
// the collection lost, the doctor sees it, the reindex pushes every stored
// vector again. It uses the shared test server, in a database of its own.
func TestReindexChroma(t *testing.T) {
	home, ix := chromaHome(t, "reindex")
	jsonl, _ := testutil.FaultTurns(12)
	cfg := ingestHome(t, home, jsonl)
	testutil.MustFindCheck(t, doctor(t, cfg, false), "chroma", "ok", "holds the 12 stored vectors")

	ctx := t.Context()
	if err := ix.DropCollection(ctx); err != nil {
		t.Fatal(err)
	}
	if c := testutil.MustFindCheck(t, doctor(t, cfg, true), "chroma", "fail", "holds 0 vectors, SQLite 12"); c.Fix != "engram reindex vectors" {
		t.Errorf("fix: %q", c.Fix)
	}
	if st := reindexVectors(t, cfg, false); st.Backend != config.VectorsChroma || st.Indexed != 12 {
		t.Fatalf("reindex vectors: %+v, want 12 pushed to a new Chroma collection", st)
	}
	if n, err := ix.Count(ctx); err != nil || n != 12 {
		t.Fatalf("Chroma holds %d vectors (%v), want 12", n, err)
	}
	testutil.MustFindCheck(t, doctor(t, cfg, false), "chroma", "ok", "holds the 12 stored vectors")
	if err := ix.DropCollection(ctx); err != nil {
		t.Error(err)
	}
}
