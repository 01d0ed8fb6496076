package archivetest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
)

// Full is what the engine uses of an archive beyond engram.Archive
// (archive.Rewriter), with the counts it reads.
type Full interface {
	archive.Rewriter
	// Counts returns the Stats the engine reads: readable turns
	// (tombstones left out), tombstones, redacted turns.
	Counts(ctx context.Context) (turns, forgotten, redacted int64, err error)
}

// Extended is a store for RunExtended: how to open it, and how to damage
// the stored line of a turn (its bytes changed, its crc not) while it is
// open.
type Extended struct {
	Open   func() (Full, error)
	Damage func(t *testing.T, seq int64)
}

// RunExtended runs the cases of forget, redaction (Rewrite), Verify,
// Notify and the counts. fresh makes a new, empty store for one subtest.
func RunExtended(t *testing.T, fresh func(t *testing.T) Extended) {
	for _, c := range []struct {
		name string
		fn   func(t *testing.T, x Extended)
	}{
		{"ForgetThenResend", testForgetThenResend},
		{"RewriteKeepsSeqAndID", testRewriteKeepsSeqAndID},
		{"VerifyFindsDamage", testVerifyFindsDamage},
		{"Notify", testNotify},
	} {
		t.Run(c.name, func(t *testing.T) { c.fn(t, fresh(t)) })
	}
}

// mustOpenFull opens the store and closes it when the test ends.
func mustOpenFull(tb testing.TB, x Extended) Full {
	tb.Helper()
	a, err := x.Open()
	if err != nil {
		tb.Fatalf("open: %v", err)
	}
	tb.Cleanup(func() { a.Close() })
	return a
}

// must fails the test on the error of a call that returns a value and
// an error: m.bool(a.Known(ctx, id)).
type must struct{ tb testing.TB }

func (m must) bool(v bool, err error) bool {
	m.tb.Helper()
	if err != nil {
		m.tb.Fatal(err)
	}
	return v
}

func (m must) seqs(v map[string]int64, err error) map[string]int64 {
	m.tb.Helper()
	if err != nil {
		m.tb.Fatal(err)
	}
	return v
}

func (m must) report(v archive.Report, err error) archive.Report {
	m.tb.Helper()
	if err != nil {
		m.tb.Fatal(err)
	}
	return v
}

func wantCounts(tb testing.TB, a Full, turns, forgotten, redacted int64) {
	tb.Helper()
	t, f, r, err := a.Counts(context.Background())
	if err != nil || t != turns || f != forgotten || r != redacted {
		tb.Fatalf("counts: turns %d forgotten %d redacted %d (%v), want %d %d %d", t, f, r, err, turns, forgotten, redacted)
	}
}

