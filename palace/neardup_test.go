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
)

// TestNearDuplicatePair checks the cheap near-duplicate lookup
// (nearDupPair) against the query it replaces (allButOneExpr): for
// memories of a small vocabulary, with rationales and entities, the same
// memory is found, or none.
func TestNearDuplicatePair(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	words := strings.Fields(`ana moved lisbon works acme loves sea hiking guitar plans trip japan april decided postgres
		billing team friday dinner family sister daughter painting garden`)
	rng := rand.New(rand.NewPCG(5, 6))
	sentence := func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = words[rng.IntN(len(words))]
		}
		return strings.Join(w, " ")
	}
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
			got, err := db.nearDuplicate(ctx, tx, probe, pw)
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
	terms, err := queryTerms(m.Text)
	if err != nil || len(terms) == 0 {
		return nil, err
	}
	return db.nearDuplicateBy(ctx, tx, m, words, allButOneExpr(terms), nearDupCandidates, func(string) bool { return true })
}
