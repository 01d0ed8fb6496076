package vecindex

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/vecrow"
)

// TestMatrix_Chunks grows a matrix over several chunks of codes, in the
// batches Apply gives it (the chunks allocated beforehand) and row by row,
// removes rows until chunks empty, and checks after each step that every
// row holds its own vector's codes and that no chunk is empty or missing.
func TestMatrix_Chunks(t *testing.T) {
	const dim = 8
	rng := rand.New(rand.NewPCG(5, 5))
	units := map[string][]float32{}
	row := func(id string) vecrow.Row {
		u, ok := units[id]
		if !ok {
			v := make([]float32, dim)
			for i := range v {
				v[i] = float32(rng.NormFloat64())
			}
			u = make([]float32, dim)
			vecrow.Normalize(u, v)
			units[id] = u
		}
		return vecrow.Row{ID: id, Kind: "turn", Namespace: "n", Vec: vecrow.AppendUnit(nil, u)}
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
			if !m.sameRow(r, vecrow.AppendUnit(nil, units[id])) {
				t.Fatalf("%s: row %d does not hold %s's codes", when, r, id)
			}
		}
	}
	// Batches as Apply puts them: the chunks made first, outside the lock.
	for b := range 5 {
		var rs []vecrow.Row
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
		m.put([]vecrow.Row{row(fmt.Sprintf("r-%d", i))})
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

// TestMatrix_SharedScan checks that a scan shared by several goroutines,
// each taking blocks of rows as it goes, keeps exactly the rows one
// goroutine scanning them in order keeps: with clustered rows (the
// filter's namespace only in the second half, where fixed halves gave one
// goroutine all the work) and with ties (many copies of a few vectors, so
// the rows kept at the boundary depend on the tie rule, earlier rows first).
func TestMatrix_SharedScan(t *testing.T) {
	const dim, rows = 8, 3 * parallelScanRows
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	rng := rand.New(rand.NewPCG(7, 7))
	distinct := make([][]byte, 40)
	for i := range distinct {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		u := make([]float32, dim)
		vecrow.Normalize(u, v)
		distinct[i] = vecrow.AppendUnit(nil, u)
	}
	m := newMatrix(dim, rows)
	for i := range rows {
		ns := "a"
		if i >= rows/2 && i%3 != 0 {
			ns = "b"
		}
		rs := []vecrow.Row{{ID: fmt.Sprintf("r%06d", i), Kind: "turn", Namespace: ns, Vec: distinct[rng.IntN(len(distinct))]}}
		for _, c := range m.chunksFor(1) {
			m.codes = append(m.codes, c)
		}
		m.put(rs)
	}
	q := make([]float32, dim)
	for i := range q {
		q[i] = float32(rng.NormFloat64())
	}
	vecrow.Normalize(q, q)
	for _, ns := range []string{"a", "b", ""} {
		for _, k := range []int{1, 10, 500, 5000} {
			f := m.filterFor(engram.VectorQuery{Namespace: ns, K: k})
			one := &topK{k: k}
			if err := m.scan(t.Context(), q, f, 0, m.len(), one); err != nil {
				t.Fatal(err)
			}
			shared := &topK{k: k}
			if err := m.search(t.Context(), q, f, nil, shared); err != nil {
				t.Fatal(err)
			}
			want, got := m.hits(one), m.hits(shared)
			if !slices.Equal(got, want) {
				t.Fatalf("namespace %q, k %d: a shared scan kept %d rows that differ from one scan's %d (first: %v, want %v)",
					ns, k, len(got), len(want), got[:min(3, len(got))], want[:min(3, len(want))])
			}
		}
	}
}
