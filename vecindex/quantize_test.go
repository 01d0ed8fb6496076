package vecindex_test

import (
	"cmp"
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/vecrow"
	"github.com/engram-dev/engram/internal/vectortest"
	"github.com/engram-dev/engram/vecindex"
)

// TestQuantizedRecall measures the stored int8 codes against exact float32
// search on clustered vectors (the benchmark corpus): how many of the true
// top 10 Query returns, and that its scores are the cosines of the vectors
// as stored, within 0.005 of the exact ones (docs/benchmarks.md quotes the
// figure this logs).
func TestQuantizedRecall(t *testing.T) {
	const n, dim, queries, k = 4_000, 512, 100, 10
	ctx := context.Background()
	v := openIndex(t, openDB(t), "quant-512", dim)
	c := newVecCorpus(11, dim, 200)
	var all []engram.VectorItem
	for i := 0; i < n; i += 1000 {
		items := c.items(i, min(i+1000, n))
		if err := v.Upsert(ctx, items); err != nil {
			t.Fatal(err)
		}
		all = append(all, items...)
	}
	units := make([][]float32, len(all))
	stored := map[string][]float32{}
	for i, it := range all {
		units[i] = make([]float32, dim)
		vecrow.Normalize(units[i], it.Vector)
		stored[it.ID] = vectortest.AsStored(it.Vector)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	var found int
	var worst float64
	for range queries {
		q := c.Vector()
		if rng.IntN(2) == 0 { // half the queries far from every centre
			q = c.Noise(1)
		}
		unit := make([]float32, dim)
		vecrow.Normalize(unit, q)
		type scored struct {
			score float32
			row   int32
		}
		exact := make([]scored, len(units))
		for i, u := range units {
			exact[i] = scored{vecindex.Dot(unit, u), int32(i)}
		}
		slices.SortFunc(exact, func(a, b scored) int { return -cmp.Compare(a.score, b.score) })
		want := map[string]float32{}
		for _, s := range exact[:k] {
			want[all[s.row].ID] = s.score
		}
		hits, err := v.Query(ctx, engram.VectorQuery{Vector: q, K: k})
		if err != nil {
			t.Fatal(err)
		}
		for i, h := range hits {
			if _, ok := want[h.ID]; ok {
				found++
			}
			if d := h.Score - float64(vecindex.Dot(unit, stored[h.ID])); math.Abs(d) > 1e-5 {
				t.Fatalf("hit %d (%s) scores %v, its cosine with the vector as stored is %v", i, h.ID, h.Score, h.Score-d)
			}
			worst = max(worst, math.Abs(float64(exact[i].score)-h.Score))
		}
	}
	recall := float64(found) / (queries * k)
	t.Logf("recall@10 against exact float32 search over %d vectors of %d: %.4f; scores at most %.4f from the exact ones", n, dim, recall, worst)
	if recall < 0.95 || worst > 0.005 {
		t.Errorf("recall@10 %.4f (want >= 0.95), scores up to %.4f from the exact ones (want <= 0.005)", recall, worst)
	}
}
