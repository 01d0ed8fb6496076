package archive_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/internal/filetest"
	"github.com/engram-dev/engram/internal/testutil"
)

// damage flips the last letter of each of words (quoted strings) in the
// day file at path, so that the checksum of its line no longer matches, or,
// with broken, makes the line no JSON at all.
func damage(tb testing.TB, path string, broken bool, words ...string) {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	for _, w := range words {
		i := bytes.Index(data, []byte(w))
		if i < 0 {
			tb.Fatalf("%q not in %s", w, path)
		}
		if broken {
			j := bytes.LastIndexByte(data[:i], '\n') + 1 // the start of its line
			data[j] = '#'
		} else {
			data[i+len(w)-2] ^= 0x01
		}
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		tb.Fatal(err)
	}
}

// TestVerifyDamagedSeqs: Verify names the seq each damaged line held,
// from the gap between the readable lines around it, or from what the line
// still reads as; unknown when neither tells.
func TestVerifyDamagedSeqs(t *testing.T) {
	dir := t.TempDir()
	clk := testutil.NewClock(day1)
	a := MustOpen(t, dir, archive.Options{Now: clk.Now}, false)
	mustAppend(t, a, turn("s", "one"), turn("s", "two"), turn("s", "three"), turn("s", "four"),
		turn("s", "five"), turn("s", "six"), turn("s", "seven"))
	ids := streamAll(t, a, 0)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	path := dayFile(dir, "2026-05-01")
	damage(t, path, false, `"two"`, `"three"`) // a gap of two, two lines: seqs 2 and 3
	damage(t, path, true, `"five"`)            // no JSON: seq 5 from the gap
	damage(t, path, true, `"seven"`)           // the last line, no JSON: unknown
	b := MustOpen(t, dir, archive.Options{Now: clk.Now}, false)
	rep, err := b.Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		line int
		seq  int64
		id   string
	}{{2, 2, ids[1].ID}, {3, 3, ids[2].ID}, {5, 5, ""}, {7, 0, ""}}
	if len(rep.Problems) != len(want) {
		t.Fatalf("problems %v", rep.Problems)
	}
	for i, w := range want {
		p := rep.Problems[i]
		if !p.Damaged() || p.Line != w.line || p.Seq != w.seq || p.ID != w.id {
			t.Errorf("problem %d: line %d seq %d id %q (%s), want line %d seq %d id %q", i, p.Line, p.Seq, p.ID, p, w.line, w.seq, w.id)
		}
	}
}

