// Package palacetest is the conformance suite of a palace's roles: what
// every palace (package palace's SQLite file, package pgpalace's
// PostgreSQL tables) must do alike, so that the engine holds either. A
// palace's tests call Run with a way to make an empty one. It grows with
// the roles a second palace implements. Only tests import it.
package palacetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/scheduler"
)

// Palace is what the suite checks: the turns as the indexer stores them,
// read back by id, seq and session and around a turn and counted
// (engram.TurnIndex, TurnLookup; searches are compared between palaces by
// package pgpalace's tests),
// the forgotten ids their tombstones record, and the jobs' watermarks and
// skipped ranges (engram.WorkerMarks, Skip), the scheduled jobs' state
// (JobStates), the scenes, the personas, the graph, the memories and
// their corrections.
type Palace interface {
	engram.TurnIndex
	// The two steps of PutTurns (pipeline.SplitIndex).
	PutTurnsSearchable(ctx context.Context, turns []engram.Turn) error
	IndexSecondary(ctx context.Context, seq int64, limit int, stop func() bool) (done bool, err error)
	SecondarySeq(ctx context.Context) (int64, error)
	ForgottenIDs(ctx context.Context, ids []string) (map[string]bool, error)
	ForgetTurns(ctx context.Context, turns []engram.ForgetTurn, at time.Time, remake engram.SceneRemaker) (engram.ForgetResult, error)
	ForgottenLeft(ctx context.Context, limit int) ([]string, error)
	RedactTurns(ctx context.Context, turns []engram.Turn, spans []string, marker string) (engram.RedactResult, error)
	Skip(ctx context.Context, worker string, from, to int64, reason string) error
	engram.TurnLookup
	engram.WorkerMarks
	JobStates() scheduler.Store
	// The scenes (engram.LayerStore's and LayerIndex's).
	PutScenes(ctx context.Context, worker string, scenes []engram.SceneWrite, throughSeq int64) error
	OpenScenes(ctx context.Context, keys []engram.SessionKey) (map[engram.SessionKey][]byte, error)
	ScenesSince(ctx context.Context, after int64, limit int) ([]engram.Scene, error)
	GetScenes(ctx context.Context, ids []string) ([]engram.Scene, error)
	// The personas.
	ApplyFacets(ctx context.Context, worker string, updates []engram.FacetUpdate, throughSeq int64) error
	Persona(ctx context.Context, namespace, speaker string) ([]engram.Persona, error)
	ResetPersonas(ctx context.Context, worker string) error
	// The graph.
	ApplyTriples(ctx context.Context, worker string, triples []engram.Triple, throughSeq int64) error
	Graph(ctx context.Context, q engram.GraphQuery) (engram.GraphResult, error)
	// The memories and the corrections.
	PutMemories(ctx context.Context, worker string, mems []engram.Memory, throughSeq int64) (engram.MemoryResult, error)
	GetMemories(ctx context.Context, ids []string) ([]engram.Memory, error)
	ApplyCorrections(ctx context.Context, cs []engram.Correction) (int, error)
	MemoryToCorrect(ctx context.Context, id string) (engram.Memory, error)
}

// Run runs the suite. fresh makes a new, empty palace for one subtest and
// closes it when the subtest ends.
func Run(t *testing.T, fresh func(t *testing.T) Palace) {
	for _, c := range []struct {
		name string
		fn   func(t *testing.T, p Palace)
	}{
		{"RoundTrip", testRoundTrip},
		{"Replay", testReplay},
		{"Secondary", testSecondary},
		{"DuplicateID", testDuplicateID},
		{"UnstorableTime", testUnstorableTime},
		{"Tombstones", testTombstones},
		{"Forget", testForget},
		{"Redact", testRedact},
		{"BadInput", testBadInput},
		{"TurnIDs", testTurnIDs},
		{"TurnsAround", testTurnsAround},
		{"Watermarks", testWatermarks},
		{"Skips", testSkips},
		{"JobStates", testJobStates},
		{"ConcurrentPuts", testConcurrentPuts},
		{"Scenes", testScenes},
		{"Personas", testPersonas},
		{"Graph", testGraph},
		{"Memories", testMemories},
	} {
		t.Run(c.name, func(t *testing.T) { c.fn(t, fresh(t)) })
	}
}

// base is the time of the suite's turns: a whole second, so that a turn
// reads back equal to the nanosecond in every palace.
var base = time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)

// turn makes a stored turn of the suite: seq, id "t<seq>", minute seq of
// base.
func turn(seq int64, ns, session, speaker, content string) engram.Turn {
	return engram.Turn{
		ID: fmt.Sprintf("t%d", seq), Seq: seq, Namespace: ns, Session: session, Role: engram.RoleUser,
		Speaker: speaker, Content: content, TS: base.Add(time.Duration(seq) * time.Minute),
		ReceivedAt: base.Add(time.Duration(seq)*time.Minute + 123456789),
	}
}

// tombstone is the archive's record that id was forgotten, at seq.
func tombstone(id string, seq int64) engram.Turn {
	return engram.Turn{ID: id, Seq: seq, ReceivedAt: base, Forgotten: &engram.Forgotten{At: base.Add(time.Hour)}}
}

func put(t *testing.T, p Palace, turns ...engram.Turn) {
	t.Helper()
	if err := p.PutTurns(t.Context(), turns); err != nil {
		t.Fatalf("PutTurns: %v", err)
	}
}

func ids(turns []engram.Turn) []string {
	out := make([]string, len(turns))
	for i, t := range turns {
		out[i] = t.ID
	}
	return out
}

func wantIndexed(t *testing.T, p Palace, want int64) {
	t.Helper()
	if got, err := p.IndexedSeq(t.Context()); err != nil || got != want {
		t.Fatalf("IndexedSeq = %d, %v; want %d", got, err, want)
	}
}

