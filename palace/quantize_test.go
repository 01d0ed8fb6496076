package palace

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	engram "github.com/engram-dev/engram"
)

// TestQuantizedRecall measures the stored int8 codes against exact float32
// search on clustered vectors (the benchmark corpus): how many of the true
// top 10 Query returns, and that its scores are the cosines of the vectors
// as stored, within 0.005 of the exact ones (docs/benchmarks.md quotes the
// figure this logs).
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
	units := make([][]float32, len(all))
	stored := map[string][]float32{}
	for i, it := range all {
		units[i] = make([]float32, dim)
		normalize(units[i], it.Vector)
		stored[it.ID] = asStored(it.Vector)
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
		normalize(unit, q)
		exact := make([]scored, len(units))
		for i, u := range units {
			exact[i] = scored{dot(unit, u), int32(i)}
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
			if d := h.Score - float64(dot(unit, stored[h.ID])); math.Abs(d) > 1e-5 {
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

// TestMatrix_Chunks grows a matrix over several chunks of codes, in the
// batches apply gives it (the chunks allocated beforehand) and row by row,
// removes rows until chunks empty, and checks after each step that every
// row holds its own vector's codes and that no chunk is empty or missing.
func TestMatrix_Chunks(t *testing.T) {
	const dim = 8
	rng := rand.New(rand.NewPCG(5, 5))
	units := map[string][]float32{}
	row := func(id string) vecRow {
		u, ok := units[id]
		if !ok {
			v := make([]float32, dim)
			for i := range v {
				v[i] = float32(rng.NormFloat64())
			}
			u = make([]float32, dim)
			normalize(u, v)
			units[id] = u
		}
		return vecRow{id: id, kind: "turn", namespace: "n", vec: appendVector(nil, u)}
	}
	m := newMatrix(dim, 0)
	check := func(when string) {
		t.Helper()
		if want := (m.len() + chunkRows - 1) / chunkRows; len(m.codes) != want {
			t.Fatalf("%s: %d chunks for %d rows, want %d", when, len(m.codes), m.len(), want)
		}
		rows := idRows(m)
		if len(rows) != m.len() {
			t.Fatalf("%s: %d ids mapped, %d rows", when, len(rows), m.len())
		}
		for id, r := range rows {
			if !m.sameRow(r, appendVector(nil, units[id])) {
				t.Fatalf("%s: row %d does not hold %s's codes", when, r, id)
			}
		}
	}
	// Batches as apply puts them: the chunks made first, outside the lock.
	for b := range 5 {
		var rs []vecRow
		for i := range chunkRows/2 + 7 {
			rs = append(rs, row(fmt.Sprintf("b%d-%d", b, i)))
		}
		rs = append(rs, row("b0-1")) // one replaced
		added := m.newRows(rs)
		for _, c := range m.chunksFor(added) {
			if len(m.codes)*chunkRows < m.len()+added {
				m.codes = append(m.codes, c)
			}
		}
		m.put(rs)
		check(fmt.Sprintf("batch %d", b))
	}
	// Row by row, as a load does.
	for i := range chunkRows + 3 {
		m.put([]vecRow{row(fmt.Sprintf("r-%d", i))})
	}
	check("rows one by one")
	// Remove until two chunks have emptied, from the front (the last row
	// moves into the gap) and from the back.
	ids := make([]string, 0, m.len())
	for id := range idRows(m) {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for i, id := range ids[:2*chunkRows+11] {
		m.remove(id)
		delete(units, id)
		if i%997 == 0 {
			check(fmt.Sprintf("after %d removals", i+1))
		}
	}
	check("after the removals")
}

// idRows returns the row of each id of m, found through its id map; an id
// whose lookup does not give back its row is left out.
func idRows(m *matrix) map[string]int {
	rows := make(map[string]int, m.len())
	for r := range m.len() {
		id := m.ids.ID(r)
		if got, ok := m.ids.Row(id); ok && got == r {
			rows[id] = r
		}
	}
	return rows
}