func testForgetThenResend(t *testing.T, x Extended) {
	ctx, m := context.Background(), must{t}
	a := mustOpenFull(t, x)
	keep, gone := Turn("s", "kept"), Turn("s", "my secret plan")
	keep.ID, gone.ID = "keep-1", "gone-1"
	res := MustAppend(t, a, keep, gone)
	seq := res[1].Seq
	at := time.Date(2026, 5, 2, 8, 0, 0, 0, time.UTC)

	if _, err := a.Forget(ctx, []string{"gone-1"}, engram.Forgotten{At: at, Reason: strings.Repeat("x", engram.MaxReasonBytes+1)}); engram.ErrorCode(err) != engram.EINVALID {
		t.Fatalf("forget with a long reason: %v", err)
	}
	fr, err := a.Forget(ctx, []string{"gone-1", "nobody", "gone-1"}, engram.Forgotten{At: at, Reason: "asked"})
	if err != nil {
		t.Fatal(err)
	}
	if len(fr.Changed) != 1 || fr.Changed[0].Old.Content != "my secret plan" || !fr.Changed[0].New.IsTombstone() ||
		fr.Changed[0].New.Seq != seq || !slices.Equal(fr.Unknown, []string{"nobody"}) || len(fr.Unchanged) != 0 {
		t.Fatalf("forget: %+v", fr)
	}
	if !m.bool(a.Known(ctx, "gone-1")) || !m.bool(a.Forgotten(ctx, "gone-1")) || m.bool(a.Forgotten(ctx, "keep-1")) ||
		m.bool(a.Known(ctx, "nobody")) || m.bool(a.Forgotten(ctx, "nobody")) {
		t.Fatal("Known or Forgotten wrong after the forget")
	}
	if ts := m.seqs(a.Tombstones(ctx)); len(ts) != 1 || ts["gone-1"] != seq {
		t.Fatalf("tombstones %v", ts)
	}
	wantCounts(t, a, 1, 1, 0)
	got := StreamAll(t, a, 0)
	if len(got) != 2 || !got[1].IsTombstone() || got[1].Content != "" || got[1].Seq != seq || got[1].ID != "gone-1" ||
		got[1].Forgotten.Reason != "asked" || !got[1].Forgotten.At.Equal(at) || got[1].ReceivedAt.IsZero() {
		t.Fatalf("stream after the forget: %+v", got)
	}
	var scanned []string
	if err := a.ScanTime(ctx, time.Time{}, time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC), func(t engram.Turn) error {
		scanned = append(scanned, t.ID)
		return nil
	}); err != nil || !slices.Equal(scanned, []string{"keep-1"}) {
		t.Fatalf("ScanTime after the forget: %v (%v)", scanned, err)
	}

	// Forgetting again changes nothing.
	if fr, err := a.Forget(ctx, []string{"gone-1"}, engram.Forgotten{At: at}); err != nil || len(fr.Changed) != 0 || !slices.Equal(fr.Unchanged, []string{"gone-1"}) {
		t.Fatalf("second forget: %+v (%v)", fr, err)
	}
	// A re-send is a duplicate, and says the turn was forgotten.
	again := Turn("s", "my secret plan")
	again.ID = "gone-1"
	if r := MustAppend(t, a, again); !r[0].Duplicate || !r[0].Forgotten || r[0].Seq != seq {
		t.Fatalf("re-send of a forgotten id: %+v", r)
	}
	if r := MustAppend(t, a, keep); !r[0].Duplicate || r[0].Forgotten {
		t.Fatalf("re-send of a live id: %+v", r)
	}
	if a.LastSeq() != seq {
		t.Fatalf("LastSeq %d after duplicates, want %d", a.LastSeq(), seq)
	}

	// Asked to, the archive takes it again under a new seq.
	again.Resurrect = true
	r := MustAppend(t, a, again)
	if r[0].Duplicate || r[0].Seq <= seq {
		t.Fatalf("resurrect: %+v", r)
	}
	if m.bool(a.Forgotten(ctx, "gone-1")) || len(m.seqs(a.Tombstones(ctx))) != 0 {
		t.Fatal("a resurrected id is still forgotten")
	}
	wantCounts(t, a, 2, 1, 0)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	b := mustOpenFull(t, x)
	if !m.bool(b.Known(ctx, "gone-1")) || m.bool(b.Forgotten(ctx, "gone-1")) || b.LastSeq() != r[0].Seq {
		t.Fatalf("after reopen: LastSeq %d", b.LastSeq())
	}
	wantCounts(t, b, 2, 1, 0)
	if r2 := MustAppend(t, b, again); !r2[0].Duplicate || r2[0].Seq != r[0].Seq {
		t.Fatalf("re-send of the resurrected id after reopen: %+v", r2)
	}
	// Forgetting the resurrected turn forgets its latest line.
	fr, err = b.Forget(ctx, []string{"gone-1"}, engram.Forgotten{At: at})
	if err != nil || len(fr.Changed) != 1 || fr.Changed[0].New.Seq != r[0].Seq {
		t.Fatalf("forget of the resurrected turn: %+v (%v)", fr, err)
	}
	if ts := m.seqs(b.Tombstones(ctx)); ts["gone-1"] != r[0].Seq {
		t.Fatalf("tombstones %v", ts)
	}
}

