package vecindex

import (
	"cmp"
	"context"
	"errors"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/idmap"
	"github.com/engram-dev/engram/internal/vecrow"
)

// matrix is the in-memory copy of one model's vectors as the store keeps
// them: each row's int8 codes and their scale (see quantize), a quarter of
// the float32 rows' memory and of the memory a scan reads; the metadata
// queries filter on sit in parallel slices. Namespaces and kinds are
// interned to small codes, so a filter compares integers. The scan scores
// a row by the scale times the dot product of the query with the codes:
// the query's cosine with the vector as stored.
//
// The codes lie in chunks of chunkRows rows, so that the matrix grows a
// chunk at a time: one contiguous slice grew by copying itself into one a
// quarter larger, both alive until the next collection (twice the matrix
// at once while the layer jobs added their vectors), and kept up to a
// quarter of its size unused.
//
// A matrix is not safe for concurrent use; Index guards it.
type matrix struct {
	dim   int
	codes [][]int8  // chunks of chunkRows * dim codes, row r at codes[r/chunkRows][r%chunkRows*dim:]
	scale []float32 // by row
	ids   idmap.Map // the row's id, and the row of an id
	ns    []uint32  // namespace codes
	kinds []uint32  // kind codes
	ts    []int64   // Unix nanoseconds, vecrow.NoTS for a zero time

	nsCode    map[string]uint32
	kindCode  map[string]uint32
	kindNames []string // by code
}

func newMatrix(dim, capacity int) *matrix {
	return &matrix{
		dim:      dim,
		codes:    make([][]int8, 0, (capacity+chunkRows-1)/chunkRows),
		scale:    make([]float32, 0, capacity),
		ids:      idmap.New(capacity),
		ns:       make([]uint32, 0, capacity),
		kinds:    make([]uint32, 0, capacity),
		ts:       make([]int64, 0, capacity),
		nsCode:   make(map[string]uint32),
		kindCode: make(map[string]uint32),
	}
}

// len returns the number of rows.
func (m *matrix) len() int { return m.ids.Len() }

// newRows counts the rows of rs whose ids the matrix lacks.
func (m *matrix) newRows(rs []vecrow.Row) int {
	n := 0
	for _, r := range rs {
		if _, ok := m.ids.Row(r.ID); !ok {
			n++
		}
	}
	return n
}

// chunkRows is the rows of a chunk of codes: 2 MB at 512 dimensions.
const chunkRows = 4096

// code returns the codes of row r.
func (m *matrix) code(r int) []int8 {
	c, o := m.codes[r/chunkRows], r%chunkRows*m.dim
	return c[o : o+m.dim : o+m.dim]
}

// chunksFor returns the chunks rows more rows need beyond those the matrix
// has. It only reads m, so it can run beside queries while the caller
// keeps other writers out.
func (m *matrix) chunksFor(rows int) [][]int8 {
	var out [][]int8
	for have := len(m.codes) * chunkRows; have < m.len()+rows; have += chunkRows {
		out = append(out, make([]int8, chunkRows*m.dim))
	}
	return out
}

// sameRow reports whether row i holds the stored vector raw.
func (m *matrix) sameRow(i int, raw []byte) bool {
	if vecrow.Scale(raw, m.dim) != m.scale[i] {
		return false
	}
	for j, c := range m.code(i) {
		if byte(c) != raw[j] {
			return false
		}
	}
	return true
}

// put inserts or replaces the rows rs; ids must be distinct.
func (m *matrix) put(rs []vecrow.Row) {
	for _, r := range rs {
		i, ok := m.ids.Row(r.ID)
		if !ok {
			i = m.ids.Add(r.ID)
			m.ns = append(m.ns, 0)
			m.kinds = append(m.kinds, 0)
			m.ts = append(m.ts, 0)
			m.scale = append(m.scale, 0)
			if i == len(m.codes)*chunkRows {
				m.codes = append(m.codes, make([]int8, chunkRows*m.dim))
			}
		}
		code := m.code(i)
		for j := range code {
			code[j] = int8(r.Vec[j])
		}
		m.scale[i] = vecrow.Scale(r.Vec, m.dim)
		m.ns[i] = intern(m.nsCode, nil, r.Namespace)
		m.kinds[i] = intern(m.kindCode, &m.kindNames, r.Kind)
		m.ts[i] = r.TS
	}
}