// TestRepair writes damaged lines again from the copies fix returns and
// leaves the others; the archive then reads clean, the old lines are kept
// in quarantine, and a running archive's lock refuses a repair.
func TestRepair(t *testing.T) {
	dir := t.TempDir()
	clk := testutil.NewClock(day1)
	a := MustOpen(t, dir, archive.Options{Now: clk.Now}, false)
	mustAppend(t, a, turn("s", "alpha"), turn("s", "bravo"), turn("s", "charlie"), turn("s", "delta"))
	copies := streamAll(t, a, 0) // what the palace would hold
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	path := dayFile(dir, "2026-05-01")
	damage(t, path, false, `"bravo"`, `"delta"`)

	held, err := archive.Open(dir, archive.Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	fix := func(p archive.Problem) (engram.Turn, bool, error) {
		if p.Seq == 2 { // the palace holds bravo, not delta
			return copies[1], true, nil
		}
		return engram.Turn{}, false, nil
	}
	if _, err := archive.Repair(context.Background(), dir, archive.Options{Logger: quietLogger()}, fix); engram.ErrorCode(err) != engram.ELOCKED {
		t.Fatalf("Repair while the archive is open: %v, want ELOCKED", err)
	}
	held.Close()

	rep, err := archive.Repair(context.Background(), dir, archive.Options{Logger: quietLogger(), Now: clk.Now}, fix)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Repaired) != 1 || rep.Repaired[0].Seq != 2 || len(rep.Left) != 1 || rep.Left[0].Line != 4 || len(rep.Kept) != 1 {
		t.Fatalf("report %+v", rep)
	}
	kept, err := os.ReadFile(rep.Kept[0])
	if err != nil || !strings.Contains(string(kept), "2026-05-01.jsonl:2: ") || !strings.Contains(string(kept), `"bravn"`) {
		t.Fatalf("quarantined copy %q %v", kept, err)
	}

	b := MustOpen(t, dir, archive.Options{Now: clk.Now}, false)
	if s := b.Stats(); s.CorruptLines != 1 || s.Turns != 3 {
		t.Fatalf("after the repair: %+v, want delta still damaged, bravo back", s)
	}
	got := streamAll(t, b, 0)
	if len(got) != 3 || got[1].ID != copies[1].ID || got[1].Seq != 2 || got[1].Content != "bravo" || !got[1].ReceivedAt.Equal(copies[1].ReceivedAt) {
		t.Fatalf("turns after the repair: %+v", got)
	}
	// A repaired id is known again: a re-send is a duplicate.
	if res := mustAppend(t, b, engram.Turn{ID: copies[1].ID, Namespace: "default", Session: "s", Role: engram.RoleUser,
		Content: "bravo", TS: day1}); !res[0].Duplicate || res[0].Seq != 2 {
		t.Fatalf("re-send of the repaired id: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(dir, "quarantine")); err != nil {
		t.Fatal(err)
	}
}

// TestRewriteDamaged: the damaged lines of turns whose copies another
// store kept are written again as the edit makes them (here a tombstone
// and a redacted turn), readable and counted again, with no copy of the
// damaged line kept; a turn whose line is readable is Unknown to it.
func TestRewriteDamaged(t *testing.T) {
	dir := t.TempDir()
	clk := testutil.NewClock(day1)
	a := MustOpen(t, dir, archive.Options{Now: clk.Now}, false)
	mustAppend(t, a, turn("s", "one"), turn("s", "secret two"), turn("s", "secret three"), turn("s", "four"))
	kept := streamAll(t, a, 0) // the copies another store keeps
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	path := dayFile(dir, "2026-05-01")
	damage(t, path, false, `"secret two"`, `"secret three"`)
	b := MustOpen(t, dir, archive.Options{Now: clk.Now}, false)
	if b.Known(kept[1].ID) || b.Stats().CorruptLines != 2 {
		t.Fatalf("before: known %v, stats %+v", b.Known(kept[1].ID), b.Stats())
	}
	ctx := context.Background()
	res, err := b.RewriteDamaged(ctx, []engram.Turn{kept[1], kept[3]}, func(t engram.Turn) (engram.Turn, bool) {
		return archive.Tombstone(t, engram.Forgotten{At: day1}), true
	})
	if err != nil || len(res.Changed) != 1 || !res.Changed[0].Damaged || res.Changed[0].New.ID != kept[1].ID ||
		len(res.Unknown) != 1 || res.Unknown[0] != kept[3].ID || res.Files != 1 {
		t.Fatalf("forget of a damaged line: %+v %v", res, err)
	}
	res, err = b.RewriteDamaged(ctx, []engram.Turn{kept[2]}, func(t engram.Turn) (engram.Turn, bool) {
		t, n := t.RedactSpans([]string{"secret"}, "[x]")
		return t, n > 0
	})
	if err != nil || len(res.Changed) != 1 || res.Changed[0].New.Content != "[x] three" {
		t.Fatalf("redaction of a damaged line: %+v %v", res, err)
	}
	if !b.Known(kept[1].ID) || !b.Forgotten(kept[1].ID) || !b.Known(kept[2].ID) || b.Forgotten(kept[2].ID) {
		t.Errorf("after: the turns are not known as they are now")
	}
	if st := b.Stats(); st.CorruptLines != 0 || st.Turns != 3 || st.Forgotten != 1 {
		t.Errorf("stats after: %+v", st)
	}
	if rep, err := b.Verify(ctx); err != nil || !rep.OK() || rep.Turns != 3 || rep.Forgotten != 1 {
		t.Errorf("verify after: %+v %v", rep, err)
	}
	if got := streamAll(t, b, 0); len(got) != 4 || got[2].Content != "[x] three" || !got[1].IsTombstone() {
		t.Errorf("stream after: %+v", got)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	filetest.MustHoldNowhere(t, dir, "secret")
}