func testRoundTrip(t *testing.T, p Palace) {
	ctx := t.Context()
	a := turn(1, "ns", "s1", "Ana", "we chose the blue tent")
	a.Meta = json.RawMessage(`{"source":"chat","n":1}`)
	b := turn(2, "ns", "s1", "Ben", "fine by me")
	b.Role = engram.RoleAssistant
	c := turn(3, "other", "s9", "", "a turn of another namespace, with a NUL \x00 and a bell \a in it")
	c.TS = time.Time{} // no time: stored, and read back, without one
	put(t, p, a, b, c)
	wantIndexed(t, p, 3)

	got, err := p.GetTurns(ctx, []string{"t3", "missing", "t1", "t2"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []engram.Turn{c, a, b}; !reflect.DeepEqual(got, want) {
		t.Fatalf("GetTurns =\n%+v\nwant (ids in the order asked, unknown skipped)\n%+v", got, want)
	}
	if got, err := p.GetTurns(ctx, nil); err != nil || len(got) != 0 {
		t.Fatalf("GetTurns(nil) = %v, %v", got, err)
	}
	if got, ok, err := p.TurnAt(ctx, 2); err != nil || !ok || !reflect.DeepEqual(got, b) {
		t.Fatalf("TurnAt(2) = %+v, %v, %v; want %+v", got, ok, err, b)
	}
	if _, ok, err := p.TurnAt(ctx, 99); err != nil || ok {
		t.Fatalf("TurnAt(99) = _, %v, %v; want not found", ok, err)
	}
	seqs, err := p.TurnSeqs(ctx, []string{"t2", "t3", "nope"})
	if err != nil || !reflect.DeepEqual(seqs, map[string]int64{"t2": 2, "t3": 3}) {
		t.Fatalf("TurnSeqs = %v, %v", seqs, err)
	}
	for ns, want := range map[string]int64{"": 3, "ns": 2, "other": 1, "none": 0} {
		if n, err := p.CountTurns(ctx, ns); err != nil || n != want {
			t.Errorf("CountTurns(%q) = %d, %v; want %d", ns, n, err, want)
		}
	}
	st, err := p.Stats(ctx)
	if err != nil || st.Layers["ns"]["turns"] != 2 || st.Layers["other"]["turns"] != 1 {
		t.Errorf("Stats = %+v, %v; want 2 turns in ns, 1 in other", st, err)
	}
}

func testReplay(t *testing.T, p Palace) {
	batch := []engram.Turn{turn(1, "ns", "s", "Ana", "one"), turn(2, "ns", "s", "Ben", "two")}
	put(t, p, batch...)
	put(t, p, batch...) // a replayed range of the archive: harmless
	if n, err := p.CountTurns(t.Context(), ""); err != nil || n != 2 {
		t.Fatalf("CountTurns after a replay = %d, %v; want 2", n, err)
	}
	if sk, err := p.TurnSkips(t.Context(), 10); err != nil || sk.Count != 0 {
		t.Fatalf("TurnSkips after a replay = %+v, %v; want none: a replay is no duplicate", sk, err)
	}
	put(t, p, turn(1, "ns", "s", "Ana", "one")) // an older batch: the watermark stays
	wantIndexed(t, p, 2)
}

func testSecondary(t *testing.T, p Palace) {
	ctx := t.Context()
	var turns []engram.Turn
	for seq := int64(1); seq <= 9; seq++ {
		turns = append(turns, turn(seq, "ns", "s", "Ana", fmt.Sprintf("turn %d of the KafkaConsumer thread", seq)))
	}
	if err := p.PutTurnsSearchable(ctx, turns[:6]); err != nil {
		t.Fatal(err)
	}
	wantIndexed(t, p, 6)
	if hits, err := p.SearchTurns(ctx, engram.TextQuery{Text: "thread", Limit: 10}); err != nil || len(hits) != 6 {
		t.Fatalf("a keyword search after the first step finds %d turns (%v); want 6", len(hits), err)
	}
	steps := 0
	for done := false; !done; steps++ {
		var err error
		if done, err = p.IndexSecondary(ctx, 6, 4, nil); err != nil {
			t.Fatal(err)
		}
		if steps > 6 {
			t.Fatal("IndexSecondary is never done")
		}
	}
	if seq, err := p.SecondarySeq(ctx); err != nil || seq != 6 {
		t.Fatalf("SecondarySeq = %d, %v; want 6", seq, err)
	}
	put(t, p, turns[6:]...) // PutTurns: both steps
	if seq, err := p.SecondarySeq(ctx); err != nil || seq != 9 {
		t.Fatalf("SecondarySeq after PutTurns = %d, %v; want 9", seq, err)
	}
	// The substring stage reads what the second step wrote.
	if hits, err := p.SearchTurns(ctx, engram.TextQuery{Text: "consumer", Limit: 20}); err != nil || len(hits) != 9 {
		t.Fatalf("a substring search finds %d turns (%v); want 9", len(hits), err)
	}
}

func testDuplicateID(t *testing.T, p Palace) {
	ctx := t.Context()
	first := turn(1, "ns", "s", "Ana", "the first copy")
	again := turn(4, "ns", "s", "Ana", "the re-sent copy")
	again.ID = first.ID
	put(t, p, first, turn(2, "ns", "s", "Ben", "between"), again)
	wantIndexed(t, p, 4)
	sk, err := p.TurnSkips(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if sk.Count != 1 || sk.Lost != 0 || len(sk.Latest) != 1 {
		t.Fatalf("TurnSkips = %+v; want one duplicate, none lost", sk)
	}
	if s := sk.Latest[0]; s.Seq != 4 || s.ID != first.ID || s.StoredSeq != 1 || s.Reason == "" || s.At.IsZero() {
		t.Fatalf("the skip = %+v; want seq 4 of %s, stored under seq 1, with a reason and a time", s, first.ID)
	}
	if got, _ := p.GetTurns(ctx, []string{first.ID}); len(got) != 1 || got[0].Content != first.Content {
		t.Fatalf("GetTurns(%s) = %+v; want the first copy", first.ID, got)
	}
}

func testUnstorableTime(t *testing.T, p Palace) {
	ctx := t.Context()
	far := turn(2, "ns", "s", "Ana", "a line edited by hand")
	far.TS = time.Date(2999, 1, 1, 0, 0, 0, 0, time.UTC) // past int64 nanoseconds
	put(t, p, turn(1, "ns", "s", "Ana", "fine"), far, turn(3, "ns", "s", "Ben", "fine too"))
	wantIndexed(t, p, 3)
	if n, _ := p.CountTurns(ctx, ""); n != 2 {
		t.Fatalf("CountTurns = %d; want 2: the rest of the batch is stored", n)
	}
	sk, err := p.TurnSkips(ctx, -1)
	if err != nil || sk.Count != 1 || sk.Lost != 1 || len(sk.Latest) != 1 || sk.Latest[0].Seq != 2 || sk.Latest[0].StoredSeq != 0 {
		t.Fatalf("TurnSkips(-1) = %+v, %v; want seq 2, lost", sk, err)
	}
	if sk, err := p.TurnSkips(ctx, 0); err != nil || sk.Count != 1 || len(sk.Latest) != 0 {
		t.Fatalf("TurnSkips(0) = %+v, %v; want the count alone", sk, err)
	}
}

func testTombstones(t *testing.T, p Palace) {
	ctx := t.Context()
	put(t, p, turn(1, "ns", "s", "Ana", "kept"), tombstone("t2", 5))
	wantIndexed(t, p, 5)
	// t2 read before its forget (a stream that began earlier): not stored.
	put(t, p, turn(2, "ns", "s", "Ana", "forgotten"))
	if got, _ := p.GetTurns(ctx, []string{"t2"}); len(got) != 0 {
		t.Fatalf("a turn read before its forget was stored: %+v", got)
	}
	gone, err := p.ForgottenIDs(ctx, []string{"t1", "t2", "x"})
	if err != nil || !reflect.DeepEqual(gone, map[string]bool{"t2": true}) {
		t.Fatalf("ForgottenIDs = %v, %v; want t2", gone, err)
	}
	// Archived again after its forget (resurrected): stored.
	back := turn(7, "ns", "s", "Ana", "said again")
	back.ID = "t2"
	put(t, p, back)
	if got, _ := p.GetTurns(ctx, []string{"t2"}); len(got) != 1 || got[0].Seq != 7 {
		t.Fatalf("a resurrected turn = %+v; want it stored under seq 7", got)
	}
	if gone, _ := p.ForgottenIDs(ctx, []string{"t2"}); gone["t2"] {
		t.Fatal("a resurrected id is still recorded as forgotten")
	}
	if sk, _ := p.TurnSkips(ctx, 10); sk.Count != 0 {
		t.Fatalf("TurnSkips = %+v; a forgotten turn is no skip", sk)
	}
	// In one batch: forgotten, archived again, forgotten again.
	again := turn(11, "ns", "s", "Ana", "said once more")
	again.ID = "x"
	put(t, p, tombstone("x", 10), again, tombstone("x", 12))
	if got, _ := p.GetTurns(ctx, []string{"x"}); len(got) != 1 || got[0].Seq != 11 {
		t.Fatalf("a turn archived again between two tombstones of one batch = %+v; want it stored under seq 11", got)
	}
	if gone, _ := p.ForgottenIDs(ctx, []string{"x"}); !gone["x"] {
		t.Fatal("the batch's last tombstone is not recorded")
	}
	late := turn(12, "ns", "s", "Ana", "read before the last forget")
	late.ID, late.Seq = "x", 12
	put(t, p, late) // the archive replayed: at the tombstone's seq, not stored again
	if got, _ := p.GetTurns(ctx, []string{"x"}); len(got) != 1 || got[0].Seq != 11 {
		t.Fatalf("after a replay, x = %+v; want it still under seq 11", got)
	}
}

func testForget(t *testing.T, p Palace) {
	ctx := t.Context()
	var turns []engram.Turn
	for seq := int64(1); seq <= 5; seq++ {
		turns = append(turns, turn(seq, "ns", "s", "Ana", fmt.Sprintf("the lighthouse keeper's note %d", seq)))
	}
	dup := turn(6, "ns", "s", "Ana", "a copy")
	dup.ID = "t2" // a skipped duplicate of t2: it goes with t2
	put(t, p, append(turns, dup)...)
	res, err := p.ForgetTurns(ctx, []engram.ForgetTurn{{ID: "t2", Seq: 8}, {ID: "t4", Seq: 9}, {ID: "unknown", Seq: 10}}, base.Add(time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Turns != 2 {
		t.Fatalf("ForgetTurns removed %d turns; want 2", res.Turns)
	}
	for _, id := range []string{"t2", "t4"} {
		if !slices.Contains(res.Removed, id) {
			t.Errorf("Removed = %v; want %s in it (an external index deletes it)", res.Removed, id)
		}
	}
	if got, _ := p.TurnIDs(ctx, "ns", ""); !equalIDs(got, []string{"t1", "t3", "t5"}) {
		t.Fatalf("TurnIDs after the forget = %v", got)
	}
	if got, _ := p.GetTurns(ctx, []string{"t2", "t4"}); len(got) != 0 {
		t.Fatalf("GetTurns of forgotten turns = %+v", got)
	}
	hits, err := p.SearchTurns(ctx, engram.TextQuery{Text: "lighthouse keeper", Limit: 10})
	if err != nil || !equalIDs(sortedIDs(hits), []string{"t1", "t3", "t5"}) {
		t.Fatalf("a search after the forget finds %v (%v); want t1, t3, t5", sortedIDs(hits), err)
	}
	if sk, _ := p.TurnSkips(ctx, 10); sk.Count != 0 {
		t.Fatalf("TurnSkips after the forget = %+v; the duplicate of a forgotten turn goes with it", sk)
	}
	gone, _ := p.ForgottenIDs(ctx, []string{"t2", "t4", "unknown", "t1"})
	if !reflect.DeepEqual(gone, map[string]bool{"t2": true, "t4": true, "unknown": true}) {
		t.Fatalf("ForgottenIDs = %v", gone)
	}
	if left, err := p.ForgottenLeft(ctx, 10); err != nil || len(left) != 0 {
		t.Fatalf("ForgottenLeft = %v, %v; want none", left, err)
	}
	put(t, p, turns[1]) // the archive replayed: a forgotten turn is not stored again
	if got, _ := p.GetTurns(ctx, []string{"t2"}); len(got) != 0 {
		t.Fatal("a replayed forgotten turn was stored again")
	}
	if res, err := p.ForgetTurns(ctx, []engram.ForgetTurn{{ID: "t2", Seq: 8}}, base, nil); err != nil || res.Turns != 0 {
		t.Fatalf("forgetting t2 again = %+v, %v; want nothing removed", res, err)
	}
}

func testRedact(t *testing.T, p Palace) {
	ctx := t.Context()
	a := turn(1, "ns", "s", "Ana", "the vault code is Zorblax-77, keep it")
	a.Meta = json.RawMessage(`{"note":"Zorblax-77"}`)
	put(t, p, a, turn(2, "ns", "s", "Ben", "noted"), turn(3, "ns", "s", "Cy", "Zorblax-77 again"))
	red := a
	red.Content, red.Meta = "the vault code is [redacted], keep it", json.RawMessage(`{"note":"[redacted]"}`)
	missing := turn(9, "ns", "s", "Ana", "never stored [redacted]")
	res, err := p.RedactTurns(ctx, []engram.Turn{red, missing}, []string{"Zorblax-77"}, "[redacted]")
	if err != nil {
		t.Fatal(err)
	}
	if res.Turns != 1 {
		t.Fatalf("RedactTurns redacted %d turns; want 1 (a turn not stored is left out)", res.Turns)
	}
	if got, _ := p.GetTurns(ctx, []string{"t1"}); len(got) != 1 || !reflect.DeepEqual(got[0], red) {
		t.Fatalf("the redacted turn reads %+v; want %+v", got, red)
	}
	if got, _ := p.GetTurns(ctx, []string{"t9"}); len(got) != 0 {
		t.Fatal("RedactTurns stored a turn the palace did not hold")
	}
	for text, want := range map[string][]string{"zorblax": {"t3"}, "vault code": {"t1"}, "orblax": {"t3"}, "redacted": {"t1"}} {
		hits, err := p.SearchTurns(ctx, engram.TextQuery{Text: text, Limit: 10})
		if err != nil || !equalIDs(sortedIDs(hits), want) {
			t.Errorf("a search for %q after the redaction finds %v (%v); want %v", text, sortedIDs(hits), err, want)
		}
	}
	if ids, _ := p.TurnIDsHolding(ctx, "", "", []string{"Zorblax-77"}, false); !equalIDs(ids, []string{"t3"}) {
		t.Errorf("TurnIDsHolding after the redaction = %v; want t3", ids)
	}
}

// sortedIDs are the ids of hits, in seq order.
func sortedIDs(hits []engram.TurnHit) []string {
	ts := make([]engram.Turn, len(hits))
	for i, h := range hits {
		ts[i] = h.Turn
	}
	slices.SortFunc(ts, func(a, b engram.Turn) int { return int(a.Seq - b.Seq) })
	return ids(ts)
}

func testBadInput(t *testing.T, p Palace) {
	ok := turn(1, "ns", "s", "Ana", "fine")
	for name, bad := range map[string]engram.Turn{
		"no id":        {Seq: 2, Namespace: "ns", Content: "x", TS: base},
		"no namespace": {ID: "b", Seq: 2, Content: "x", TS: base},
		"seq 0":        {ID: "b", Namespace: "ns", Content: "x", TS: base},
	} {
		err := p.PutTurns(t.Context(), []engram.Turn{ok, bad})
		if engram.ErrorCode(err) != engram.EINVALID {
			t.Errorf("%s: PutTurns = %v; want EINVALID", name, err)
		}
	}
	if n, _ := p.CountTurns(t.Context(), ""); n != 0 {
		t.Fatalf("a batch with a bad turn stored %d turns; want none", n)
	}
	wantIndexed(t, p, 0)
}

func testTurnIDs(t *testing.T, p Palace) {
	ctx := t.Context()
	m := turn(4, "ns", "s2", "Ana", "no secret in the text")
	m.Meta = json.RawMessage(`{"note":"call <Zed> & co"}`)
	put(t, p,
		turn(1, "ns", "s1", "Ana", "my code is Grimble-11"),
		turn(2, "ns", "s1", "Grimble", "hello"),
		turn(3, "ns", "s2", "Ben", "nothing here"),
		m,
		turn(5, "other", "Grimble-room", "Cy", "nothing either"),
	)
	for _, c := range []struct {
		ns, session string
		want        []string
	}{
		{"", "", []string{"t1", "t2", "t3", "t4", "t5"}},
		{"ns", "", []string{"t1", "t2", "t3", "t4"}},
		{"ns", "s2", []string{"t3", "t4"}},
		{"none", "", nil},
	} {
		got, err := p.TurnIDs(ctx, c.ns, c.session)
		if err != nil || !equalIDs(got, c.want) {
			t.Errorf("TurnIDs(%q, %q) = %v, %v; want %v", c.ns, c.session, got, err, c.want)
		}
	}
	for _, c := range []struct {
		ns, session string
		texts       []string
		everywhere  bool
		want        []string
	}{
		{"", "", []string{"Grimble"}, false, []string{"t1", "t2"}},           // content, speaker
		{"", "", []string{"Grimble"}, true, []string{"t1", "t2", "t5"}},      // and a session's name
		{"ns", "s1", []string{"Grimble"}, false, []string{"t1", "t2"}},       // within a session
		{"", "", []string{"<Zed> & co"}, false, []string{"t4"}},              // in meta, as JSON escapes it
		{"", "", []string{"absent", "nothing"}, false, []string{"t3", "t5"}}, // any of the texts
	} {
		got, err := p.TurnIDsHolding(ctx, c.ns, c.session, c.texts, c.everywhere)
		if err != nil || !equalIDs(got, c.want) {
			t.Errorf("TurnIDsHolding(%q, %q, %q, %v) = %v, %v; want %v", c.ns, c.session, c.texts, c.everywhere, got, err, c.want)
		}
	}
}

// equalIDs compares id lists, nil and empty alike.
func equalIDs(a, b []string) bool {
	return len(a) == len(b) && (len(a) == 0 || reflect.DeepEqual(a, b))
}

func testTurnsAround(t *testing.T, p Palace) {
	ctx := t.Context()
	var s []engram.Turn
	for seq := int64(1); seq <= 6; seq++ {
		s = append(s, turn(seq, "ns", "s", "Ana", fmt.Sprintf("turn %d", seq)))
	}
	s[3].TS = s[2].TS // the same time: the seq breaks the tie
	noTime := turn(7, "ns", "s", "Ana", "no time")
	noTime.TS = time.Time{}
	put(t, p, append(s, noTime, turn(8, "ns", "other", "Ana", "another session"))...)

	got, err := p.TurnsAround(ctx, []engram.Turn{s[2], s[0], s[5]}, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := [][2][]string{
		{{"t1", "t2"}, {"t4", "t5"}},
		{nil, {"t2", "t3"}},
		{{"t4", "t5"}, nil},
	}
	if len(got) != len(want) {
		t.Fatalf("TurnsAround returned %d contexts; want %d", len(got), len(want))
	}
	for i, w := range want {
		if !equalIDs(ids(got[i].Before), w[0]) || !equalIDs(ids(got[i].After), w[1]) {
			t.Errorf("around %d: before %v after %v; want %v %v (time order, no turn without a time, no other session)",
				i, ids(got[i].Before), ids(got[i].After), w[0], w[1])
		}
	}
	if !reflect.DeepEqual(got[0].Before[0], s[0]) {
		t.Errorf("a neighbour = %+v; want the whole turn %+v", got[0].Before[0], s[0])
	}
	if got, err := p.TurnsAround(ctx, s[:1], 0); err != nil || len(got) != 1 || got[0].Before != nil || got[0].After != nil {
		t.Errorf("TurnsAround(n=0) = %+v, %v; want one empty context", got, err)
	}
	if _, err := p.TurnsAround(ctx, s[:1], -1); engram.ErrorCode(err) != engram.EINVALID {
		t.Errorf("TurnsAround(n=-1) = %v; want EINVALID", err)
	}
}

func testWatermarks(t *testing.T, p Palace) {
	ctx := t.Context()
	mark := func(worker string) int64 {
		t.Helper()
		seq, err := p.WorkerSeq(ctx, worker)
		if err != nil {
			t.Fatal(err)
		}
		return seq
	}
	if got := mark("memories"); got != 0 {
		t.Fatalf("a worker that never ran has watermark %d; want 0", got)
	}
	for _, w := range []struct {
		worker string
		seq    int64
	}{{"memories", 5}, {"memories", 3}, {"vec:m1:memories", 7}, {"vec:m1:scenes", 2}, {"vec:m10:memories", 4}} {
		if err := p.SetWorkerSeq(ctx, w.worker, w.seq); err != nil {
			t.Fatal(err)
		}
	}
	if got := mark("memories"); got != 5 {
		t.Fatalf("watermark = %d; want 5: it never moves back", got)
	}
	n, err := p.ResetWorkerSeqs(ctx, "vec:m1:")
	if err != nil || n != 2 {
		t.Fatalf("ResetWorkerSeqs(vec:m1:) = %d, %v; want 2", n, err)
	}
	if mark("vec:m1:memories") != 0 || mark("vec:m1:scenes") != 0 || mark("vec:m10:memories") != 4 || mark("memories") != 5 {
		t.Fatal("ResetWorkerSeqs reset other workers than its prefix's")
	}
	if _, err := p.ResetWorkerSeqs(ctx, ""); engram.ErrorCode(err) != engram.EINVALID {
		t.Fatalf("ResetWorkerSeqs(\"\") = %v; want EINVALID", err)
	}
	if n, err := p.ResetWorkerSeqs(ctx, "w%_"); err != nil || n != 0 {
		t.Fatalf("ResetWorkerSeqs(w%%_) = %d, %v; want 0: a prefix is not a pattern", n, err)
	}
}

func testSkips(t *testing.T, p Palace) {
	ctx := t.Context()
	if got, err := p.Skips(ctx, 10); err != nil || len(got) != 0 {
		t.Fatalf("Skips of a new palace = %v, %v", got, err)
	}
	if err := p.Skip(ctx, "memories", 1, 8, "unusable output"); err != nil {
		t.Fatal(err)
	}
	if seq, _ := p.WorkerSeq(ctx, "memories"); seq != 8 {
		t.Fatalf("watermark after a skip = %d; want 8", seq)
	}
	if err := p.Skip(ctx, "graph", 3, 4, "timeout"); err != nil {
		t.Fatal(err)
	}
	if err := p.Skip(ctx, "memories", 1, 9, "unusable again"); err != nil { // the range again, longer
		t.Fatal(err)
	}
	got, err := p.Skips(ctx, -1)
	if err != nil || len(got) != 2 {
		t.Fatalf("Skips = %+v, %v; want two ranges", got, err)
	}
	byWorker := map[string]engram.Skipped{}
	for _, s := range got {
		if s.At.IsZero() {
			t.Errorf("skip %+v has no time", s)
		}
		byWorker[s.Worker] = s
	}
	if m := byWorker["memories"]; m.From != 1 || m.To != 9 || m.Error != "unusable again" {
		t.Errorf("the memories' skip = %+v; want [1, 9] with the last reason", m)
	}
	if g := byWorker["graph"]; g.From != 3 || g.To != 4 {
		t.Errorf("the graph's skip = %+v", g)
	}
	if got, _ := p.Skips(ctx, 1); len(got) != 1 {
		t.Errorf("Skips(1) = %d ranges; want 1", len(got))
	}
}

func testJobStates(t *testing.T, p Palace) {
	ctx := t.Context()
	store := p.JobStates()
	if got, err := store.Load(ctx); err != nil || len(got) != 0 {
		t.Fatalf("Load of a new palace = %v, %v; want none", got, err)
	}
	ran := base.Add(1234567 * time.Nanosecond) // to the nanosecond
	states := []scheduler.State{
		{Name: "memories", LastRun: ran, LastSuccess: base, LastError: "timeout", Failures: 2},
		{Name: "compact"}, // never ran: zero times
		{Name: "memories", LastRun: ran.Add(time.Hour), LastSuccess: ran.Add(time.Hour)}, // replaces the first
	}
	for _, st := range states {
		if err := store.Save(ctx, st); err != nil {
			t.Fatal(err)
		}
	}
	got, err := store.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]scheduler.State{"memories": states[2], "compact": states[1]}
	if len(got) != len(want) {
		t.Fatalf("Load = %+v; want %+v", got, want)
	}
	for name, w := range want {
		g := got[name]
		if g.Name != w.Name || !g.LastRun.Equal(w.LastRun) || !g.LastSuccess.Equal(w.LastSuccess) || g.LastError != w.LastError ||
			g.Failures != w.Failures || g.LastRun.IsZero() != w.LastRun.IsZero() {
			t.Errorf("Load()[%s] = %+v; want %+v", name, g, w)
		}
	}
}

func testConcurrentPuts(t *testing.T, p Palace) {
	// Several servers' indexers store the same turns: every write must
	// succeed and the turns be stored once.
	var batch []engram.Turn
	for seq := int64(1); seq <= 40; seq++ {
		batch = append(batch, turn(seq, "ns", fmt.Sprintf("s%d", seq%3), "Ana", fmt.Sprintf("turn %d", seq)))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < len(batch); i += 5 {
				end := min(i+10, len(batch))
				if err := p.PutTurns(t.Context(), batch[i:end]); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("a concurrent PutTurns failed: %v", err)
	}
	if n, err := p.CountTurns(t.Context(), ""); err != nil || n != 40 {
		t.Fatalf("CountTurns = %d, %v; want 40", n, err)
	}
	if sk, _ := p.TurnSkips(t.Context(), 10); sk.Count != 0 {
		t.Fatalf("TurnSkips = %+v; want none", sk)
	}
	wantIndexed(t, p, 40)
}

func testScenes(t *testing.T, p Palace) {
	ctx := t.Context()
	put(t, p, turn(1, "ns", "s", "Ana", "we met at the harbour"), turn(2, "ns", "s", "Ben", "and then the storm"))
	scene := engram.Scene{ID: "sc1", Namespace: "ns", Session: "s", Title: "harbour", Summary: "a meeting\x00 at the harbour",
		Start: base.Add(time.Minute), End: base.Add(2 * time.Minute), Participants: []string{"Ana", "Ben"}, Turns: []string{"t1", "t2"}}
	draft := []byte(`{"open":true}`)
	if err := p.PutScenes(ctx, "scenes", []engram.SceneWrite{{Scene: scene, Draft: draft}}, 2); err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string]engram.Scene{"id": {Namespace: "ns", Turns: []string{"t1"}},
		"namespace": {ID: "x", Turns: []string{"t1"}}, "turns": {ID: "x", Namespace: "ns"},
		"start": {ID: "x", Namespace: "ns", Turns: []string{"t1"}, Start: time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)}} {
		err := p.PutScenes(ctx, "scenes", []engram.SceneWrite{{Scene: scene}, {Scene: bad}}, 9)
		if e, ok := errors.AsType[*engram.Error](err); !ok || e.Code != engram.EINVALID || e.Field != "scenes[1]."+name {
			t.Errorf("PutScenes of a scene without a good %s = %v; want EINVALID naming scenes[1].%s", name, err, name)
		}
	}
	if seq, _ := p.WorkerSeq(ctx, "scenes"); seq != 2 {
		t.Fatalf("watermark after a refused batch = %d; want 2", seq)
	}
	got, err := p.GetScenes(ctx, []string{"unknown", "sc1"})
	if err != nil || len(got) != 1 || got[0].Seq == 0 {
		t.Fatalf("GetScenes = %+v, %v", got, err)
	}
	scene.Seq = got[0].Seq
	if !reflect.DeepEqual(got[0], scene) {
		t.Fatalf("the scene reads back %+v; want %+v", got[0], scene)
	}
	open, err := p.OpenScenes(ctx, []engram.SessionKey{{Namespace: "ns", Session: "s"}, {Namespace: "ns", Session: "other"}})
	if err != nil || len(open) != 1 || string(open[engram.SessionKey{Namespace: "ns", Session: "s"}]) != string(draft) {
		t.Fatalf("OpenScenes = %q, %v", open, err)
	}
	scene.Title = "the harbour, closed"
	if err := p.PutScenes(ctx, "scenes", []engram.SceneWrite{{Scene: scene}}, 3); err != nil {
		t.Fatal(err)
	}
	if open, _ := p.OpenScenes(ctx, []engram.SessionKey{{Namespace: "ns", Session: "s"}}); len(open) != 0 {
		t.Fatalf("OpenScenes after the scene closed = %q", open)
	}
	since, err := p.ScenesSince(ctx, scene.Seq, 10)
	if err != nil || len(since) != 1 || since[0].Title != scene.Title || since[0].Seq <= scene.Seq {
		t.Fatalf("ScenesSince(%d) = %+v, %v; want the rewritten scene under a new change number", scene.Seq, since, err)
	}
}

func testPersonas(t *testing.T, p Palace) {
	ctx := t.Context()
	at := func(day int) time.Time { return base.AddDate(0, 0, day) }
	lives := func(value string, day int, ev ...string) engram.FacetUpdate {
		return engram.FacetUpdate{Namespace: "ns", Speaker: "Ana", Facet: engram.FacetIdentity, Key: "lives_in", Value: value, At: at(day), Evidence: ev}
	}
	// Out of order, one twice: the latest value is the facet's, the
	// others its history, each until the next began.
	ups := []engram.FacetUpdate{lives("Porto", 10, "t2"), lives("Lisbon", 1, "t1"), lives("Porto", 12, "t3"), lives("Lisbon", 1, "t1"),
		{Namespace: "ns", Speaker: "Ben", Facet: engram.FacetPreference, Key: "likes:jazz", Value: "jazz", At: at(3), Evidence: []string{"t4"}}}
	if err := p.ApplyFacets(ctx, "persona", ups, 7); err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string]engram.FacetUpdate{"speaker": {Namespace: "ns", Facet: "f", Key: "k", Value: "v", At: base},
		"key": {Namespace: "ns", Speaker: "A", Key: "k", Value: "v", At: base}, "value": {Namespace: "ns", Speaker: "A", Facet: "f", Key: "k", At: base},
		"at": {Namespace: "ns", Speaker: "A", Facet: "f", Key: "k", Value: "v"}} {
		err := p.ApplyFacets(ctx, "persona", []engram.FacetUpdate{ups[0], bad}, 9)
		if e, ok := errors.AsType[*engram.Error](err); !ok || e.Code != engram.EINVALID || e.Field != "facets[1]."+name {
			t.Errorf("ApplyFacets without a good %s = %v; want EINVALID naming facets[1].%s", name, err, name)
		}
	}
	if seq, _ := p.WorkerSeq(ctx, "persona"); seq != 7 {
		t.Fatalf("watermark = %d; want 7", seq)
	}
	got, err := p.Persona(ctx, "ns", "ANA")
	want := []engram.Persona{{Namespace: "ns", Speaker: "Ana", Updated: at(10), Facets: []engram.PersonaFacet{{
		Facet: engram.FacetIdentity, Key: "lives_in", Value: "Porto", Since: at(10), Evidence: []string{"t2", "t3"},
		History: []engram.FacetChange{{Value: "Lisbon", From: at(1), To: at(10), Evidence: []string{"t1"}}}}}}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Persona(ns, ANA) = %+v, %v\nwant %+v", got, err, want)
	}
	if all, _ := p.Persona(ctx, "ns", ""); len(all) != 2 || all[0].Speaker != "Ana" || all[1].Speaker != "Ben" {
		t.Fatalf("Persona(ns, \"\") = %+v; want Ana's and Ben's", all)
	}
	if err := p.ResetPersonas(ctx, "persona"); err != nil {
		t.Fatal(err)
	}
	if all, _ := p.Persona(ctx, "ns", ""); len(all) != 0 {
		t.Fatalf("Persona after a reset = %+v", all)
	}
	if seq, _ := p.WorkerSeq(ctx, "persona"); seq != 0 {
		t.Fatalf("watermark after a reset = %d; want 0", seq)
	}
}

func testGraph(t *testing.T, p Palace) {
	ctx := t.Context()
	fact := func(subject, predicate, object string, day int, src string) engram.Triple {
		return engram.Triple{Namespace: "ns", Subject: subject, Predicate: predicate, Object: object, ValidFrom: base.AddDate(0, 0, day), Sources: []string{src}}
	}
	// Out of order, one told twice: Ana lived in Lisbon, then in Porto.
	if err := p.ApplyTriples(ctx, "graph", []engram.Triple{fact("Ana", "lives_in", "Porto", 10, "t2"), fact("ana", "lives_in", "Lisbon", 1, "t1"),
		fact("Ana", "lives_in", "Porto", 10, "t3"), fact("Ana", "also_known_as", "Annie", 2, "t1")}, 4); err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string]engram.Triple{"namespace": {Subject: "a", Predicate: "p", Object: "o", ValidFrom: base},
		"subject":    {Namespace: "ns", Subject: " ... ", Predicate: "p", Object: "o", ValidFrom: base},
		"predicate":  {Namespace: "ns", Subject: "a", Object: "o", ValidFrom: base},
		"object":     {Namespace: "ns", Subject: "a", Predicate: "p", ValidFrom: base},
		"valid_from": {Namespace: "ns", Subject: "a", Predicate: "p", Object: "o"}} {
		err := p.ApplyTriples(ctx, "graph", []engram.Triple{fact("Ana", "likes", "tea", 3, "t4"), bad}, 9)
		if e, ok := errors.AsType[*engram.Error](err); !ok || e.Code != engram.EINVALID || e.Field != "triples[1]."+name {
			t.Errorf("ApplyTriples without a good %s = %v; want EINVALID naming triples[1].%s", name, err, name)
		}
	}
	if seq, _ := p.WorkerSeq(ctx, "graph"); seq != 4 {
		t.Fatalf("watermark = %d; want 4", seq)
	}
	res, err := p.Graph(ctx, engram.GraphQuery{Namespace: "ns", Entity: "annie", Timeline: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Entity.Name != "Ana" || !slices.Equal(res.Entity.Aliases, []string{"Annie"}) {
		t.Fatalf("the entity of annie = %+v; want Ana, also Annie", res.Entity)
	}
	var lives []engram.Triple
	for _, tr := range res.Triples {
		if tr.Predicate == "lives_in" {
			lives = append(lives, tr)
		}
	}
	if len(lives) != 2 || lives[0].Object != "Lisbon" || !lives[0].ValidTo.Equal(base.AddDate(0, 0, 10)) ||
		lives[1].Object != "Porto" || !lives[1].ValidTo.IsZero() || !slices.Equal(lives[1].Sources, []string{"t2", "t3"}) {
		t.Fatalf("Ana's timeline = %+v; want Lisbon until day 10, then Porto from t2 and t3", lives)
	}
	now, err := p.Graph(ctx, engram.GraphQuery{Namespace: "ns", Entity: "Ana", AsOf: base.AddDate(0, 0, 5)})
	if err != nil || len(now.Triples) != 2 {
		t.Fatalf("Ana's graph on day 5 = %+v, %v; want Lisbon and her other name", now.Triples, err)
	}
	if _, err := p.Graph(ctx, engram.GraphQuery{Namespace: "ns", Entity: "Bo"}); engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Fatalf("Graph of an unknown entity = %v; want ENOTFOUND", err)
	}
	if _, err := p.Graph(ctx, engram.GraphQuery{Namespace: "ns", Entity: " "}); engram.ErrorCode(err) != engram.EINVALID {
		t.Fatalf("Graph without an entity = %v; want EINVALID", err)
	}
}

func testMemories(t *testing.T, p Palace) {
	ctx := t.Context()
	mem := func(id, text string, day int, rel *engram.Relation, src ...string) engram.Memory {
		return engram.Memory{ID: id, Namespace: "ns", Type: "fact", Subject: "Ana", Text: text, Importance: 0.4,
			TS: base.AddDate(0, 0, day), Relation: rel, Sources: src}
	}
	// A correction of a memory not stored yet: it applies when it comes.
	if n, err := p.ApplyCorrections(ctx, []engram.Correction{{ID: "c1", At: base, Target: engram.CorrectMemory, Of: "m4",
		Namespace: "ns", Type: "fact", Original: "Ana keeps bees", Text: "Ana keeps wasps"}}); err != nil || n != 1 {
		t.Fatalf("ApplyCorrections = %d, %v", n, err)
	}
	res, err := p.PutMemories(ctx, "memories", []engram.Memory{
		mem("m1", "Ana lives in Lisbon", 1, &engram.Relation{Subject: "Ana", Predicate: "lives_in", Object: "Lisbon"}, "t1"),
		mem("m2", "Ana lives in Lisbon", 2, nil, "t2"), // a repeat: merged
		mem("m3", "Ana lives in Porto", 5, &engram.Relation{Subject: "Ana", Predicate: "lives_in", Object: "Porto"}, "t3"),
		mem("m4", "Ana keeps bees", 6, nil, "t4"),
	}, 4)
	if err != nil || res != (engram.MemoryResult{Inserted: 3, Merged: 1, Superseded: 1}) {
		t.Fatalf("PutMemories = %+v, %v; want 3 inserted, 1 merged, 1 superseded", res, err)
	}
	for name, bad := range map[string]engram.Memory{"id": {Namespace: "ns", Type: "t", Text: "x"}, "namespace": {ID: "x", Type: "t", Text: "x"},
		"type": {ID: "x", Namespace: "ns", Text: "x"}, "text": {ID: "x", Namespace: "ns", Type: "t", Text: " "},
		"ts": {ID: "x", Namespace: "ns", Type: "t", Text: "x", TS: time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)}} {
		_, err := p.PutMemories(ctx, "memories", []engram.Memory{mem("m9", "fine", 1, nil), bad}, 9)
		if e, ok := errors.AsType[*engram.Error](err); !ok || e.Code != engram.EINVALID || e.Field != "memories[1]."+name {
			t.Errorf("PutMemories without a good %s = %v; want EINVALID naming memories[1].%s", name, err, name)
		}
	}
	got, err := p.GetMemories(ctx, []string{"m1", "m2", "m3", "m4"})
	if err != nil || len(got) != 3 {
		t.Fatalf("GetMemories = %+v, %v; want m1, m3, m4 (m2 merged into m1)", got, err)
	}
	if !slices.Equal(got[0].Sources, []string{"t1", "t2"}) || got[0].SupersededBy != "m3" || got[1].SupersededBy != "" {
		t.Fatalf("m1 = %+v, m3 = %+v; want m1 from t1 and t2, superseded by m3", got[0], got[1])
	}
	if got[2].Text != "Ana keeps wasps" || got[2].Extracted != "Ana keeps bees" || got[2].Corrected != "c1" {
		t.Fatalf("m4 = %+v; want the correction's text", got[2])
	}
	if _, err := p.MemoryToCorrect(ctx, "nope"); engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Fatalf("MemoryToCorrect of an unknown id = %v; want ENOTFOUND", err)
	}
}
