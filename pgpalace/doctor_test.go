package pgpalace

import (
	"strings"
	"testing"
	"time"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/pgtest"
)

// TestChecks checks the doctor's checks of the palace: a current schema
// with its trigram indexes; one index missing (a server without pg_trgm
// then); this server's index behind another's writes, then current.
func TestChecks(t *testing.T) {
	ctx := t.Context()
	url := pgtest.NewDatabase(t)
	a, b := openAt(t, url), openAt(t, url)
	byName := func(db *DB) map[string]engram.DoctorCheck {
		out := map[string]engram.DoctorCheck{}
		for _, c := range db.Checks(ctx) {
			out[c.Name] = c
		}
		return out
	}
	cs := byName(a)
	if c := cs[CheckSchema]; c.Status != engram.CheckOK || !strings.Contains(c.Finding, "pg_trgm") {
		t.Fatalf("schema check = %+v; want ok, with pg_trgm", c)
	}
	if err := b.LoadKeywordIndex(ctx); err != nil {
		t.Fatal(err)
	}
	tu := engram.Turn{ID: "t1", Seq: 1, Namespace: "ns", Session: "s", Role: engram.RoleUser, Content: "hello", TS: time.Now()}
	if err := a.PutTurns(ctx, []engram.Turn{tu}); err != nil {
		t.Fatal(err)
	}
	if c := byName(b)[CheckIndexes]; c.Status != engram.CheckOK || !strings.Contains(c.Finding, "turns: 1 changes behind") {
		t.Fatalf("index check of a server behind = %+v", c)
	}
	if err := b.CatchUpKeywordIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	if c := byName(b)[CheckIndexes]; c.Status != engram.CheckOK || !strings.Contains(c.Finding, "hold every change") {
		t.Fatalf("index check after a catch-up = %+v; want current", c)
	}
	if _, err := a.pool.Exec(ctx, `DROP INDEX palace_vault_chunks_folded`); err != nil {
		t.Fatal(err)
	}
	if c := byName(a)[CheckSchema]; c.Status != engram.CheckWarn || !strings.Contains(c.Finding, "palace_vault_chunks_folded") {
		t.Fatalf("schema check without a trigram index = %+v; want a warning naming it", c)
	}
}

// TestReset checks that a reset palace holds nothing, not even a
// forgotten id or a watermark, takes the turns again, and that another
// server's loaded index forgets what it held.
func TestReset(t *testing.T) {
	ctx := t.Context()
	url := pgtest.NewDatabase(t)
	a, b := openAt(t, url), openAt(t, url)
	turns := searchTurns(t)[:40]
	if err := a.PutTurns(ctx, turns); err != nil {
		t.Fatal(err)
	}
	if _, err := a.ForgetTurns(ctx, []engram.ForgetTurn{{ID: turns[0].ID, Seq: 99}}, time.Now(), nil); err != nil {
		t.Fatal(err)
	}
	if err := a.PutScenes(ctx, "scenes", sceneWrites(turns[1:], 1), 40); err != nil {
		t.Fatal(err)
	}
	if err := b.LoadKeywordIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	if n, _ := b.CountTurns(ctx, ""); n != 0 {
		t.Fatalf("%d turns after a reset", n)
	}
	if hits, err := b.SearchTurns(ctx, engram.TextQuery{Text: turns[3].Content, Limit: 5}); err != nil || len(hits) != 0 {
		t.Fatalf("another server finds %d turns after a reset, %v", len(hits), err)
	}
	if hits, err := b.SearchScenes(ctx, engram.TextQuery{Text: "round", Limit: 5}); err != nil || len(hits) != 0 {
		t.Fatalf("another server finds %d scenes after a reset, %v", len(hits), err)
	}
	if seq, _ := a.IndexedSeq(ctx); seq != 0 {
		t.Fatalf("IndexedSeq after a reset = %d", seq)
	}
	if gone, _ := a.ForgottenIDs(ctx, []string{turns[0].ID}); len(gone) != 0 {
		t.Fatal("a reset palace still records a forgotten id")
	}
	if err := a.PutTurns(ctx, turns); err != nil {
		t.Fatal(err)
	}
	if n, _ := b.CountTurns(ctx, ""); n != 40 {
		t.Fatalf("%d turns stored again after a reset; want 40", n)
	}
	if hits, err := b.SearchTurns(ctx, engram.TextQuery{Text: turns[0].Content, Limit: 50}); err != nil || len(hits) == 0 {
		t.Fatalf("another server finds %d turns stored again, %v", len(hits), err)
	}
}
