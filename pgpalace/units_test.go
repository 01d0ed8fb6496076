package pgpalace

import (
	"context"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	engram "github.com/engram-dev/engram"
)

// unitTurns are the search tests' turns and two long sessions: one longer
// than engram.UnitMaxTurns, one of turns long enough to fill
// engram.UnitMaxBytes first.
func unitTurns(t *testing.T) []engram.Turn {
	turns := searchTurns(t)
	at := time.Date(2026, 5, 2, 8, 0, 0, 0, time.UTC)
	for i := range 150 {
		seq := int64(len(turns) + 1)
		tu := engram.Turn{ID: fmt.Sprintf("long%d", i), Seq: seq, Namespace: "work", Session: "long", Role: engram.RoleAssistant,
			Content: fmt.Sprintf("step %d of the migration runbook: check the replica lag", i), TS: at.Add(time.Duration(i) * time.Minute)}
		if i%2 == 0 {
			tu.Speaker = "Dana"
		}
		if i%3 == 0 {
			tu.Session = "big"
			tu.Content = strings.Repeat("a pasted log line with the replica name ", 120) // clipped to UnitTurnBytes
		}
		turns = append(turns, tu)
	}
	// A session whose part is near its bytes, by a speaker whose name has
	// more bytes than characters (cjkTurn).
	for i := range 15 {
		turns = append(turns, cjkTurn(int64(len(turns)+1), fmt.Sprintf("cjk%d", i), 2100))
	}
	return turns
}

// cjkTurn is a turn of session "cjk" by 王小明 with n bytes of content.
func cjkTurn(seq int64, id string, n int) engram.Turn {
	return engram.Turn{ID: id, Seq: seq, Namespace: "work", Session: "cjk", Role: engram.RoleUser, Speaker: "王小明",
		Content: strings.Repeat("x", n), TS: time.Date(2026, 5, 3, 8, 0, int(seq%60), 0, time.UTC)}
}

