package palace

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	engram "github.com/engram-dev/engram"
)

// loadTurns reads turns from a JSONL file in testdata.
func loadTurns(tb testing.TB, name string) []engram.Turn {
	tb.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var turns []engram.Turn
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var t engram.Turn
		if err := json.Unmarshal(sc.Bytes(), &t); err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
		turns = append(turns, t)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return turns
}

func mustPut(tb testing.TB, db *DB, turns ...engram.Turn) {
	tb.Helper()
	if err := db.PutTurns(context.Background(), turns); err != nil {
		tb.Fatal(err)
	}
}

func TestPutTurns_Idempotent(t *testing.T) {
	db := MustOpenDB(t)
	ctx := context.Background()
	turns := loadTurns(t, "search.jsonl")
	mustPut(t, db, turns...)
	mustPut(t, db, turns...)
	mustPut(t, db, turns[3:5]...)

	// The same seq with other content is left as stored.
	changed := turns[0]
	changed.Content = "something else entirely"
	mustPut(t, db, changed)

	n, err := db.CountTurns(ctx, "")
	if err != nil || n != int64(len(turns)) {
		t.Fatalf("CountTurns = %d, %v; want %d", n, err, len(turns))
	}
	got, err := db.GetTurns(ctx, []string{turns[0].ID})
	if err != nil || len(got) != 1 || got[0].Content != turns[0].Content {
		t.Fatalf("GetTurns after replay = %+v, %v", got, err)
	}
	hits, err := db.SearchTurns(ctx, engram.TextQuery{Text: "outage"})
	if err != nil || len(hits) != 1 {
		t.Fatalf("replayed turn indexed %d times (err %v)", len(hits), err)
	}
	if hits, _ := db.SearchTurns(ctx, engram.TextQuery{Text: "entirely"}); len(hits) != 0 {
		t.Fatalf("ignored replay was indexed: %+v", hits)
	}
}

func TestPutTurns_Watermark(t *testing.T) {
	db := MustOpenDB(t)
	ctx := context.Background()
	check := func(want int64) {
		t.Helper()
		got, err := db.IndexedSeq(ctx)
		if err != nil || got != want {
			t.Fatalf("IndexedSeq = %d, %v; want %d", got, err, want)
		}
	}
	check(0)
	mustPut(t, db, testTurn(3, "c"), testTurn(1, "a"), testTurn(2, "b"))
	check(3)
	mustPut(t, db, testTurn(2, "b")) // a replay never moves it back
	check(3)
	mustPut(t, db, testTurn(10, "j"))
	check(10)
	if err := db.PutTurns(ctx, nil); err != nil {
		t.Fatal(err)
	}
	check(10)
}

func TestPutTurns_Invalid(t *testing.T) {
	db := MustOpenDB(t)
	ctx := context.Background()
	for _, tt := range []struct {
		name  string
		edit  func(*engram.Turn)
		field string
	}{
		{"no id", func(t *engram.Turn) { t.ID = "" }, "turns[1].id"},
		{"no namespace", func(t *engram.Turn) { t.Namespace = "" }, "turns[1].namespace"},
		{"zero seq", func(t *engram.Turn) { t.Seq = 0 }, "turns[1].seq"},
		{"negative seq", func(t *engram.Turn) { t.Seq = -4 }, "turns[1].seq"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bad := testTurn(2, "bad")
			tt.edit(&bad)
			err := db.PutTurns(ctx, []engram.Turn{testTurn(1, "good"), bad})
			if engram.ErrorCode(err) != engram.EINVALID || engram.ErrorField(err) != tt.field {
				t.Fatalf("PutTurns = %v (field %q), want EINVALID on %s", err, engram.ErrorField(err), tt.field)
			}
		})
	}
	if n, _ := db.CountTurns(ctx, ""); n != 0 {
		t.Fatalf("a rejected batch stored %d turns", n)
	}
}

