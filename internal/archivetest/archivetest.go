// Package archivetest is the conformance suite of engram.Archive: what every
// archive (the file archive, the PostgreSQL one) must do alike. An
// archive's tests call Run with a way to make an empty store. Only tests
// import it.
package archivetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/engram-dev/engram"
)

// Opener opens the store it was made for; after Close it opens the same
// store again, with what was archived in it.
type Opener func() (engram.Archive, error)

// Run runs the suite. fresh makes a new, empty store for one subtest.
func Run(t *testing.T, fresh func(t *testing.T) Opener) {
	for _, c := range []struct {
		name string
		fn   func(t *testing.T, open Opener)
	}{
		{"RoundTrip", testRoundTrip},
		{"Duplicates", testDuplicates},
		{"StreamAfter", testStreamAfter},
		{"ScanTime", testScanTime},
		{"LastSeqAfterReopen", testLastSeqAfterReopen},
		{"Close", testClose},
		{"BadInput", testBadInput},
		{"CancelledContext", testCancelledContext},
		{"ConcurrentAppends", testConcurrentAppends},
	} {
		t.Run(c.name, func(t *testing.T) { c.fn(t, fresh(t)) })
	}
}

// MustOpen opens the store and closes it when the test ends.
func MustOpen(tb testing.TB, open Opener) engram.Archive {
	tb.Helper()
	a, err := open()
	if err != nil {
		tb.Fatalf("open: %v", err)
	}
	tb.Cleanup(func() {
		if err := a.Close(); err != nil {
			tb.Errorf("close: %v", err)
		}
	})
	return a
}

// Turn returns a valid turn to append.
func Turn(session, content string) engram.Turn {
	return engram.Turn{
		Namespace: engram.DefaultNamespace,
		Session:   session,
		Role:      engram.RoleUser,
		Content:   content,
		TS:        time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC),
	}
}

// MustAppend appends and fails the test on error.
func MustAppend(tb testing.TB, a engram.Archive, turns ...engram.Turn) []engram.Appended {
	tb.Helper()
	res, err := a.Append(context.Background(), turns)
	if err != nil {
		tb.Fatalf("append: %v", err)
	}
	if len(res) != len(turns) {
		tb.Fatalf("append: %d results for %d turns", len(res), len(turns))
	}
	return res
}

// StreamAll returns every turn Stream yields after afterSeq, checking that
// their seqs increase.
func StreamAll(tb testing.TB, a engram.Archive, afterSeq int64) []engram.Turn {
	tb.Helper()
	var out []engram.Turn
	err := a.Stream(context.Background(), afterSeq, func(t engram.Turn) error {
		if t.Seq <= afterSeq || (len(out) > 0 && t.Seq <= out[len(out)-1].Seq) {
			return fmt.Errorf("seq %d out of order (after %d)", t.Seq, afterSeq)
		}
		out = append(out, t)
		return nil
	})
	if err != nil {
		tb.Fatalf("stream after %d: %v", afterSeq, err)
	}
	return out
}

// WantCode fails the test unless err carries the engram error code.
func WantCode(tb testing.TB, err error, code string) {
	tb.Helper()
	if got := engram.ErrorCode(err); got != code {
		tb.Fatalf("error code %q (%v), want %q", got, err, code)
	}
}

