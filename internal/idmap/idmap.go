// Package idmap numbers string ids compactly: the rows of the palace's
// in-memory vectors, the archive's turn ids.
package idmap

import (
	"hash/maphash"
	"slices"
)

// Map holds ids by row: the id of each row, and the row of each id.
// The ids' bytes lie end to end in one arena, a row's place in it two
// uint32s; the rows are found through an open-addressing table of row
// numbers (linear probing, maphash). That is less than half the memory a
// []string and a map[string]int took, in four allocations the garbage
// collector need not look into where there were one string a row and a map
// of them (docs/benchmarks.md). The caller keeps what it maps an id to in slices
// by row.
//
// Rows are numbered from 0 with no gaps: Remove moves the last row into
// the place it frees, and the caller moves its own columns the same way.
// A Map is not safe for concurrent use.
type Map struct {
	seed  maphash.Seed
	arena []byte   // the ids' bytes, the removed ones' too until a compaction
	off   []uint32 // by row: where its id starts in arena
	size  []uint32 // by row: its id's length
	slots []int32  // row + 1, 0 for an empty slot; a power of two long
	dead  int      // bytes of arena no row points to
}

// New returns a Map with room for capacity ids.
func New(capacity int) Map {
	m := Map{seed: maphash.MakeSeed(), off: make([]uint32, 0, capacity), size: make([]uint32, 0, capacity)}
	m.slots = make([]int32, slotsFor(capacity))
	return m
}

// slotsFor returns the table length for n ids: a power of two at least
// 4/3 of n (at most three quarters full), and at least 8.
func slotsFor(n int) int {
	s := 8
	for s*3 < n*4 {
		s *= 2
	}
	return s
}

// Len returns the number of rows.
func (m *Map) Len() int { return len(m.off) }

// idBytes returns row r's id as it lies in the arena; the caller must not
// keep or change it.
func (m *Map) idBytes(r int) []byte {
	o := m.off[r]
	return m.arena[o : o+m.size[r] : o+m.size[r]]
}

// ID returns row r's id.
func (m *Map) ID(r int) string { return string(m.idBytes(r)) }

// find returns the slot of id, or the empty slot where it would go.
func (m *Map) find(id string) (slot int, found bool) {
	mask := len(m.slots) - 1
	for i := int(maphash.String(m.seed, id)) & mask; ; i = (i + 1) & mask {
		r := m.slots[i]
		if r == 0 {
			return i, false
		}
		if string(m.idBytes(int(r-1))) == id {
			return i, true
		}
	}
}

// Export returns the ids end to end in row order, and their lengths: what
// FromIDs takes to build the same Map again.
func (m *Map) Export() (ids []byte, lens []uint32) {
	ids = make([]byte, 0, len(m.arena)-m.dead)
	for r := range m.Len() {
		ids = append(ids, m.idBytes(r)...)
	}
	return ids, slices.Clone(m.size)
}

// FromIDs returns the Map whose row r is the r-th id of ids, which lie end
// to end, each lens long (as Export returns them); the Map keeps ids as
// its arena. It reports false when lens run past ids' end or an id comes
// twice.
func FromIDs(ids []byte, lens []uint32) (Map, bool) {
	m := Map{seed: maphash.MakeSeed(), arena: ids, size: lens, off: make([]uint32, len(lens))}
	m.slots = make([]int32, slotsFor(len(lens)))
	mask := len(m.slots) - 1
	var o uint64
	for r, n := range lens {
		if o+uint64(n) > uint64(len(ids)) {
			return Map{}, false
		}
		m.off[r] = uint32(o)
		o += uint64(n)
		id := m.idBytes(r)
		i := int(maphash.Bytes(m.seed, id)) & mask
		for ; m.slots[i] != 0; i = (i + 1) & mask {
			if string(m.idBytes(int(m.slots[i]-1))) == string(id) {
				return Map{}, false
			}
		}
		m.slots[i] = int32(r + 1)
	}
	return m, o == uint64(len(ids))
}

// Row returns the row of id.
func (m *Map) Row(id string) (int, bool) {
	s, ok := m.find(id)
	if !ok {
		return 0, false
	}
	return int(m.slots[s] - 1), true
}

// Add appends a row for id, which must not be in m, and returns it.
func (m *Map) Add(id string) int {
	if (m.Len()+1)*4 > len(m.slots)*3 {
		m.grow(slotsFor(m.Len() + 1))
	}
	r := m.Len()
	s, _ := m.find(id)
	m.slots[s] = int32(r + 1)
	m.off = append(m.off, uint32(len(m.arena)))
	m.size = append(m.size, uint32(len(id)))
	m.arena = append(m.arena, id...)
	return r
}

// grow rehashes every row into a table of n slots.
func (m *Map) grow(n int) {
	m.slots = make([]int32, n)
	for r := range m.Len() {
		s, _ := m.find(string(m.idBytes(r)))
		m.slots[s] = int32(r + 1)
	}
}

// Remove deletes id's row, moving the last row into its place, and
// returns the row it had and the last row's number before: the caller
// moves its own columns the same way. ok is false when id has no row.
func (m *Map) Remove(id string) (r, last int, ok bool) {
	s, found := m.find(id)
	if !found {
		return 0, 0, false
	}
	r, last = int(m.slots[s]-1), m.Len()-1
	m.dead += int(m.size[r])
	m.clearSlot(s)
	if r != last {
		ls, _ := m.find(string(m.idBytes(last)))
		m.slots[ls] = int32(r + 1)
		m.off[r], m.size[r] = m.off[last], m.size[last]
	}
	m.off, m.size = m.off[:last], m.size[:last]
	if m.dead > len(m.arena)/2 && m.dead >= 1<<16 {
		m.compact()
	}
	return r, last, true
}

// clearSlot empties slot s and moves back the entries after it that
// probing would no longer reach (backward-shift deletion), so that a
// lookup still stops at the first empty slot.
func (m *Map) clearSlot(s int) {
	mask := len(m.slots) - 1
	for j := (s + 1) & mask; m.slots[j] != 0; j = (j + 1) & mask {
		home := int(maphash.Bytes(m.seed, m.idBytes(int(m.slots[j]-1)))) & mask
		// The entry at j may move to s unless its home lies cyclically
		// in (s, j].
		if (j > s && (home <= s || home > j)) || (j < s && home <= s && home > j) {
			m.slots[s] = m.slots[j]
			s = j
		}
	}
	m.slots[s] = 0
}

// Trim gives the ids' memory its length as capacity (a map grows by
// doubling), leaving the removed ids behind: for after a bulk load.
func (m *Map) Trim() {
	if cap(m.arena) > len(m.arena) || m.dead > 0 {
		m.compact()
	}
	if cap(m.off) > len(m.off) {
		m.off, m.size = slices.Clone(m.off), slices.Clone(m.size)
	}
}

// compact copies the ids of the rows into a new arena, leaving the removed
// ones behind.
func (m *Map) compact() {
	arena := make([]byte, 0, len(m.arena)-m.dead)
	for r := range m.Len() {
		b := m.idBytes(r)
		m.off[r] = uint32(len(arena))
		arena = append(arena, b...)
	}
	m.arena, m.dead = arena, 0
}
