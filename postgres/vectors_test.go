package postgres_test

import (
	"context"
	"slices"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/archivetest"
	"github.com/engram-dev/engram/internal/pgtest"
	"github.com/engram-dev/engram/postgres"
)

// TestTurnVectors: a vector stored by one server is read by another, by
// model and of the asked dimension; the first stored stays; a tombstone or
// an unknown turn gets none; a forget and a redaction delete the vectors
// of the turns they rewrite; and a vector of a turn rewritten since the
// mark its server took before reading it is never stored, so that no
// vector of a replaced text outlives the rewrite.
func TestTurnVectors(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ctx := context.Background()
	a, b := mustOpen(t, url, postgres.Options{}), mustOpen(t, url, postgres.Options{})
	res := archivetest.MustAppend(t, a, archivetest.Turn("s", "one"), archivetest.Turn("s", "two secret"), archivetest.Turn("s", "three"))
	seqs := []int64{res[0].Seq, res[1].Seq, res[2].Seq}
	vec := func(x float32) []float32 { return []float32{x, -x, 0.5} }

	mark, err := a.RewriteMark(ctx)
	if err != nil || mark != 0 {
		t.Fatalf("mark before any rewrite: %d %v", mark, err)
	}
	n, err := a.PutTurnVectors(ctx, "m1", mark, seqs, [][]float32{vec(1), vec(2), vec(3)})
	if err != nil || n != 3 {
		t.Fatalf("put: %d %v", n, err)
	}
	if n, err := b.PutTurnVectors(ctx, "m1", mark, seqs[:1], [][]float32{vec(9)}); err != nil || n != 0 {
		t.Fatalf("a second put of a stored vector: %d %v; want it left as it is", n, err)
	}
	got, err := b.TurnVectors(ctx, "m1", 3, append(slices.Clone(seqs), 999))
	if err != nil || len(got) != 3 || !slices.Equal(got[seqs[0]], vec(1)) || !slices.Equal(got[seqs[2]], vec(3)) {
		t.Fatalf("B reads %v %v", got, err)
	}
	if got, err := b.TurnVectors(ctx, "m1", 4, seqs); err != nil || len(got) != 0 {
		t.Errorf("another dimension: %v %v", got, err)
	}
	if got, err := b.TurnVectors(ctx, "m2", 3, seqs); err != nil || len(got) != 0 {
		t.Errorf("another model: %v %v", got, err)
	}

	// The forget deletes the forgotten turn's vector; its tombstone gets none.
	if _, err := a.Forget(ctx, []string{res[0].ID}, engram.Forgotten{Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.TurnVectors(ctx, "m1", 3, seqs); got[seqs[0]] != nil || got[seqs[1]] == nil {
		t.Fatalf("after the forget: %v", got)
	}
	mark, err = b.RewriteMark(ctx)
	if err != nil || mark == 0 {
		t.Fatalf("mark after a forget: %d %v", mark, err)
	}
	if n, err := b.PutTurnVectors(ctx, "m2", mark, seqs[:1], [][]float32{vec(1)}); err != nil || n != 0 {
		t.Errorf("a tombstone's vector: stored %d %v", n, err)
	}

	// B read "two secret" before the redaction (its mark), and stores its
	// vector under another model after it: refused.
	before := mark
	redact := func(t engram.Turn) (engram.Turn, bool) {
		t.Content, t.Redacted = "two [REDACTED]", &engram.Redaction{At: t.TS, Spans: 1}
		return t, true
	}
	if _, err := a.Redact(ctx, []string{res[1].ID}, redact, postgres.Redaction{Marker: "[REDACTED]", Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.TurnVectors(ctx, "m1", 3, seqs); got[seqs[1]] != nil || got[seqs[2]] == nil {
		t.Fatalf("after the redaction: %v", got)
	}
	if n, err := b.PutTurnVectors(ctx, "m2", before, seqs[1:], [][]float32{vec(2), vec(3)}); err != nil || n != 1 {
		t.Fatalf("put with a mark before the redaction: %d %v; want only the untouched turn", n, err)
	}
	if got, _ := a.TurnVectors(ctx, "m2", 3, seqs); got[seqs[1]] != nil || got[seqs[2]] == nil {
		t.Fatalf("the redacted turn's old vector was stored: %v", got)
	}
	if _, err := a.PutTurnVectors(ctx, "m1", 0, seqs[:2], [][]float32{vec(1)}); engram.ErrorCode(err) != engram.EINVALID {
		t.Errorf("two turns, one vector: %v", err)
	}
}