func testRoundTrip(t *testing.T, open Opener) {
	a := MustOpen(t, open)
	in := []engram.Turn{
		{ID: "client-1", Namespace: "work", Session: "s1", Role: engram.RoleUser, Content: "hello <world> & all",
			TS: time.Date(2026, 4, 30, 9, 0, 0, 5, time.FixedZone("X", -3600)), Meta: json.RawMessage(`{"a":[1,2],"b":"\u00e9"}`)},
		{Namespace: "work", Session: "s1", Role: engram.RoleAssistant, Speaker: "bot", Content: "hi\nthere 日本 \"quoted\" \\ \u0000"},
		{Namespace: "default", Session: "s2", Role: engram.RoleTool, Content: "x", Meta: json.RawMessage(` { "k" : true } `)},
	}
	before := time.Now().Truncate(time.Microsecond)
	res := MustAppend(t, a, in...)
	after := time.Now()
	if res[0].ID != "client-1" || res[1].ID == "" || res[2].ID == "" || res[1].ID == res[2].ID {
		t.Fatalf("ids: %+v", res)
	}
	for i, r := range res {
		if r.Duplicate || (i > 0 && r.Seq <= res[i-1].Seq) || r.Seq <= 0 {
			t.Fatalf("results %+v", res)
		}
	}
	if a.LastSeq() != res[2].Seq {
		t.Fatalf("LastSeq %d, last appended %d", a.LastSeq(), res[2].Seq)
	}
	got := StreamAll(t, a, 0)
	if len(got) != 3 {
		t.Fatalf("%d turns streamed", len(got))
	}
	recv := got[0].ReceivedAt
	if recv.Before(before) || recv.After(after) || recv.Location() != time.UTC {
		t.Fatalf("received_at %v, not within the call [%v, %v] in UTC", recv, before, after)
	}
	for i, g := range got {
		w := in[i]
		w.ID, w.Seq, w.ReceivedAt, w.TS = res[i].ID, res[i].Seq, recv, w.TS.UTC()
		if w.TS.IsZero() {
			w.TS = recv // a turn without a time gets its receive time
		}
		if i == 2 {
			w.Meta = json.RawMessage(`{"k":true}`) // stored compacted
		}
		if !g.ReceivedAt.Equal(recv) {
			t.Fatalf("turn %d: received_at %v, turn 0 %v: one call, one time", i, g.ReceivedAt, recv)
		}
		if g.ID != w.ID || g.Seq != w.Seq || g.Namespace != w.Namespace || g.Session != w.Session || g.Role != w.Role ||
			g.Speaker != w.Speaker || g.Content != w.Content || !g.TS.Equal(w.TS) || g.TS.Location() != time.UTC ||
			string(g.Meta) != string(w.Meta) || g.Redacted != nil || g.Forgotten != nil {
			t.Fatalf("turn %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
}

func testDuplicates(t *testing.T, open Opener) {
	a := MustOpen(t, open)
	x := Turn("s", "x")
	x.ID = "same"
	// Twice in one call.
	res := MustAppend(t, a, x, Turn("s", "other"), x)
	if res[0].Duplicate || res[0].ID != "same" || res[2] != (engram.Appended{ID: "same", Seq: res[0].Seq, Duplicate: true}) ||
		res[1].Duplicate || res[1].Seq <= res[0].Seq {
		t.Fatalf("results %+v", res)
	}
	first := res[0].Seq
	// Again in a later call, with other content: still the first.
	x2 := x
	x2.Content = "changed"
	res = MustAppend(t, a, x2)
	if res[0] != (engram.Appended{ID: "same", Seq: first, Duplicate: true}) {
		t.Fatalf("results %+v", res)
	}
	// Concurrently, with a new id: exactly one wins.
	y := Turn("s", "y")
	y.ID = "race"
	var wg sync.WaitGroup
	var mu sync.Mutex
	var fresh []engram.Appended
	for range 8 {
		wg.Go(func() {
			res, err := a.Append(context.Background(), []engram.Turn{y})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			fresh = append(fresh, res[0])
			mu.Unlock()
		})
	}
	wg.Wait()
	wins := 0
	for _, r := range fresh {
		if !r.Duplicate {
			wins++
		}
		if r.Seq != fresh[0].Seq {
			t.Fatalf("race results %+v", fresh)
		}
	}
	if wins != 1 {
		t.Fatalf("%d writes of one id", wins)
	}
	race := fresh[0].Seq
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	// And after a reopen.
	b := MustOpen(t, open)
	res = MustAppend(t, b, x, y, Turn("s", "new"))
	if res[0] != (engram.Appended{ID: "same", Seq: first, Duplicate: true}) ||
		res[1] != (engram.Appended{ID: "race", Seq: race, Duplicate: true}) || res[2].Duplicate || res[2].Seq <= race {
		t.Fatalf("results after reopen %+v", res)
	}
	n := 0
	for _, tn := range StreamAll(t, b, 0) {
		if tn.ID == "same" {
			n++
			if tn.Content != "x" {
				t.Fatalf("a duplicate replaced the turn: %+v", tn)
			}
		}
	}
	if n != 1 {
		t.Fatalf("id archived %d times", n)
	}
}

func testStreamAfter(t *testing.T, open Opener) {
	a := MustOpen(t, open)
	var seqs []int64
	for i := range 10 {
		seqs = append(seqs, MustAppend(t, a, Turn("s", fmt.Sprintf("turn %d", i)))[0].Seq)
	}
	for k := 0; k <= len(seqs); k++ {
		after := int64(0)
		if k > 0 {
			after = seqs[k-1]
		}
		got := StreamAll(t, a, after)
		if len(got) != len(seqs)-k {
			t.Fatalf("after %d: %d turns, want %d", after, len(got), len(seqs)-k)
		}
		for i, tn := range got {
			if tn.Seq != seqs[k+i] || tn.Content != fmt.Sprintf("turn %d", k+i) {
				t.Fatalf("after %d: turn %d is %+v", after, i, tn)
			}
		}
	}
	// fn's error stops the stream and comes back as is.
	stop := errors.New("stop")
	n := 0
	if err := a.Stream(context.Background(), 0, func(engram.Turn) error { n++; return stop }); err != stop || n != 1 {
		t.Fatalf("err %v after %d calls", err, n)
	}
	// fn may append; the stream ends at the turns committed when it began.
	n = 0
	err := a.Stream(context.Background(), seqs[7], func(engram.Turn) error {
		n++
		_, err := a.Append(context.Background(), []engram.Turn{Turn("s", "from fn")})
		return err
	})
	if err != nil || n != 2 {
		t.Fatalf("stream appending in fn: %v after %d calls, want 2", err, n)
	}
	if got := StreamAll(t, a, seqs[9]); len(got) != 2 || got[0].Content != "from fn" {
		t.Fatalf("after the appends of fn: %+v", got)
	}
}

func testScanTime(t *testing.T, open Opener) {
	a := MustOpen(t, open)
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	at := map[string]time.Time{
		"t0":      t0,
		"t0+1ns":  t0.Add(time.Nanosecond),
		"t0+1us":  t0.Add(time.Microsecond),
		"t0+1h":   t0.Add(time.Hour),
		"early":   time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC),
		"t0-1ns":  t0.Add(-time.Nanosecond),
		"zone+1h": t0.Add(time.Hour).In(time.FixedZone("Y", 5*3600)),
	}
	// Appended out of time order: results come in seq order.
	order := []string{"t0+1h", "t0", "early", "t0+1us", "zone+1h", "t0-1ns", "t0+1ns"}
	for _, name := range order {
		tn := Turn("s", name)
		tn.TS = at[name]
		MustAppend(t, a, tn)
	}
	scan := func(from, to time.Time) []string {
		t.Helper()
		var out []string
		if err := a.ScanTime(context.Background(), from, to, func(tn engram.Turn) error {
			out = append(out, tn.Content)
			return nil
		}); err != nil {
			t.Fatalf("scan [%v, %v): %v", from, to, err)
		}
		return out
	}
	for _, c := range []struct {
		from, to time.Time
		want     []string
	}{
		{t0, t0.Add(time.Nanosecond), []string{"t0"}},
		{t0.Add(time.Nanosecond), t0.Add(time.Microsecond), []string{"t0+1ns"}},
		{t0, t0.Add(time.Hour), []string{"t0", "t0+1us", "t0+1ns"}},
		{t0, t0.Add(time.Hour + time.Nanosecond), []string{"t0+1h", "t0", "t0+1us", "zone+1h", "t0+1ns"}},
		{t0.Add(-time.Nanosecond), t0, []string{"t0-1ns"}},
		{t0.Add(time.Hour), t0, nil},
		{t0, t0, nil},
		{time.Time{}, time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC), order},
		{time.Date(1990, 1, 1, 0, 0, 0, 0, time.FixedZone("Z", -3600)), t0, []string{"t0-1ns"}}, // 01:00 UTC: after "early"
	} {
		if got := scan(c.from, c.to); !slices.Equal(got, c.want) {
			t.Fatalf("scan [%v, %v): %q, want %q", c.from, c.to, got, c.want)
		}
	}
	stop := errors.New("stop")
	n := 0
	if err := a.ScanTime(context.Background(), time.Time{}, t0.Add(24*time.Hour), func(engram.Turn) error { n++; return stop }); err != stop || n != 1 {
		t.Fatalf("err %v after %d calls", err, n)
	}
}

func testLastSeqAfterReopen(t *testing.T, open Opener) {
	a := MustOpen(t, open)
	if a.LastSeq() != 0 {
		t.Fatalf("LastSeq %d in an empty store", a.LastSeq())
	}
	res := MustAppend(t, a, Turn("s", "a"), Turn("s", "b"))
	last := res[1].Seq
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	b := MustOpen(t, open)
	if b.LastSeq() != last {
		t.Fatalf("LastSeq %d after reopen, want %d", b.LastSeq(), last)
	}
	if s := MustAppend(t, b, Turn("s", "c"))[0].Seq; s <= last {
		t.Fatalf("seq %d after reopen, not above %d", s, last)
	}
}

func testClose(t *testing.T, open Opener) {
	a := MustOpen(t, open)
	last := MustAppend(t, a, Turn("s", "before"))[0].Seq
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	ctx := context.Background()
	_, err := a.Append(ctx, []engram.Turn{Turn("s", "after")})
	WantCode(t, err, engram.EUNAVAILABLE)
	_, err = a.Append(ctx, nil)
	WantCode(t, err, engram.EUNAVAILABLE)
	WantCode(t, a.Stream(ctx, 0, func(engram.Turn) error { return nil }), engram.EUNAVAILABLE)
	WantCode(t, a.ScanTime(ctx, time.Time{}, time.Now(), func(engram.Turn) error { return nil }), engram.EUNAVAILABLE)
	if a.LastSeq() != last {
		t.Fatalf("LastSeq %d after close, want %d", a.LastSeq(), last)
	}
	b := MustOpen(t, open)
	if got := StreamAll(t, b, 0); len(got) != 1 || got[0].Content != "before" {
		t.Fatalf("after close: %+v", got)
	}
}

func testBadInput(t *testing.T, open Opener) {
	a := MustOpen(t, open)
	for _, tc := range []struct {
		edit  func(*engram.Turn)
		field string
	}{
		{func(t *engram.Turn) { t.Session = "" }, "turns[1].session"},
		{func(t *engram.Turn) { t.Namespace = "" }, "turns[1].namespace"},
		{func(t *engram.Turn) { t.Content = "" }, "turns[1].content"},
		{func(t *engram.Turn) { t.Content = "bad \xff" }, "turns[1].content"},
		{func(t *engram.Turn) { t.Role = "" }, "turns[1].role"},
		{func(t *engram.Turn) { t.Role = "robot" }, "turns[1].role"},
		{func(t *engram.Turn) { t.Meta = json.RawMessage(`[1]`) }, "turns[1].meta"},
		{func(t *engram.Turn) { t.Meta = json.RawMessage(`{"a"`) }, "turns[1].meta"},
		{func(t *engram.Turn) { t.Speaker = "\xff" }, "turns[1].speaker"},
		{func(t *engram.Turn) { t.ID = "\xfe" }, "turns[1].id"},
		{func(t *engram.Turn) { t.TS = time.Date(12000, 1, 1, 0, 0, 0, 0, time.UTC) }, "turns[1].ts"},
		{func(t *engram.Turn) { t.TS = time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC) }, "turns[1].ts"},
	} {
		bad := Turn("s", "bad")
		tc.edit(&bad)
		_, err := a.Append(context.Background(), []engram.Turn{Turn("s", "ok"), bad})
		WantCode(t, err, engram.EINVALID)
		if f := engram.ErrorField(err); f != tc.field {
			t.Fatalf("field %q (%v), want %q", f, err, tc.field)
		}
	}
	if a.LastSeq() != 0 || len(StreamAll(t, a, 0)) != 0 {
		t.Fatal("a refused call archived something")
	}
	// Nothing to do is no error.
	if res, err := a.Append(context.Background(), nil); err != nil || len(res) != 0 {
		t.Fatalf("empty append: %v %v", res, err)
	}
}

