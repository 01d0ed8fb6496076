package kwindex

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"
)

// The palace's tests drive both caches over the real SQLite, against
// FTS5; these drive their bookkeeping over a table in memory: the order
// in which changes apply, what makes a cache rebuild, and when a search is
// left to FTS5.

// table is a store of docs in memory: the turns' way (a generation
// counted by every change) and the units' (a change number a row, a count
// of deletions).
type table struct {
	mu      sync.Mutex
	docs    map[int64]Doc
	gen     int64
	changes map[int64]int64 // key → change number
	seq     int64
	deleted int64
}

func newTable() *table { return &table{docs: map[int64]Doc{}, changes: map[int64]int64{}} }

// put writes docs as one change and returns the change an index applies.
func (tb *table) put(docs ...Doc) Change {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	var c Change
	for _, d := range docs {
		tb.docs[d.Key] = d
		tb.seq++
		tb.changes[d.Key] = tb.seq
		c.Add(d)
	}
	tb.gen++
	c.Gen = tb.gen
	return c
}

// remove deletes keys as one change.
func (tb *table) remove(keys ...int64) Change {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	var c Change
	for _, k := range keys {
		delete(tb.docs, k)
		delete(tb.changes, k)
		c.Remove(k)
	}
	tb.gen++
	tb.deleted++
	c.Gen = tb.gen
	return c
}

func (tb *table) load(_ context.Context, add func(Doc)) (int64, error) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	keys := make([]int64, 0, len(tb.docs))
	for k := range tb.docs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		add(tb.docs[k])
	}
	return tb.gen, nil
}

func (tb *table) State(context.Context) (seq, deleted int64, err error) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return tb.seq, tb.deleted, nil
}

func (tb *table) Changes(_ context.Context, after int64, limit int) (rows []Row, seq, deleted int64, err error) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	for k, ch := range tb.changes {
		if ch > after {
			rows = append(rows, Row{ID: "id" + strconv.FormatInt(k, 10), Change: ch, Doc: tb.docs[k]})
		}
	}
	slices.SortFunc(rows, func(a, b Row) int { return int(a.Change - b.Change) })
	return rows[:min(len(rows), limit)], tb.seq, tb.deleted, nil
}

// keysOf is the keys of hits, sorted.
func keysOf(hits []Hit) []int64 {
	keys := Keys(hits)
	slices.Sort(keys)
	return keys
}

// TestGenCache_Order: a change applies only after every change of an
// earlier generation has; a search given a generation the cache does not
// hold is left to FTS5, and starts a rebuild only when no write of this
// process is in flight to bring it.
func TestGenCache_Order(t *testing.T) {
	ctx := context.Background()
	tb := newTable()
	tb.put(Doc{Key: 1, Text: "zeppelin one"})
	g := NewGenCache(0.4, tb.load)
	if _, ok := g.Best(tb.gen, []string{"zeppelin"}, Filter{}, 10); ok || g.Active() {
		t.Fatal("a cache never loaded answered, or is active")
	}
	if err := g.Load(ctx); err != nil {
		t.Fatal(err)
	}
	w1, w2 := g.Begin(), g.Begin()
	*w1, *w2 = tb.put(Doc{Key: 2, Text: "zeppelin two"}), tb.put(Doc{Key: 3, Text: "zeppelin three"})
	g.End(w2, nil) // committed second, ended first
	if _, ok := g.Best(tb.gen, []string{"zeppelin"}, Filter{}, 10); ok {
		t.Fatal("answered before the earlier generation was applied")
	}
	if gen, pending := g.Gen(); gen != 1 || pending != 1 {
		t.Fatalf("at generation %d with %d pending; want 1 and 1", gen, pending)
	}
	g.End(w1, nil)
	hits, ok := g.Best(tb.gen, []string{"zeppelin"}, Filter{}, 10)
	if !ok || !slices.Equal(keysOf(hits), []int64{1, 2, 3}) {
		t.Fatalf("after both: %v, %v", hits, ok)
	}

	// A write no End brings (another process's): the first search that
	// sees it rebuilds.
	tb.remove(1)
	tb.put(Doc{Key: 4, Text: "zeppelin four"})
	if _, ok := g.Best(tb.gen, []string{"zeppelin"}, Filter{}, 10); ok {
		t.Fatal("answered from an index behind the table")
	}
	g.Wait()
	hits, ok = g.Best(tb.gen, []string{"zeppelin"}, Filter{}, 10)
	if !ok || !slices.Equal(keysOf(hits), []int64{2, 3, 4}) {
		t.Fatalf("after the rebuild: %v, %v", hits, ok)
	}
	if g.State() != Ready || g.Ranked() != 2 {
		t.Fatalf("state %q, %d searches answered", g.State(), g.Ranked())
	}
	// A failed write changes nothing.
	w := g.Begin()
	w.Add(Doc{Key: 5, Text: "zeppelin five"})
	w.Gen = tb.gen + 1
	g.End(w, context.Canceled)
	if hits, ok := g.Best(tb.gen, []string{"zeppelin"}, Filter{}, 10); !ok || len(hits) != 3 {
		t.Fatalf("after a failed write: %v, %v", hits, ok)
	}
}