// TestPutTurns_TimeOutOfRange: a turn with a time the palace cannot store
// (an archive line edited by hand) is skipped and recorded with the reason;
// the rest of its batch is stored and the watermark passes it.
func TestPutTurns_TimeOutOfRange(t *testing.T) {
	db := MustOpenDB(t)
	ctx := context.Background()
	late, early := testTurn(2, "late"), testTurn(3, "early")
	late.TS = time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)
	early.ReceivedAt = time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := db.PutTurns(ctx, []engram.Turn{testTurn(1, "good"), late, early, testTurn(4, "good too")}); err != nil {
		t.Fatal(err)
	}
	if n, _ := db.CountTurns(ctx, ""); n != 2 {
		t.Fatalf("%d turns stored, want the 2 good ones", n)
	}
	if seq, _ := db.IndexedSeq(ctx); seq != 4 {
		t.Fatalf("watermark %d, want 4", seq)
	}
	sk, err := db.TurnSkips(ctx, 10)
	skips := sk.Latest
	if err != nil || sk.Count != 2 || sk.Lost != 2 || len(skips) != 2 || skips[0].Seq != 3 || !strings.HasPrefix(skips[0].Reason, "received_at: time 1600-01-01") ||
		skips[1].Seq != 2 || !strings.HasPrefix(skips[1].Reason, "ts: time 2300-01-01") || skips[1].StoredSeq != 0 {
		t.Fatalf("engram.TurnSkips = %+v %v", sk, err)
	}
}

// TestPutTurns_IDStoredUnderAnotherSeq: a turn whose id the palace holds
// under another seq (the re-send of a turn whose archive line was damaged)
// is a duplicate: it is skipped and recorded, the rest of its batch is
// stored with their session units, and the watermark moves past it.
func TestPutTurns_IDStoredUnderAnotherSeq(t *testing.T) {
	db := MustOpenDB(t)
	ctx := context.Background()
	mustPut(t, db, testTurn(1, "first"))
	other := testTurn(7, "same id, other seq")
	other.ID = testTurn(1, "").ID
	if err := db.PutTurns(ctx, []engram.Turn{testTurn(2, "second"), other, testTurn(8, "eighth")}); err != nil {
		t.Fatalf("PutTurns with a re-sent id: %v, want the batch stored but that turn", err)
	}
	if n, _ := db.CountTurns(ctx, ""); n != 3 {
		t.Fatalf("%d turns stored, want 3 (the re-sent id once)", n)
	}
	if seq, _ := db.IndexedSeq(ctx); seq != 8 {
		t.Fatalf("watermark %d, want 8", seq)
	}
	got, err := db.GetTurns(ctx, []string{other.ID})
	if err != nil || len(got) != 1 || got[0].Seq != 1 || got[0].Content != "first" {
		t.Fatalf("the palace's copy of the id: %+v %v, want seq 1 unchanged", got, err)
	}
	sk, err := db.TurnSkips(ctx, 10)
	skips := sk.Latest
	if err != nil || sk.Count != 1 || sk.Lost != 0 || len(skips) != 1 || skips[0].Seq != 7 || skips[0].ID != other.ID || skips[0].StoredSeq != 1 || skips[0].At.IsZero() {
		t.Fatalf("engram.TurnSkips = %+v %v, want seq 7 of %s, stored under seq 1", sk, err, other.ID)
	}
	units, err := db.TurnUnits(ctx, []int64{1, 2, 7, 8})
	if err != nil {
		t.Fatal(err)
	}
	if len(units[2]) == 0 || len(units[8]) == 0 || len(units[7]) != 0 {
		t.Fatalf("session units by turn: %v, want seqs 2 and 8 in a unit, 7 in none", units)
	}
	// Replaying the range records nothing new and stores nothing twice.
	if err := db.PutTurns(ctx, []engram.Turn{testTurn(2, "second"), other, testTurn(8, "eighth")}); err != nil {
		t.Fatal(err)
	}
	if sk, _ := db.TurnSkips(ctx, 10); sk.Count != 1 {
		t.Fatalf("a replay recorded %d skips, want 1", sk.Count)
	}
	seqs, err := db.TurnSeqs(ctx, []string{other.ID, testTurn(8, "").ID, "nope"})
	if err != nil || len(seqs) != 2 || seqs[other.ID] != 1 || seqs[testTurn(8, "").ID] != 8 {
		t.Fatalf("TurnSeqs = %v %v", seqs, err)
	}
}

