package palace

import (
	"context"
	"database/sql"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/hitlist"
	"github.com/engram-dev/engram/internal/kwindex"
)

// TestSearchTurns_ParallelRanking: above parallelRankRows turns the keyword
// ranking is made in rowid ranges at once; it must equal the ranking of
// one query over the whole index, scores included. The palace lowers the
// threshold: the merge does not depend on the size, and a palace of the
// default's size took most of the test's time to write.
func TestSearchTurns_ParallelRanking(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("one processor: the ranking is never cut into ranges")
	}
	db := MustOpenDB(t)
	db.parallelRank = 2_000
	ctx := context.Background()
	words := strings.Fields("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon")
	rng := rand.New(rand.NewPCG(7, 7))
	var turns []engram.Turn
	for i := int64(1); i <= db.parallelRank+500; i++ {
		n := 3 + rng.IntN(8)
		w := make([]string, n)
		for j := range w {
			w[j] = words[rng.IntN(len(words))]
		}
		tt := testTurn(i, strings.Join(w, " "))
		tt.Namespace = []string{"default", "other"}[i%2]
		turns = append(turns, tt)
		if len(turns) == 500 {
			mustPut(t, db, turns...)
			turns = turns[:0]
		}
	}
	mustPut(t, db, turns...)
	for _, q := range []engram.TextQuery{
		{Text: "alpha omicron", Limit: 10},
		{Text: "sigma tau upsilon", Limit: 100, Namespace: "other"},
		{Text: "kappa", Limit: 37},
	} {
		got, err := db.SearchTurns(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		// One query over the whole index.
		terms, _ := kwindex.QueryTerms(q.Text)
		one := search{List: hitlist.New(q.Limit), ns: q.Namespace}
		if err := db.View(ctx, func(tx *sql.Tx) error { return one.keyword(ctx, tx, terms, 0, 0) }); err != nil {
			t.Fatal(err)
		}
		if len(got) != q.Limit || len(one.Hits) != q.Limit {
			t.Fatalf("%q: %d and %d hits, want %d", q.Text, len(got), len(one.Hits), q.Limit)
		}
		for i := range got {
			// Equal scores may come in another order; the scores may not.
			if got[i].Score != one.Hits[i].Score {
				t.Fatalf("%q: hit %d scores %v in ranges, %v in one query", q.Text, i, got[i].Score, one.Hits[i].Score)
			}
		}
	}
}