// TestSeqCache_CatchUp: a search catches up a few changed rows itself,
// leaves many to a catch-up in the background (and FTS5), and a deletion
// builds the cache again; rows changed between the chunks of a catch-up
// come again in a later chunk.
func TestSeqCache_CatchUp(t *testing.T) {
	ctx := context.Background()
	tb := newTable()
	docs := corpus(1500, 9)
	for _, d := range docs[:1000] {
		tb.put(d)
	}
	u := NewSeqCache(tb, true, "")
	chunks := 0
	u.BetweenChunks = func() {
		if chunks++; chunks == 1 {
			d := docs[0]
			d.Text = "quagga okapi"
			tb.put(d) // a row of the first chunk, changed behind its back
		}
	}
	search := func(q string) ([]Hit, bool) {
		t.Helper()
		hits, ok, err := u.Best(ctx, nil, []string{q}, Filter{}, 2000)
		if err != nil {
			t.Fatal(err)
		}
		return hits, ok
	}
	if _, ok := search("kafka"); ok {
		t.Fatal("a cache not warm answered")
	}
	u.Warm()
	u.Wait()
	if hits, ok := search("quagga"); !ok || len(hits) != 1 || hits[0].Key != docs[0].Key {
		t.Fatalf("the row changed between chunks: %v, %v (%d pauses)", hits, ok, chunks)
	}
	if in := u.Info(); !in.Current || in.Seq != tb.seq || u.State() != Ready {
		t.Fatalf("after the load: %+v, state %q", in, u.State())
	}

	for _, d := range docs[1000:1010] {
		tb.put(d)
	}
	if hits, ok := search("kafka"); !ok || len(hits) != len(bestOf(docs[1:1010], "kafka")) {
		t.Fatalf("a few changes: %d hits, %v; want %d", len(hits), ok, len(bestOf(docs[1:1010], "kafka")))
	}
	for _, d := range docs[1010:] {
		tb.put(d)
	}
	if _, ok := search("kafka"); ok {
		t.Fatal("a search read more than CatchUpLimit changed rows itself")
	}
	u.Wait()
	want := len(bestOf(docs[1:], "kafka"))
	if hits, ok := search("kafka"); !ok || len(hits) != want {
		t.Fatalf("after the catch-up: %d hits, %v; want %d", len(hits), ok, want)
	}

	known, ok, err := u.Known(ctx, nil, []string{"quagga", "kafka", "zzyzx"})
	if err != nil || !ok || !slices.Equal(known, []bool{true, true, false}) {
		t.Fatalf("Known(quagga, kafka, zzyzx) = %v, %v, %v; want true, true, false", known, ok, err)
	}

	tb.remove(docs[0].Key)
	if _, ok := search("quagga"); ok {
		t.Fatal("answered after a deletion, before a fresh build")
	}
	u.Wait()
	if hits, ok := search("quagga"); !ok || len(hits) != 0 {
		t.Fatalf("the deleted row: %v, %v", hits, ok)
	}
	if known, ok, _ := u.Known(ctx, nil, []string{"quagga"}); !ok || known[0] {
		t.Fatalf("Known(quagga) after its row's deletion = %v, %v; want false", known, ok)
	}
	rows, _, _, _ := tb.Changes(ctx, 0, 2)
	scored, ok, err := u.Score(ctx, nil, []string{"the"}, []string{rows[0].ID, rows[1].ID, "no-such-id"})
	if err != nil || !ok || len(scored) > 2 {
		t.Fatalf("scores of two rows: %v, %v, %v", scored, ok, err)
	}
	for _, h := range scored {
		if h.ID != rows[0].ID && h.ID != rows[1].ID {
			t.Errorf("a row not asked for scored: %v", h)
		}
	}
}

// bestOf is the docs whose text or second column holds q, not hidden.
func bestOf(docs []Doc, q string) []int64 {
	var keys []int64
	for _, d := range docs {
		in := false
		Tokens(d.Text+" "+d.Second, func(tok string) { in = in || tok == q })
		if in && !d.Hidden {
			keys = append(keys, d.Key)
		}
	}
	return keys
}
