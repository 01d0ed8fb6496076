package vecindex

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

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
