package engine_test

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/embedder"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/internal/vecrow"
)

// turnVectors returns the ids of the turn vectors with their turn's
// content, in seq order.
func turnVectors(t *testing.T, home string) (ids, contents []string) {
	t.Helper()
	db := openPalaceDB(t, home)
	defer db.Close()
	rows, err := db.Query(`SELECT v.id, t.content FROM vectors v JOIN turns t ON t.id = v.id WHERE v.kind = 'turn' ORDER BY t.seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, c string
		if err := rows.Scan(&id, &c); err != nil {
			t.Fatal(err)
		}
		ids, contents = append(ids, id), append(contents, c)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return ids, contents
}

// recallOnce opens the home of cfg, recalls query in mode (k results, of
// kinds) and closes it, as `engram recall` does with no server.
func recallOnce(t *testing.T, cfg config.Config, mode, query string, k int, kinds ...string) engram.RecallResponse {
	t.Helper()
	e, err := engine.Open(t.Context(), cfg, quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	resp, err := e.Recall(t.Context(), engram.RecallRequest{Query: query, Mode: mode, K: k, Kinds: kinds})
	if err != nil {
		t.Fatalf("recall %s %q: %v", mode, query, err)
	}
	return resp
}

// wantShallowHit recalls content in shallow mode and wants turn id first,
// with no warning.
func wantShallowHit(t *testing.T, cfg config.Config, content, id string) {
	t.Helper()
	resp := recallOnce(t, cfg, engram.ModeShallow, content, 3)
	if resp.Mode != engram.ModeShallow || len(resp.Warnings) > 0 || len(resp.Results) == 0 || resp.Results[0].ID != id {
		t.Fatalf("shallow recall of %q: want %s first, got %+v", content, id, resp)
	}
}

// reindexVectors opens the home of cfg and reindexes its vectors (with
// reembed, embeds everything again), as `engram reindex vectors` does
// with no server; the reindex must succeed.
func reindexVectors(t *testing.T, cfg config.Config, reembed bool) engram.ReindexStatus {
	t.Helper()
	e, err := engine.Open(t.Context(), cfg, quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	st, err := e.ReindexVectors(t.Context(), reembed, nil)
	if err != nil {
		t.Fatalf("reindex vectors (reembed %v): %+v %v", reembed, st, err)
	}
	return st
}

// wantReindexed fails unless a reindex dropped, embedded and loaded into
// memory what it should have.
func wantReindexed(t *testing.T, st engram.ReindexStatus, dropped int, embedded, loaded int64) {
	t.Helper()
	if st.Backend != config.VectorsEmbedded || st.Dropped != dropped || st.Embedded != embedded || st.Indexed != loaded {
		t.Fatalf("reindex: %+v; want %d unusable dropped, %d texts embedded, %d loaded into memory", st, dropped, embedded, loaded)
	}
}

// TestFaultVectorIndex damages the stored vectors the ways a disk or a bug
// can, with no server running: NaN written over a vector, a BLOB cut short
// (past the CHECK constraint, as a damaged page would be), a zero vector,
// rows lost behind the watermark. The doctor reports each and names
// `engram reindex vectors`, which repairs them; then the doctor is clean and
// shallow recall finds the turns again. A reindex with reembed embeds
// everything again.
func TestFaultVectorIndex(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	jsonl, _ := testutil.FaultTurns(30)
	cfg := ingestHome(t, home, jsonl)
	// The doctor lets the vector indexer catch up (ingest does not wait).
	rep := doctor(t, cfg, false)
	testutil.MustFindCheck(t, rep, "vectors", "ok", "30 vectors")
	ids, contents := turnVectors(t, home)
	if len(ids) != 30 {
		t.Fatalf("%d turn vectors, want 30", len(ids))
	}

	dim := embedder.New().Dim()
	nan := make([]float32, dim)
	nan[0], nan[1] = 1, float32(math.NaN())
	db := openPalaceDB(t, home)
	testutil.MustExec(t, db, `UPDATE vectors SET vec = ? WHERE id = ?`, vecrow.Encode(nil, nan), ids[3])
	testutil.MustExec(t, db, `UPDATE vectors SET vec = ? WHERE id = ?`, vecrow.Encode(nil, make([]float32, dim)), ids[15])
	testutil.MustExec(t, db, `PRAGMA ignore_check_constraints = 1`)
	testutil.MustExec(t, db, `UPDATE vectors SET vec = x'0011223344' WHERE id = ?`, ids[7])
	testutil.MustExec(t, db, `PRAGMA ignore_check_constraints = 0`)
	testutil.MustExec(t, db, `DELETE FROM vectors WHERE id IN (?, ?)`, ids[10], ids[11])
	db.Close()

	rep = doctor(t, cfg, true)
	for _, c := range []engram.DoctorCheck{
		testutil.MustFindCheck(t, rep, "vectors", "fail", "3 stored vectors", "unusable", ids[3]+" (turn): holds a value that is not finite",
			ids[7]+" (turn): 5 bytes", ids[15]+" (turn): all zeros"),
		testutil.MustFindCheck(t, rep, "vectors", "fail", "2 turns up to seq 30 have no vector", ids[10]),
		testutil.MustFindCheck(t, rep, "vectors", "fail", "vector recall is off"),
	} {
		if c.Fix != "engram reindex vectors" {
			t.Errorf("fix of %q: %q", c.Finding, c.Fix)
		}
	}
	// Meanwhile recall answers by keyword, and says why.
	resp := recallOnce(t, cfg, engram.ModeShallow, contents[10], 0)
	if resp.Mode != engram.ModeKeyword || !strings.Contains(strings.Join(resp.Warnings, "\n"), "vector recall is off") {
		t.Fatalf("recall with damaged vectors: %+v", resp)
	}

	wantReindexed(t, reindexVectors(t, cfg, false), 3, 5, 30)
	rep = doctor(t, cfg, false)
	testutil.MustFindCheck(t, rep, "vectors", "ok", "30 vectors")
	testutil.MustFindCheck(t, rep, "vector-memory", "ok", "30 stored vectors")
	for _, i := range []int{3, 7, 10, 11, 15} {
		wantShallowHit(t, cfg, contents[i], ids[i])
	}

	// Reembed embeds the turns and, through the layer-vectors worker, the
	// retrieval units (the session and the scenes of the rules extractor).
	wantReindexed(t, reindexVectors(t, cfg, true), 0, 33, 33)
	rep = doctor(t, cfg, false)
	testutil.MustFindCheck(t, rep, "vectors", "ok", "33 vectors (30 of turns)")
	wantShallowHit(t, cfg, contents[20], ids[20])
}