// intern returns the code of s in codes, adding it if new (and appending s
// to names, if given).
func intern(codes map[string]uint32, names *[]string, s string) uint32 {
	if c, ok := codes[s]; ok {
		return c
	}
	c := uint32(len(codes))
	codes[s] = c
	if names != nil {
		*names = append(*names, s)
	}
	return c
}

// remove deletes the row of id, if any, moving the last row into its place.
func (m *matrix) remove(id string) {
	i, last, ok := m.ids.Remove(id)
	if !ok {
		return
	}
	if i != last {
		copy(m.code(i), m.code(last))
		m.ns[i], m.kinds[i], m.ts[i], m.scale[i] = m.ns[last], m.kinds[last], m.ts[last], m.scale[last]
	}
	if last%chunkRows == 0 { // the last chunk is empty now
		m.codes[len(m.codes)-1] = nil
		m.codes = m.codes[:len(m.codes)-1]
	}
	m.ns, m.kinds, m.ts, m.scale = m.ns[:last], m.kinds[:last], m.ts[:last], m.scale[:last]
}

// filter is a VectorQuery's filter resolved against one matrix's codes.
type filter struct {
	none   bool   // nothing can match
	all    bool   // everything matches
	anyNS  bool   // no namespace filter
	ns     uint32 // the namespace's code, if filtered
	kinds  []bool // by kind code; nil for no kind filter
	lo, hi int64  // the time range, inclusive
}

// filterFor resolves q's filter against m.
func (m *matrix) filterFor(q engram.VectorQuery) filter {
	f := filter{anyNS: q.Namespace == ""}
	var ok bool
	if f.lo, f.hi, ok = vecrow.Range(q.From, q.To); !ok {
		return filter{none: true}
	}
	if !f.anyNS {
		if f.ns, ok = m.nsCode[q.Namespace]; !ok {
			return filter{none: true}
		}
	}
	if len(q.Kinds) > 0 {
		f.kinds = make([]bool, len(m.kindNames))
		found := false
		for _, k := range q.Kinds {
			if c, ok := m.kindCode[k]; ok {
				f.kinds[c], found = true, true
			}
		}
		if !found {
			return filter{none: true}
		}
	}
	f.all = f.anyNS && f.kinds == nil && f.lo == math.MinInt64 && f.hi == math.MaxInt64
	return f
}

// pass reports whether row r passes f.
func (f filter) pass(m *matrix, r int) bool {
	if f.all {
		return true
	}
	if !f.anyNS && m.ns[r] != f.ns {
		return false
	}
	if f.kinds != nil && !f.kinds[m.kinds[r]] {
		return false
	}
	t := m.ts[r]
	return t >= f.lo && t <= f.hi
}

// scored is a row and its score.
type scored struct {
	score float32
	row   int32
}

// topK keeps the k best rows seen: a min-heap on score, so the worst of the
// best is at the root and a row that does not beat it costs one comparison.
type topK struct {
	k int
	h []scored
}

// worse reports whether a row of score s and row r ranks below the kept
// row k: a lower score, or the same score and a later row. Ties go to the
// earlier row, so the rows kept do not depend on the order they are
// offered in (a scan shared by several goroutines keeps what one would).
func worse(s float32, r int32, k scored) bool {
	return s < k.score || (s == k.score && r > k.row)
}

// push offers a row.
func (t *topK) push(s float32, r int32) {
	if len(t.h) < t.k {
		t.h = append(t.h, scored{s, r})
		for i := len(t.h) - 1; i > 0; {
			p := (i - 1) / 2
			if !worse(t.h[i].score, t.h[i].row, t.h[p]) {
				break
			}
			t.h[p], t.h[i] = t.h[i], t.h[p]
			i = p
		}
		return
	}
	if !worse(t.h[0].score, t.h[0].row, scored{s, r}) {
		return // no better than the worst kept
	}
	t.h[0] = scored{s, r}
	for i := 0; ; {
		l, small := 2*i+1, i
		if l < len(t.h) && worse(t.h[l].score, t.h[l].row, t.h[small]) {
			small = l
		}
		if r := l + 1; r < len(t.h) && worse(t.h[r].score, t.h[r].row, t.h[small]) {
			small = r
		}
		if small == i {
			break
		}
		t.h[i], t.h[small] = t.h[small], t.h[i]
		i = small
	}
}