func TestGetTurns_RoundTrip(t *testing.T) {
	db := MustOpenDB(t)
	ctx := context.Background()
	full := engram.Turn{
		ID:        "01JTESTROUNDTRIP",
		Seq:       42,
		Namespace: "work",
		Session:   "sess-1",
		Role:      engram.RoleAssistant,
		Speaker:   "Zoë",
		Content:   "line one\nline two\t✓ 日本語",
		TS:        time.Date(2026, 5, 1, 14, 3, 0, 123456789, time.UTC),
		// Whitespace, key order, escapes and number spelling must survive.
		Meta:       json.RawMessage(`{ "b" : 1.50, "a":"\u00e9\"x\"", "nested": {"z":[1, 2 ,3]}, "n":null }`),
		ReceivedAt: time.Date(2026, 5, 1, 14, 3, 1, 987654321, time.UTC),
	}
	bare := engram.Turn{ID: "bare", Seq: 43, Namespace: "work", Session: "s", Role: engram.RoleUser, Content: "no meta, no times"}
	mustPut(t, db, full, bare)

	got, err := db.GetTurns(ctx, []string{"bare", "missing", full.ID, "bare"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("GetTurns returned %d turns, want 2", len(got))
	}
	if !reflect.DeepEqual(got[0], bare) {
		t.Errorf("bare turn:\n got %+v\nwant %+v", got[0], bare)
	}
	if !reflect.DeepEqual(got[1], full) {
		t.Errorf("full turn:\n got %+v\nwant %+v", got[1], full)
	}
	if string(got[1].Meta) != string(full.Meta) {
		t.Errorf("meta changed:\n got %s\nwant %s", got[1].Meta, full.Meta)
	}

	hits, err := db.SearchTurns(ctx, engram.TextQuery{Text: "line two"})
	if err != nil || len(hits) != 1 || string(hits[0].Turn.Meta) != string(full.Meta) {
		t.Fatalf("search lost the meta: %+v, %v", hits, err)
	}

	if got, err := db.GetTurns(ctx, nil); err != nil || len(got) != 0 {
		t.Fatalf("GetTurns(nil) = %v, %v", got, err)
	}
}

func TestGetTurns_ManyIDs(t *testing.T) {
	db := MustOpenDB(t)
	var turns []engram.Turn
	var ids []string
	for i := int64(1); i <= 1200; i++ {
		turns = append(turns, testTurn(i, "bulk"))
		ids = append(ids, testTurn(i, "").ID)
	}
	mustPut(t, db, turns...)
	got, err := db.GetTurns(context.Background(), ids)
	if err != nil || len(got) != len(ids) {
		t.Fatalf("GetTurns = %d turns, %v; want %d", len(got), err, len(ids))
	}
	for i, tu := range got {
		if tu.ID != ids[i] {
			t.Fatalf("got[%d] = %s, want %s", i, tu.ID, ids[i])
		}
	}
}

func TestCountTurnsAndStats(t *testing.T) {
	db := MustOpenDB(t)
	ctx := context.Background()
	st, err := db.Stats(ctx)
	if err != nil || st.Layers == nil || len(st.Layers) != 0 {
		t.Fatalf("Stats of an empty palace = %+v, %v", st, err)
	}
	mustPut(t, db, loadTurns(t, "search.jsonl")...)
	for ns, want := range map[string]int64{"": 15, "work": 13, "personal": 2, "nope": 0} {
		if n, err := db.CountTurns(ctx, ns); err != nil || n != want {
			t.Errorf("CountTurns(%q) = %d, %v; want %d", ns, n, err, want)
		}
	}
	st, err = db.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]int64{"work": {"turns": 13}, "personal": {"turns": 2}}
	if !reflect.DeepEqual(st.Layers, want) {
		t.Fatalf("Stats = %v, want %v", st.Layers, want)
	}
}

