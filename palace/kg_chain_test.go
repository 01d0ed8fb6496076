package palace

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	engram "github.com/engram-dev/engram"
)

// TestApplyTriplesRebuildsFromTheChange: ApplyTriples rebuilds a chain from
// the group before its first new statement on, and leaves the graph as a
// rebuild of every chain from all its statements would: batches of
// statements in any time order, at equal times, repeated with new
// sources, of single-valued, liked and multi-valued predicates.
func TestApplyTriplesRebuildsFromTheChange(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			ctx := context.Background()
			db := MustOpenDB(t)
			rng := rand.New(rand.NewPCG(seed, 7))
			pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
			t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
			for batch := range 25 {
				var ts []engram.Triple
				for i := range 1 + rng.IntN(12) {
					ts = append(ts, engram.Triple{
						Namespace: "team",
						Subject:   pick("Alice", "Bob"),
						Predicate: pick("lives_in", "likes", "dislikes", "visited"),
						Object:    pick("Berlin", "Lisbon", "coffee", "tea"),
						ValidFrom: t0.Add(time.Duration(rng.IntN(40)) * time.Hour),
						Sources:   []string{fmt.Sprintf("turn-%02d", rng.IntN(30))},
						Memory:    fmt.Sprintf("mem-%d-%d", batch, i),
					})
				}
				if err := db.ApplyTriples(ctx, "l4-graph", ts, int64(batch+1)); err != nil {
					t.Fatal(err)
				}
				got := graphRows(t, db)
				err := db.Update(ctx, func(tx *sql.Tx) error {
					_, err := rebuildChainsWhere(ctx, tx, "1")
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
				if want := graphRows(t, db); !reflect.DeepEqual(got, want) {
					t.Fatalf("batch %d: the graph after ApplyTriples\n%v\nwant, as every chain rebuilt whole\n%v", batch, got, want)
				}
			}
		})
	}
}

// graphRows reads every triple with its keyword row's text, by id.
func graphRows(t *testing.T, db *DB) []string {
	t.Helper()
	rows, err := db.r.Query(`SELECT t.id, t.chain, t.subject, t.predicate, t.object, t.valid_from, coalesce(t.valid_to, -1),
		t.confidence, t.sources, t.memory, coalesce(f.text, '<no keyword row>')
		FROM kg_triples t LEFT JOIN kg_fts f ON f.rowid = t.n ORDER BY t.id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, chain, pred, srcs, mem, text string
		var subj, obj, from, to int64
		var conf float64
		if err := rows.Scan(&id, &chain, &subj, &pred, &obj, &from, &to, &conf, &srcs, &mem, &text); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprint(id, chain, subj, pred, obj, from, to, conf, srcs, mem, text))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var fts int
	if err := db.r.QueryRow(`SELECT count(*) FROM kg_fts`).Scan(&fts); err != nil {
		t.Fatal(err)
	}
	if fts != len(out) {
		t.Fatalf("%d keyword rows for %d triples", fts, len(out))
	}
	return out
}
