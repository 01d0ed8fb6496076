package idmap

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestMap_SameAsMap adds and removes ids at random, as the matrix does
// (the last row moving into a removed one's place), and checks after each
// step that the map agrees with a map[string]int and a slice kept the same
// way: every id's row, every row's id, absent ids absent. The ids' lengths
// vary up to 300 bytes so that the arena is compacted on the way, and the
// table is rehashed as it grows from its smallest size.
func TestMap_SameAsMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 11))
	m := New(0)
	want := map[string]int{}
	var rows []string
	compactions := 0
	check := func(step int) {
		t.Helper()
		if m.Len() != len(rows) {
			t.Fatalf("step %d: %d rows, want %d", step, m.Len(), len(rows))
		}
		for r, id := range rows {
			if got := m.ID(r); got != id {
				t.Fatalf("step %d: row %d holds %q, want %q", step, r, got, id)
			}
			if got, ok := m.Row(id); !ok || got != r {
				t.Fatalf("step %d: %q is at row %d (found %v), want %d", step, id, got, ok, r)
			}
		}
	}
	for step := range 20000 {
		if len(rows) == 0 || rng.IntN(5) < 3 {
			id := fmt.Sprintf("%d-%s", rng.IntN(1<<30), strings.Repeat("x", rng.IntN(300)))
			if _, ok := want[id]; ok {
				continue
			}
			if r := m.Add(id); r != len(rows) {
				t.Fatalf("step %d: added at row %d, want %d", step, r, len(rows))
			}
			want[id] = len(rows)
			rows = append(rows, id)
		} else {
			id := rows[rng.IntN(len(rows))]
			dead := m.dead
			r, last, ok := m.Remove(id)
			if !ok || r != want[id] || last != len(rows)-1 {
				t.Fatalf("step %d: remove %q gave row %d, last %d, %v; want %d, %d", step, id, r, last, ok, want[id], len(rows)-1)
			}
			if m.dead < dead {
				compactions++
			}
			delete(want, id)
			if r != last {
				rows[r] = rows[last]
				want[rows[r]] = r
			}
			rows = rows[:last]
			if _, ok := m.Row(id); ok {
				t.Fatalf("step %d: %q found after its removal", step, id)
			}
		}
		if step%100 == 0 || step > 19900 {
			check(step)
		}
	}
	if compactions == 0 {
		t.Fatalf("the arena was never compacted (%d dead bytes of %d)", m.dead, len(m.arena))
	}
	if _, ok := m.Row("never added"); ok {
		t.Fatal("an id never added was found")
	}

	// Exported and built again, the map holds the same rows, and goes on
	// adding and removing as the original would.
	ids, lens := m.Export()
	if back, ok := FromIDs(ids, lens); !ok {
		t.Fatal("FromIDs refused what Export gave")
	} else {
		for r, id := range rows {
			if got, ok := back.Row(id); !ok || got != r || back.ID(r) != id {
				t.Fatalf("from the export: %q at row %d (%v), want %d", id, got, ok, r)
			}
		}
		if r := back.Add("one more"); r != len(rows) {
			t.Fatalf("added after FromIDs at row %d, want %d", r, len(rows))
		}
		if r, _, ok := back.Remove(rows[0]); !ok || r != 0 {
			t.Fatalf("removed after FromIDs: row %d, %v", r, ok)
		}
		if _, ok := back.Row(rows[0]); ok {
			t.Fatal("found after its removal")
		}
	}
	if _, ok := FromIDs(ids, append(lens[:len(lens):len(lens)], 1)); ok {
		t.Fatal("FromIDs took lengths that run past the ids")
	}
	if _, ok := FromIDs([]byte("abab"), []uint32{2, 2}); ok {
		t.Fatal("FromIDs took an id twice")
	}
	if _, ok := FromIDs([]byte("abcd"), []uint32{2}); ok {
		t.Fatal("FromIDs took ids with bytes left over")
	}
}