// TestUnits_AsSQLite checks that this palace cuts sessions into the same
// parts as package palace's SQLite file, with the same ids, turns, times
// and text, finds and scores them alike, and keeps them alike through a
// forget and a redaction.
func TestUnits_AsSQLite(t *testing.T) {
	ctx := t.Context()
	turns := unitTurns(t)
	pg, lite := bothPalaces(t, turns, 40)
	var seqs []int64
	keys := map[engram.SessionKey]bool{}
	for _, tu := range turns {
		seqs = append(seqs, tu.Seq)
		keys[engram.SessionKey{Namespace: tu.Namespace, Session: tu.Session}] = true
	}
	type unitIndex interface {
		engram.UnitIndex
	}
	compare := func(when string) {
		t.Helper()
		for _, c := range []struct {
			what string
			read func(unitIndex) (any, error)
		}{
			{"UnitsSince", func(p unitIndex) (any, error) { return p.UnitsSince(ctx, 0, 100_000) }},
			{"TurnUnits", func(p unitIndex) (any, error) { return p.TurnUnits(ctx, seqs) }},
			{"SessionStarts", func(p unitIndex) (any, error) { return p.SessionStarts(ctx, slices.Collect(maps.Keys(keys))) }},
			{"UnitTurnIDs", func(p unitIndex) (any, error) {
				docs, err := p.UnitsSince(ctx, 0, 100_000)
				ids := make([]string, len(docs))
				for i, d := range docs {
					ids[i] = d.ID
				}
				if err != nil {
					return nil, err
				}
				return p.UnitTurnIDs(ctx, append(ids, "ses-unknown"))
			}},
		} {
			sameRead(t, when, c.what, unitIndex(pg), unitIndex(lite), c.read)
		}
		docs, _ := lite.UnitsSince(ctx, 0, 100_000)
		if len(docs) < 5 {
			t.Fatalf("%s: only %d units", when, len(docs))
		}
		var ids []string
		for _, d := range docs {
			ids = append(ids, d.ID)
		}
		for _, text := range []string{"replica lag", "runbook", "plover quandle", "会议", "pasted log", "kafka"} {
			for _, kind := range []string{"", engram.UnitSession} {
				q := engram.TextQuery{Text: text, Limit: 5}
				want, err := lite.SearchUnits(ctx, q, kind)
				if err != nil {
					t.Fatal(err)
				}
				got, err := pg.SearchUnits(ctx, q, kind)
				if err != nil || !sameUnitHits(got, want) {
					t.Errorf("%s: SearchUnits(%q, %q) = %v, %v\nwant %v", when, text, kind, got, err, want)
				}
				ws, err := lite.ScoreUnits(ctx, q, ids, kind)
				if err != nil {
					t.Fatal(err)
				}
				gs, err := pg.ScoreUnits(ctx, q, ids, kind)
				if err != nil || !sameScores(gs, ws) {
					t.Errorf("%s: ScoreUnits(%q, %q) = %v, %v\nwant %v", when, text, kind, gs, err, ws)
				}
			}
		}
	}
	compare("stored")

	// A forget of turns here and there and of a whole session, then a
	// redaction of turns of a long session.
	var forget []engram.ForgetTurn
	for i, tu := range turns {
		if (i%7 == 0 && tu.Session != "cjk") || tu.Session == "s3" || tu.ID == "cjk0" {
			forget = append(forget, engram.ForgetTurn{ID: tu.ID, Seq: int64(len(turns) + i + 1)})
		}
	}
	var red []engram.Turn
	for _, tu := range turns[len(turns)-20:] {
		if !slices.ContainsFunc(forget, func(f engram.ForgetTurn) bool { return f.ID == tu.ID }) {
			tu.Content = strings.ReplaceAll(tu.Content, "replica", "[redacted]")
			red = append(red, tu)
		}
	}
	pres, err := pg.ForgetTurns(ctx, forget, time.Now(), nil)
	if err != nil {
		t.Fatal(err)
	}
	lres, err := lite.ForgetTurns(ctx, forget, time.Now(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if pres.Turns != lres.Turns || pres.Units != lres.Units || !reflect.DeepEqual(pres.Removed, lres.Removed) {
		t.Errorf("ForgetTurns = %+v; the SQLite palace's %+v", pres, lres)
	}
	prr, err := pg.RedactTurns(ctx, red, []string{"replica"}, "[redacted]")
	if err != nil {
		t.Fatal(err)
	}
	lrr, err := lite.RedactTurns(ctx, red, []string{"replica"}, "[redacted]")
	if err != nil {
		t.Fatal(err)
	}
	if prr.Turns != lrr.Turns || prr.Units != lrr.Units {
		t.Errorf("RedactTurns = %+v; the SQLite palace's %+v", prr, lrr)
	}
	compare("after a forget and a redaction")

	// The cjk part counted again after its forget holds 14 turns, 28,756
	// bytes as package palace counts them (the speaker in characters):
	// 2,060 more join it, and then 1,912 more still do, where the
	// speaker counted in bytes (28,840) would have cut a new part.
	next := int64(len(turns) + len(turns) + 10)
	more := []engram.Turn{cjkTurn(next, "cjk-a", 2100), cjkTurn(next+1, "cjk-b", 1900)}
	for _, p := range []interface {
		PutTurns(context.Context, []engram.Turn) error
	}{pg, lite} {
		if err := p.PutTurns(ctx, more); err != nil {
			t.Fatal(err)
		}
	}
	seqs = append(seqs, next, next+1)
	compare("after more turns")

	// A turn archived again after its forget that starts a new part while
	// the part it began keeps other turns: the part's second id.
	at := time.Date(2026, 5, 4, 8, 0, 0, 0, time.UTC)
	again := func(seq int64, id string) engram.Turn {
		seqs = append(seqs, seq)
		return engram.Turn{ID: id, Seq: seq, Namespace: "work", Session: "again", Role: engram.RoleUser, Content: "x " + id,
			TS: at.Add(time.Duration(seq) * time.Second)}
	}
	var full []engram.Turn
	for i := range engram.UnitMaxTurns {
		full = append(full, again(next+10+int64(i), fmt.Sprintf("again%d", i)))
	}
	filler, back := again(next+201, "again-filler"), again(next+202, "again0")
	for _, p := range []interface {
		PutTurns(context.Context, []engram.Turn) error
		ForgetTurns(context.Context, []engram.ForgetTurn, time.Time, engram.SceneRemaker) (engram.ForgetResult, error)
	}{pg, lite} {
		if err := p.PutTurns(ctx, full); err != nil {
			t.Fatal(err)
		}
		if _, err := p.ForgetTurns(ctx, []engram.ForgetTurn{{ID: "again0", Seq: next + 200}}, at, nil); err != nil {
			t.Fatal(err)
		}
		if err := p.PutTurns(ctx, []engram.Turn{filler}); err != nil { // the part is full again
			t.Fatal(err)
		}
		if err := p.PutTurns(ctx, []engram.Turn{back}); err != nil {
			t.Fatalf("PutTurns of a turn archived again: %v", err)
		}
	}
	compare("after a turn archived again")
}

func sameUnitHits(a, b []engram.UnitHit) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !reflect.DeepEqual(a[i].Unit, b[i].Unit) || math.Abs(a[i].Score-b[i].Score) > 1e-12*math.Max(1, b[i].Score) {
			return false
		}
	}
	return true
}

// sameScores compares ScoreUnits' answers, which come in no order.
func sameScores(a, b []engram.UnitScore) bool {
	sortScores := func(s []engram.UnitScore) {
		slices.SortFunc(s, func(x, y engram.UnitScore) int { return strings.Compare(x.Kind+x.ID, y.Kind+y.ID) })
	}
	sortScores(a)
	sortScores(b)
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].ID != b[i].ID || a[i].Kind != b[i].Kind || math.Abs(a[i].Score-b[i].Score) > 1e-12*math.Max(1, b[i].Score) {
			return false
		}
	}
	return true
}