func testRewriteKeepsSeqAndID(t *testing.T, x Extended) {
	ctx, m := context.Background(), must{t}
	a := mustOpenFull(t, x)
	res := MustAppend(t, a, Turn("s", "one"), Turn("s", "my key is hunter2"), Turn("s", "three"))
	id, seq := res[1].ID, res[1].Seq
	redact := func(t engram.Turn) (engram.Turn, bool) {
		if !strings.Contains(t.Content, "hunter2") {
			return t, false
		}
		t.Content = strings.ReplaceAll(t.Content, "hunter2", "[REDACTED]")
		t.Redacted = &engram.Redaction{At: time.Date(2026, 5, 3, 0, 0, 0, 0, time.UTC), Spans: 1}
		return t, true
	}
	// A new version that moves the turn is refused, and nothing changes.
	_, err := a.Rewrite(ctx, []string{id}, func(t engram.Turn) (engram.Turn, bool) {
		t.Seq++
		return t, true
	})
	if engram.ErrorCode(err) != engram.EINVALID {
		t.Fatalf("a rewrite that changes the seq: %v", err)
	}
	rr, err := a.Rewrite(ctx, []string{id, res[0].ID, "nobody"}, redact)
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Changed) != 1 || rr.Changed[0].New.Seq != seq || rr.Changed[0].Old.Content != "my key is hunter2" ||
		!slices.Equal(rr.Unchanged, []string{res[0].ID}) || !slices.Equal(rr.Unknown, []string{"nobody"}) {
		t.Fatalf("rewrite: %+v", rr)
	}
	check := func(a Full) {
		t.Helper()
		got := StreamAll(t, a, 0)
		if len(got) != 3 || got[1].ID != id || got[1].Seq != seq || got[1].Content != "my key is [REDACTED]" ||
			got[1].Redacted == nil || got[0].Content != "one" || got[2].Content != "three" {
			t.Fatalf("after the rewrite: %+v", got)
		}
		wantCounts(t, a, 3, 0, 1)
		if rep := m.report(a.Verify(ctx)); !rep.OK() || rep.Turns != 3 {
			t.Fatalf("verify after the rewrite: %+v", rep)
		}
	}
	check(a)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	b := mustOpenFull(t, x)
	check(b)
	if r := MustAppend(t, b, engram.Turn{ID: id, Namespace: "default", Session: "s", Role: engram.RoleUser, Content: "x"}); !r[0].Duplicate || r[0].Seq != seq {
		t.Fatalf("re-send of the rewritten id: %+v", r)
	}
}

func testVerifyFindsDamage(t *testing.T, x Extended) {
	ctx, m := context.Background(), must{t}
	a := mustOpenFull(t, x)
	res := MustAppend(t, a, Turn("s", "one"), Turn("s", "two"), Turn("s", "three"))
	rep := m.report(a.Verify(ctx))
	if !rep.OK() || rep.Turns != 3 || rep.Lines != 3 {
		t.Fatalf("verify of a sound archive: %+v", rep)
	}
	x.Damage(t, res[1].Seq)
	rep = m.report(a.Verify(ctx))
	if len(rep.Problems) != 1 || rep.Turns != 2 || rep.Lines != 3 {
		t.Fatalf("verify of a damaged archive: %+v", rep)
	}
	p := rep.Problems[0]
	if p.Kind != archive.ProblemChecksum || !p.Damaged() || p.Seq != res[1].Seq || p.ID != res[1].ID || !errors.Is(p.Err, archive.ErrChecksum) {
		t.Fatalf("problem: %+v", p)
	}
}

func testNotify(t *testing.T, x Extended) {
	a := mustOpenFull(t, x)
	ch := a.Notify()
	select {
	case <-ch:
		t.Fatal("Notify closed before a commit")
	default:
	}
	res := MustAppend(t, a, Turn("s", "one"))
	<-ch // closed by the commit: the test hangs otherwise
	if a.LastSeq() < res[0].Seq {
		t.Fatalf("LastSeq %d after the wake, want %d", a.LastSeq(), res[0].Seq)
	}
	ch = a.Notify()
	dup := Turn("s", "one")
	dup.ID = res[0].ID
	MustAppend(t, a, dup)
	select {
	case <-ch:
		t.Fatal("Notify closed by a call that archived nothing")
	default:
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	<-ch // and by Close
}
