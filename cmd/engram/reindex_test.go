package main_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-dev/engram/embedder"
	"github.com/engram-dev/engram/internal/vecrow"
)

func TestReindexUsage(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	for _, args := range [][]string{{"reindex"}, {"reindex", "palace"}, {"reindex", "vectors", "extra"}, {"reindex", "vectors", "--bogus"}} {
		if r := runCLI(t, home, "", args...); r.code != 2 || !strings.Contains(r.stderr, "engram reindex") {
			t.Errorf("%v: %+v", args, r)
		}
	}
	writeConfig(t, home, "embedder = \"none\"\n")
	if r := runCLI(t, home, vectorTurns, "ingest", "-"); r.code != 0 {
		t.Fatalf("ingest: %+v", r)
	}
	if r := runCLI(t, home, "", "reindex", "vectors"); r.code != 1 || !strings.Contains(r.stderr, "embedder = none") {
		t.Errorf("reindex with embedder none: %+v", r)
	}
	rep, _ := runDoctor(t, home, 0)
	rep.mustFind(t, "vectors", "ok", "embedder = none")
}

// TestReindexLayers damages a memory vector and a vault chunk vector: the
// reindex drops them and embeds the layers and the vault again, through
// their reset watermarks; --reembed does the same for everything.
func TestReindexLayers(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	vault := t.TempDir()
	if err := os.WriteFile(filepath.Join(vault, "db.md"), []byte("# Database\n\nWe chose PostgreSQL for billing.\n\n## Backups\n\nNightly, kept for 30 days.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	writeConfig(t, home, "[[vaults]]\npath = \""+vault+"\"\n")
	if r := runCLI(t, home, vectorTurns, "ingest", "-"); r.code != 0 {
		t.Fatalf("ingest: %+v", r)
	}
	if r := runCLI(t, home, "", "jobs", "run", "--all"); r.code != 0 {
		t.Fatalf("jobs run --all: %+v", r)
	}
	counts := func() map[string]int {
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
	before := counts()
	if before["turn"] != 3 || before["memory"] == 0 || before["doc"] == 0 {
		t.Fatalf("vectors by kind: %v", before)
	}

	db := openPalaceDB(t, home)
	zero := vecrow.Encode(nil, make([]float32, embedder.New().Dim()))
	for _, kind := range []string{"memory", "doc"} {
		if n := mustExecDB(t, db, `UPDATE vectors SET vec = ? WHERE rowid = (SELECT min(rowid) FROM vectors WHERE kind = ?)`, zero, kind); n != 1 {
			t.Fatalf("no %s vector to damage", kind)
		}
	}
	db.Close()
	rep, _ := runDoctor(t, home, 1)
	rep.mustFind(t, "vectors", "fail", "2 stored vectors", "(memory): all zeros", "(doc): all zeros")

	r := runCLI(t, home, "", "reindex", "vectors")
	if r.code != 0 || !strings.Contains(r.stdout, "dropped 2 unusable") {
		t.Fatalf("reindex vectors: %+v", r)
	}
	if after := counts(); after["memory"] != before["memory"] || after["doc"] != before["doc"] || after["turn"] != 3 {
		t.Fatalf("vectors by kind after the reindex: %v, before %v", after, before)
	}
	rep, _ = runDoctor(t, home, 0)
	if f := rep.failed(); len(f) > 0 {
		t.Fatalf("doctor after reindex:\n%s", rep)
	}

	r = runCLI(t, home, "", "reindex", "vectors", "--reembed")
	if r.code != 0 || !strings.Contains(r.stdout, "dropped 0 unusable") {
		t.Fatalf("reindex --reembed: %+v", r)
	}
	if after := counts(); after["memory"] != before["memory"] || after["doc"] != before["doc"] || after["turn"] != 3 {
		t.Fatalf("vectors by kind after --reembed: %v, before %v", after, before)
	}
	// Every turn, layer row and chunk was embedded again.
	total := 0
	for _, n := range before {
		total += n
	}
	if want := fmt.Sprintf("embedded %d texts, loaded %d into memory", total, total); !strings.Contains(r.stdout, want) {
		t.Errorf("reindex --reembed: %q, want %q", r.stdout, want)
	}
	resp, _ := recallJSON(t, home, "--kinds", "doc", "PostgreSQL billing")
	if len(resp.Results) == 0 {
		t.Fatalf("doc recall after --reembed: %+v", resp)
	}
}

// TestReindexChroma rebuilds a Chroma collection with no server running:
// the collection lost, the doctor sees it, the reindex pushes every stored
// vector again. It uses the shared test server, in a database of its own.
func TestReindexChroma(t *testing.T) {
	home, ix := chromaHome(t, "reindex")
	jsonl, _ := faultTurns(12)
	if r := runCLI(t, home, jsonl, "ingest", "-"); r.code != 0 {
		t.Fatalf("ingest: %+v", r)
	}
	rep, _ := runDoctor(t, home, 0)
	rep.mustFind(t, "chroma", "ok", "holds the 12 stored vectors")

	ctx := context.Background()
	if err := ix.DropCollection(ctx); err != nil {
		t.Fatal(err)
	}
	rep, _ = runDoctor(t, home, 1)
	if c := rep.mustFind(t, "chroma", "fail", "holds 0 vectors, SQLite 12"); c.Fix != "engram reindex vectors" {
		t.Errorf("fix: %q", c.Fix)
	}
	if r := runCLI(t, home, "", "reindex", "vectors"); r.code != 0 || !strings.Contains(r.stdout, "pushed 12 to a new Chroma collection") {
		t.Fatalf("reindex vectors: %+v", r)
	}
	if n, err := ix.Count(ctx); err != nil || n != 12 {
		t.Fatalf("Chroma holds %d vectors (%v), want 12", n, err)
	}
	rep, _ = runDoctor(t, home, 0)
	rep.mustFind(t, "chroma", "ok", "holds the 12 stored vectors")
	if err := ix.DropCollection(ctx); err != nil {
		t.Error(err)
	}
}