// ctxCheckRows is how many rows a scan passes between looks at its context:
// few enough that a cancelled query stops within a fraction of a
// millisecond of work, many enough that looking costs nothing.
const ctxCheckRows = 8192

// search scans every row that passes f (only the rows of ids, when set)
// and keeps the best in top. q must be unit length and of the matrix's
// dimension.
func (m *matrix) search(ctx context.Context, q []float32, f filter, ids []string, top *topK) error {
	if f.none {
		return nil
	}
	if len(ids) > 0 {
		seen := make(map[int]bool, len(ids))
		for _, id := range ids {
			r, ok := m.ids.Row(id)
			if !ok || seen[r] || !f.pass(m, r) {
				continue
			}
			seen[r] = true
			top.push(m.scale[r]*dotInt8(q, m.code(r)), int32(r))
		}
		return nil
	}
	n := m.len()
	helpers := min(runtime.GOMAXPROCS(0), n/parallelScanRows) - 1
	if helpers < 1 {
		return m.scan(ctx, q, f, 0, n, top)
	}
	// The rows are scanned a block at a time by whoever takes the next
	// block: the caller and helpers started beside it. Blocks, not halves:
	// the rows a filter passes cluster (a namespace's turns, then its
	// layers' vectors), so fixed halves leave one goroutine most of the
	// work; and the caller scans from the start, so a query on a busy
	// machine does not wait for a helper to be scheduled to make progress.
	var next atomic.Int64
	blocks := int64((n + scanBlockRows - 1) / scanBlockRows)
	work := func(t *topK) error {
		for b := next.Add(1) - 1; b < blocks; b = next.Add(1) - 1 {
			lo := int(b) * scanBlockRows
			if err := m.scan(ctx, q, f, lo, min(lo+scanBlockRows, n), t); err != nil {
				return err
			}
		}
		return nil
	}
	tops := make([]*topK, helpers)
	errs := make([]error, helpers+1)
	var wg sync.WaitGroup
	for i := range helpers {
		tops[i] = &topK{k: top.k, h: make([]scored, 0, min(top.k, 1024))}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = work(tops[i])
		}()
	}
	errs[helpers] = work(top)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, t := range tops {
		for _, s := range t.h {
			top.push(s.score, s.row)
		}
	}
	return nil
}

// parallelScanRows is the least number of rows a scan gives each core:
// below it, starting a goroutine costs more than the rows it would scan.
const parallelScanRows = 25_000

// scanBlockRows is the rows a goroutine of a shared scan takes at a time:
// a chunk of codes, small enough that the last blocks even out the
// goroutines' shares.
const scanBlockRows = chunkRows

// scan ranks the rows [lo, hi) into top.
func (m *matrix) scan(ctx context.Context, q []float32, f filter, lo, hi int, top *topK) error {
	for start := lo; start < hi; start += ctxCheckRows {
		if err := ctx.Err(); err != nil {
			return err
		}
		end := min(start+ctxCheckRows, hi)
		for r := start; r < end; r++ {
			if !f.all {
				if !f.anyNS && m.ns[r] != f.ns {
					continue
				}
				if f.kinds != nil && !f.kinds[m.kinds[r]] {
					continue
				}
				if t := m.ts[r]; t < f.lo || t > f.hi {
					continue
				}
			}
			s := m.scale[r] * dotInt8(q, m.code(r))
			if len(top.h) == top.k && s < top.h[0].score {
				continue
			}
			top.push(s, int32(r))
		}
	}
	return nil
}

// hits turns the rows of top into hits, best first; equal scores are
// ordered by id so that answers are stable.
func (m *matrix) hits(top *topK) []engram.VectorHit {
	hits := make([]engram.VectorHit, len(top.h))
	for i, s := range top.h {
		score := min(max(float64(s.score), -1), 1) // rounding may pass ±1
		hits[i] = engram.VectorHit{ID: m.ids.ID(int(s.row)), Kind: m.kindNames[m.kinds[s.row]], Score: score}
	}
	slices.SortFunc(hits, func(a, b engram.VectorHit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return hits
}
