package palace

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/kwindex"
	"github.com/engram-dev/engram/internal/testutil"
)

// TestNearDuplicatePair checks the cheap near-duplicate lookup
// (nearDupPair) against the query it replaces (allButOneExpr): for
// memories of a small vocabulary, with rationales and entities, the same
// memory is found, or none.
func TestNearDuplicatePair(t *testing.T) {
	testutil.LongRun(t)
	ctx := context.Background()
	db := MustOpenDB(t)
	words := strings.Fields(`ana moved lisbon works acme loves sea hiking guitar plans trip japan april decided postgres
		billing team friday dinner family sister daughter painting garden`)
	rng := rand.New(rand.NewPCG(5, 6))
	sentence := sentenceOf(words, rng)
	var mems []engram.Memory
	for i := range 400 {
		m := engram.Memory{ID: fmt.Sprintf("m%d", i), Namespace: "default", Type: engram.MemoryFact, Subject: "Ana",
			Text: sentence(4 + rng.IntN(6)), Sources: []string{fmt.Sprintf("t%d", i)}, TS: time.Date(2026, 5, 1, 0, 0, i, 0, time.UTC)}
		if i%3 == 0 {
			m.Rationale = sentence(2)
		}
		if i%4 == 0 {
			m.Entities = []string{words[rng.IntN(len(words))]}
		}
		mems = append(mems, m)
	}
	if _, err := db.PutMemories(ctx, "test", mems, 0); err != nil {
		t.Fatal(err)
	}
	found := 0
	for i := range 300 {
		probe := engram.Memory{Namespace: "default", Type: engram.MemoryFact, Subject: "Ana", Text: mems[rng.IntN(len(mems))].Text}
		if i%2 == 1 {
			probe.Text = sentence(3 + rng.IntN(8))
		}
		pw := contentWords(probe.Text)
		err := db.Update(ctx, func(tx *sql.Tx) error {
			got, err := db.nearDuplicateIn(ctx, tx, probe, pw)
			if err != nil {
				return err
			}
			want, err := db.nearDuplicateAllButOne(ctx, tx, probe, pw)
			if err != nil {
				return err
			}
			switch {
			case (got == nil) != (want == nil):
				t.Errorf("%q: pair lookup %v, all-but-one %v", probe.Text, got, want)
			case got != nil && got.n != want.n:
				t.Errorf("%q: pair lookup found %d, all-but-one %d", probe.Text, got.n, want.n)
			case got != nil:
				found++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if found < 50 {
		t.Errorf("only %d of 300 lookups found a near duplicate: the test shows little", found)
	}
}

// nearDuplicateAllButOne is nearDuplicate with the query it had before
// nearDupPair.
func (db *DB) nearDuplicateAllButOne(ctx context.Context, tx *sql.Tx, m engram.Memory, words []string) (*storedMemory, error) {
	terms, err := kwindex.QueryTerms(m.Text)
	if err != nil || len(terms) == 0 {
		return nil, err
	}
	q, err := db.writeStmt(ctx, tx, qNearDuplicates)
	if err != nil {
		return nil, err
	}
	hit, err := nearDuplicateBy(ctx, q, m, words, allButOneExpr(terms), nearDupCandidates, func(string) bool { return true })
	if err != nil || hit.n == 0 {
		return nil, err
	}
	return db.loadMemory(ctx, tx, whereMemoryN, hit.n)
}

// TestPutMemoriesSplit checks that a batch of memories stored in several
// transactions (PutMemories commits early when the turn index waits for
// the writer; splitWrites makes it commit after every memory) stores what
// one transaction stores: the same memories inserted, merged into the same
// ones and superseded alike, for batches whose memories are near
// duplicates of each other, of older ones, and contradict older ones; and
// that a batch stored again (after a crash between its transactions) adds
// nothing.
func TestPutMemoriesSplit(t *testing.T) {
	testutil.LongRun(t)
	ctx := context.Background()
	split, whole := MustOpenDB(t), MustOpenDB(t)
	split.splitWrites = true
	words := strings.Fields(`ana moved lisbon works acme loves sea hiking guitar plans trip japan april decided postgres
		billing team friday dinner family`)
	places := []string{"Lisbon", "Porto", "Berlin", "Tokyo"}
	rng := rand.New(rand.NewPCG(7, 8))
	sentence := sentenceOf(words, rng)
	var texts []string
	var last []engram.Memory
	id := 0
	for batch := range 60 {
		var mems []engram.Memory
		for range 1 + rng.IntN(8) {
			id++
			text := sentence(4 + rng.IntN(5))
			if len(texts) > 0 && rng.IntN(2) == 0 {
				// A near duplicate of an earlier memory, of this batch or older.
				old := strings.Fields(texts[rng.IntN(len(texts))])
				old[rng.IntN(len(old))] = words[rng.IntN(len(words))]
				text = strings.Join(old, " ")
			}
			texts = append(texts, text)
			m := engram.Memory{ID: fmt.Sprintf("m%d", id), Namespace: "default", Type: engram.MemoryFact,
				Subject: []string{"Ana", "Ben"}[rng.IntN(2)], Text: text, Sources: []string{fmt.Sprintf("t%d", id)},
				TS: time.Date(2026, 5, 1, 0, 0, id, 0, time.UTC)}
			if rng.IntN(4) == 0 {
				p := places[rng.IntN(len(places))]
				m.Text = m.Subject + " lives in " + p
				m.Relation = &engram.Relation{Subject: m.Subject, Predicate: "lives_in", Object: p}
			}
			mems = append(mems, m)
		}
		a, err := split.PutMemories(ctx, "test", mems, int64(batch))
		if err != nil {
			t.Fatal(err)
		}
		b, err := whole.PutMemories(ctx, "test", mems, int64(batch))
		if err != nil {
			t.Fatal(err)
		}
		if a != b {
			t.Fatalf("batch %d: split %+v, whole %+v", batch, a, b)
		}
		last = mems
	}
	got, want := storedMemories(t, split), storedMemories(t, whole)
	if got != want {
		t.Errorf("the palaces differ:\nsplit:\n%s\nwhole:\n%s", got, want)
	}
	if !strings.Contains(want, "merged") || !strings.Contains(want, "superseded") {
		t.Errorf("no memory was merged or superseded; the test shows little:\n%s", want)
	}
	if _, err := split.PutMemories(ctx, "test", last, 59); err != nil {
		t.Fatal(err)
	}
	if again := storedMemories(t, split); again != got {
		t.Errorf("the last batch stored again changed the palace:\n%s\nwas:\n%s", again, got)
	}
}

// storedMemories lists db's memories and merges, a line each.
func storedMemories(t *testing.T, db *DB) string {
	t.Helper()
	var b strings.Builder
	rows, err := db.r.Query(`SELECT id, text, sources, importance, coalesce(superseded_by, '') FROM memories ORDER BY n`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, text, srcs, sup string
		var imp float64
		if err := rows.Scan(&id, &text, &srcs, &imp, &sup); err != nil {
			t.Fatal(err)
		}
		if sup != "" {
			sup = " superseded by " + sup
		}
		fmt.Fprintf(&b, "%s %q %s %.2f%s\n", id, text, srcs, imp, sup)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows, err = db.r.Query(`SELECT id, memory FROM memory_merges ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, into string
		if err := rows.Scan(&id, &into); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s merged into %s\n", id, into)
	}
	return b.String()
}

// sentenceOf returns a maker of sentences of n words drawn from words.
func sentenceOf(words []string, rng *rand.Rand) func(n int) string {
	return func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = words[rng.IntN(len(words))]
		}
		return strings.Join(w, " ")
	}
}