func TestTurnsAroundAndTimeRange(t *testing.T) {
	db := MustOpenDB(t)
	ctx := context.Background()
	base := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	var turns []engram.Turn
	for i := 0; i < 6; i++ {
		turns = append(turns, engram.Turn{ID: fmt.Sprintf("a%d", i), Seq: int64(2*i + 1), Namespace: "n", Session: "s1",
			Role: engram.RoleUser, Content: fmt.Sprintf("alpha message %d", i), TS: base.Add(time.Duration(i) * time.Hour)})
		turns = append(turns, engram.Turn{ID: fmt.Sprintf("b%d", i), Seq: int64(2*i + 2), Namespace: "n", Session: "s2",
			Role: engram.RoleUser, Content: fmt.Sprintf("alpha other %d", i), TS: base.Add(time.Duration(i) * time.Hour)})
	}
	if err := db.PutTurns(ctx, turns); err != nil {
		t.Fatal(err)
	}
	// a2 in session s1, and b0 (the first of s2) in the same lookup.
	around, err := db.TurnsAround(ctx, []engram.Turn{turns[4], turns[1]}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(around) != 2 {
		t.Fatalf("%d results for 2 turns", len(around))
	}
	before, after := around[0].Before, around[0].After
	ids := func(ts []engram.Turn) (out []string) {
		for _, t := range ts {
			out = append(out, t.ID)
		}
		return out
	}
	if got := ids(before); !slices.Equal(got, []string{"a0", "a1"}) {
		t.Errorf("before = %v", got)
	}
	if got := ids(after); !slices.Equal(got, []string{"a3", "a4"}) {
		t.Errorf("after = %v", got)
	}
	if got := ids(around[1].After); len(around[1].Before) != 0 || !slices.Equal(got, []string{"b1", "b2"}) {
		t.Errorf("b0: before %v, after %v", ids(around[1].Before), got)
	}
	if a, _ := db.TurnsAround(ctx, turns[:1], 3); len(a) != 1 || len(a[0].Before) != 0 || len(a[0].After) != 3 {
		t.Errorf("first turn: %+v", a)
	}
	if _, err := db.TurnsAround(ctx, turns[:1], -1); engram.ErrorCode(err) != engram.EINVALID {
		t.Errorf("n < 0: %v", err)
	}
	if a, err := db.TurnsAround(ctx, nil, 2); err != nil || len(a) != 0 {
		t.Errorf("no turns: %v, %v", a, err)
	}

	hits, err := db.SearchTurns(ctx, engram.TextQuery{Text: "alpha", Limit: 20, From: base.Add(2 * time.Hour), To: base.Add(4 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 4 {
		t.Fatalf("time range: %d hits, want 4", len(hits))
	}
	for _, h := range hits {
		if h.Turn.TS.Before(base.Add(2*time.Hour)) || !h.Turn.TS.Before(base.Add(4*time.Hour)) {
			t.Errorf("hit outside the range: %v", h.Turn.TS)
		}
	}
}

func TestOptimize(t *testing.T) {
	db := MustOpenDB(t)
	ctx := context.Background()
	if err := db.PutTurns(ctx, []engram.Turn{{ID: "x", Seq: 1, Namespace: "n", Session: "s", Role: engram.RoleUser,
		Content: "optimise the kafka consumer 日本語の会議", TS: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	if err := db.Optimize(ctx); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"kafka", "consum", "会議"} {
		if hits, err := db.SearchTurns(ctx, engram.TextQuery{Text: q}); err != nil || len(hits) != 1 {
			t.Errorf("after optimize, %q: %d hits, %v", q, len(hits), err)
		}
	}
}
