package postgres_test

import (
	"slices"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/archivetest"
	"github.com/engram-dev/engram/internal/pgtest"
	"github.com/engram-dev/engram/postgres"
)

// TestRewriteJournal checks that each Forget and Redact that changes rows
// records an entry, in order, read by another server's RewritesSince, with
// the turns it changed and, for a redaction, its marker and
// reason; one that changes nothing records none.
func TestRewriteJournal(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ctx := t.Context()
	a := mustOpen(t, url, postgres.Options{})
	b := mustOpen(t, url, postgres.Options{})
	res := archivetest.MustAppend(t, a, archivetest.Turn("s", "the code is qx-1 and \x00 more"), archivetest.Turn("s", "the door is red"))
	red := postgres.Redaction{Marker: "[gone]", Reason: "secret"}
	edit := func(t engram.Turn) (engram.Turn, bool) {
		nt, n := t.RedactWith(engram.NewSpans([]string{"qx-1", "\x00"}), red.Marker)
		return nt, n > 0
	}
	rr, err := a.Redact(ctx, []string{res[0].ID, res[1].ID}, edit, red)
	if err != nil {
		t.Fatal(err)
	}
	if rr.Journal == 0 {
		t.Fatal("the redaction reports no journal entry")
	}
	fr, err := a.Forget(ctx, []string{res[1].ID}, engram.Forgotten{Reason: "r"})
	if err != nil {
		t.Fatal(err)
	}
	// Nothing changes: no entry.
	if nr, err := a.Forget(ctx, []string{res[1].ID}, engram.Forgotten{}); err != nil || nr.Journal != 0 {
		t.Fatalf("a forget that changed nothing: %+v, %v", nr, err)
	}
	got, err := b.RewritesSince(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].N != rr.Journal || got[1].N != fr.Journal || got[0].N >= got[1].N {
		t.Fatalf("journal: %+v (redaction %d, forget %d)", got, rr.Journal, fr.Journal)
	}
	r, f := got[0], got[1]
	if r.Kind != postgres.RewriteRedact || !slices.Equal(r.IDs, []string{res[0].ID}) || !slices.Equal(r.Seqs, []int64{res[0].Seq}) ||
		r.Redaction == nil || r.Redaction.Marker != red.Marker || r.Redaction.Reason != red.Reason {
		t.Errorf("redaction entry: %+v %+v", r, r.Redaction)
	}
	if f.Kind != postgres.RewriteForget || !slices.Equal(f.IDs, []string{res[1].ID}) || !slices.Equal(f.Seqs, []int64{res[1].Seq}) || f.Redaction != nil {
		t.Errorf("forget entry: %+v", f)
	}
	if rest, err := b.RewritesSince(ctx, r.N); err != nil || len(rest) != 1 || rest[0].N != f.N {
		t.Errorf("after the redaction: %+v, %v", rest, err)
	}
	turns, err := b.TurnsAt(ctx, []int64{res[1].Seq, res[0].Seq})
	if err != nil || len(turns) != 2 {
		t.Fatalf("TurnsAt: %+v, %v", turns, err)
	}
	if turns[0].Content != "the code is [gone] and [gone] more" || !turns[1].IsTombstone() {
		t.Errorf("TurnsAt: %+v", turns)
	}
}
