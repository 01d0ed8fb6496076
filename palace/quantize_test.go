package palace

import (
	"cmp"
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	engram "github.com/engram-dev/engram"
)

// TestQuantizedRecall measures the int8 matrix against exact float32
// search on clustered vectors (the benchmark corpus): the top 10 by the
// codes alone, and what Query returns after rescoring its candidates with
// the vectors stored in half precision. The codes alone find most of the
// true top 10; after rescoring every true top 10 is found, with scores
// within 0.001 of the exact ones (docs/benchmarks.md quotes the figures this
// logs).
func TestQuantizedRecall(t *testing.T) {
	const n, dim, queries, k = 4_000, 512, 100, 10
	db := MustOpenDB(t)
	ctx := context.Background()
	v, err := db.Vectors(ctx, "quant-512", dim)
	if err != nil {
		t.Fatal(err)
	}
	c := newVecCorpus(11, dim, 200)
	var all []engram.VectorItem
	for i := 0; i < n; i += 1000 {
		items := c.items(i, min(i+1000, n))
		if err := v.Upsert(ctx, items); err != nil {
			t.Fatal(err)
		}
		all = append(all, items...)
	}
	if err := v.Load(ctx); err != nil {
		t.Fatal(err)
	}
	units := make([][]float32, len(all))
	for i, it := range all {
		units[i] = make([]float32, dim)
		normalize(units[i], it.Vector)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	var codesFound, queryFound int
	for range queries {
		q := c.Vector()
		if rng.IntN(2) == 0 { // half the queries far from every centre
			q = c.Noise(1)
		}
		unit := make([]float32, dim)
		normalize(unit, q)
		exact := make([]scored, len(units))
		for i, u := range units {
			exact[i] = scored{dot(unit, u), int32(i)}
		}
		slices.SortFunc(exact, func(a, b scored) int { return -cmp.Compare(a.score, b.score) })
		want := map[string]bool{}
		for _, s := range exact[:k] {
			want[all[s.row].ID] = true
		}
		// The codes alone.
		top := &topK{k: k}
		v.mu.RLock()
		err := v.mem.search(ctx, unit, filter{all: true, anyNS: true}, nil, top)
		var byCodes []engram.VectorHit
		if err == nil {
			byCodes = v.mem.hits(top)
		}
		v.mu.RUnlock()
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range byCodes {
			if want[h.ID] {
				codesFound++
			}
		}
		hits, err := v.Query(ctx, engram.VectorQuery{Vector: q, K: k})
		if err != nil {
			t.Fatal(err)
		}
		for i, h := range hits {
			if want[h.ID] {
				queryFound++
			}
			// Rescored with the vectors stored in half precision.
			if d := h.Score - float64(exact[i].score); d > 1e-3 || d < -1e-3 {
				t.Fatalf("hit %d scores %v, the exact cosine is %v", i, h.Score, exact[i].score)
			}
		}
	}
	codes, query := float64(codesFound)/(queries*k), float64(queryFound)/(queries*k)
	t.Logf("recall@10 against exact search over %d vectors of %d: codes alone %.4f, after rescoring %.4f", n, dim, codes, query)
	if codes < 0.9 || query < 0.999 {
		t.Errorf("recall@10: codes alone %.4f (want >= 0.9), after rescoring %.4f (want >= 0.999)", codes, query)
	}
}