func testCancelledContext(t *testing.T, open Opener) {
	a := MustOpen(t, open)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := a.Append(ctx, []engram.Turn{Turn("s", "x")}); !errors.Is(err, context.Canceled) {
		t.Fatalf("append with a cancelled ctx: %v", err)
	}
	if err := a.Stream(ctx, 0, func(engram.Turn) error { return nil }); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("stream with a cancelled ctx: %v", err)
	}
	if got := StreamAll(t, a, 0); len(got) != 0 {
		t.Fatalf("a cancelled call archived %+v", got)
	}
}

func testConcurrentAppends(t *testing.T, open Opener) {
	const writers, perWriter = 8, 40
	a := MustOpen(t, open)
	var wg sync.WaitGroup
	results := make([][]engram.Appended, writers)
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				tn := Turn(fmt.Sprintf("w%d", w), fmt.Sprintf("w%d-%d", w, i))
				tn.ID = fmt.Sprintf("w%d-%d", w, i)
				batch := []engram.Turn{tn}
				if i%10 == 0 { // some calls carry several turns
					for j := range 2 {
						extra := Turn(fmt.Sprintf("w%d", w), fmt.Sprintf("w%d-%d-%d", w, i, j))
						extra.ID = fmt.Sprintf("w%d-%d-%d", w, i, j)
						batch = append(batch, extra)
					}
				}
				res, err := a.Append(context.Background(), batch)
				if err != nil {
					t.Error(err)
					return
				}
				results[w] = append(results[w], res...)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	seqOf := map[string]int64{}
	for _, rs := range results {
		for _, r := range rs {
			if r.Duplicate {
				t.Fatalf("duplicate %+v", r)
			}
			seqOf[r.ID] = r.Seq
		}
	}
	got := StreamAll(t, a, 0)
	if len(got) != len(seqOf) {
		t.Fatalf("%d turns streamed, %d appended", len(got), len(seqOf))
	}
	last := map[string]int64{}
	for _, tn := range got {
		if seqOf[tn.ID] != tn.Seq {
			t.Fatalf("id %s: streamed seq %d, Append said %d", tn.ID, tn.Seq, seqOf[tn.ID])
		}
		// Each writer's turns are in the order it appended them.
		if tn.Seq <= last[tn.Session] {
			t.Fatalf("session %s out of order", tn.Session)
		}
		last[tn.Session] = tn.Seq
	}
	if a.LastSeq() != got[len(got)-1].Seq {
		t.Fatalf("LastSeq %d, last streamed %d", a.LastSeq(), got[len(got)-1].Seq)
	}
}
