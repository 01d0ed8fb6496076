package vecindex

import (
	"context"
	"math"
	"sync"
	"sync/atomic"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/vecrow"
)

// Store keeps the vectors of one model as rows (vecrow.Row): the
// palace's SQLite (palace.VectorStore). An Index loads its matrix from the
// store and writes through it; the store tells the attached Follower of
// every committed write, whoever made it, so that the matrix applies the
// writes in the store's commit order. Store and follower share package
// vecrow, and do not import each other.
type Store interface {
	// Model names the model; Dim is the dimension of its vectors.
	Model() string
	Dim() int
	// Usable returns EUNAVAILABLE once the store is closed and ENOTFOUND
	// once the model is dropped.
	Usable() error
	// Upsert checks items (vecrow.Prepare) and writes them, replacing by ID;
	// Delete removes rows by ID, ignoring unknown ones.
	Upsert(ctx context.Context, items []engram.VectorItem) error
	Delete(ctx context.Context, ids []string) error
	// Count returns the number of stored rows.
	Count(ctx context.Context) (int, error)
	// Attach has f read the stored rows (vecrow.Follower.Fill) and then
	// tells it of each committed write (Follower.Apply), with its writer lock held
	// throughout, so that no write falls between the two. Attaching a
	// follower again reads the rows again; another follower attached
	// before is released (Follower.Release). If Fill fails, f is not
	// attached.
	Attach(ctx context.Context, f vecrow.Follower) error
	// Detach stops telling f of writes and releases it, if it is attached.
	Detach(f vecrow.Follower)
}

var _ engram.VectorIndex = (*Index)(nil)

// Index is the in-process vector index of one model: the store's vectors,
// normalised to unit length and quantised to int8 codes (vecrow.Encode), in one
// in-memory matrix that queries scan exactly. It is safe for concurrent
// use: queries run beside each other and beside writes, which the store
// serialises.
//
// The matrix is loaded from the store by Load or by the first Query, and
// released by Unload or when the store's model is dropped; while it is not
// loaded, writes go to the store only, so a process that only writes
// vectors (to push them to an external index, say) never holds them in
// memory.
type Index struct {
	store Store
	model string
	dim   int

	// lmu serialises Load, Reload and Unload, so that two loads do not
	// both read the store; taken before the store's writer lock.
	lmu sync.Mutex
	// mu guards mem against queries; mem changes only under the store's
	// writer lock too (Fill, Apply, Release).
	mu  sync.RWMutex
	mem *matrix // nil until loaded
	// loadRead and loadTotal count the rows of a load in progress, for
	// LoadProgress.
	loadRead, loadTotal atomic.Int64
}

// New returns the index of store's vectors, not loaded. Keep one Index
// for a store: attaching a second one releases the first's matrix.
func New(store Store) *Index {
	return &Index{store: store, model: store.Model(), dim: store.Dim()}
}

// Store returns the store the index reads and writes.
func (x *Index) Store() Store { return x.store }

// Model returns the name of the index's model.
func (x *Index) Model() string { return x.model }

// Dim returns the dimension of the index's vectors.
func (x *Index) Dim() int { return x.dim }

// Upsert writes items to the store, then to the matrix if loaded. Errors
// are the store's: EINVALID for a bad item (see Prepare), writing nothing.
func (x *Index) Upsert(ctx context.Context, items []engram.VectorItem) error {
	return x.store.Upsert(ctx, items)
}

// Delete removes vectors by ID from the store, then from the matrix if
// loaded; unknown ids are ignored.
func (x *Index) Delete(ctx context.Context, ids []string) error {
	return x.store.Delete(ctx, ids)
}

// Count returns how many vectors the model holds: the matrix's rows when
// loaded, else the store's. Errors are the store's Usable ones.
func (x *Index) Count(ctx context.Context) (int, error) {
	if err := x.store.Usable(); err != nil {
		return 0, err
	}
	x.mu.RLock()
	m := x.mem
	n := 0
	if m != nil {
		n = m.len()
	}
	x.mu.RUnlock()
	if m != nil {
		return n, nil
	}
	return x.store.Count(ctx)
}

// Query returns up to q.K vectors nearest to q.Vector by cosine similarity,
// best first, that pass the filters: q.Namespace (exact, "" for all),
// q.Kinds (any of them, empty for all) and the time range [q.From, q.To), a
// zero bound leaving that side open. It scores every vector that passes the
// filters (with q.IDs, only those ids: a lookup, no scan) by its codes in
// memory: scores are the cosines of the vectors as stored (vecrow.Encode).
// Equal scores come in id order. The first Query loads the matrix (see
// Load).
//
// Errors: EINVALID for q.K < 1 or a bad query vector (wrong dimension, the
// message naming both; zero; not finite); the store's Usable errors;
// ctx's error when it ends during the scan.
func (x *Index) Query(ctx context.Context, q engram.VectorQuery) ([]engram.VectorHit, error) {
	if err := x.store.Usable(); err != nil {
		return nil, err
	}
	if q.K < 1 {
		return nil, engram.Errorf(engram.EINVALID, "palace: vector query: k must be at least 1, got %d", q.K)
	}
	if err := vecrow.Check(x.model, x.dim, "query vector", q.Vector); err != nil {
		return nil, err
	}
	unit := make([]float32, x.dim)
	vecrow.Normalize(unit, q.Vector)
	kk := q.K
	if len(q.IDs) > 0 {
		kk = max(q.K, len(q.IDs))
	}
	top := &topK{k: kk, h: make([]scored, 0, min(kk, 1024))}

	for {
		if err := x.Load(ctx); err != nil {
			return nil, err
		}
		x.mu.RLock()
		if m := x.mem; m != nil {
			err := m.search(ctx, unit, m.filterFor(q), q.IDs, top)
			var hits []engram.VectorHit
			if err == nil {
				hits = m.hits(top)
			}
			x.mu.RUnlock()
			if err != nil {
				return nil, err
			}
			return hits[:min(q.K, len(hits))], nil
		}
		x.mu.RUnlock() // unloaded since Load returned: load again
	}
}

// Load reads the model's vectors from the store into the in-memory matrix,
// unless loaded already; Query calls it. It takes about a second per
// 100,000 vectors of 512 dimensions (see BenchmarkVectorLoad) and holds
// N * (dim + 4) bytes of codes and scales, plus the ids and metadata (see
// the package's caveats), so a server should call it at start rather than
// make its first recall wait. Writes to the model wait while it loads;
// queries of a loaded matrix do not.
//
// Errors: the store's Usable ones; EINTERNAL if a stored vector does not
// have the model's dimension, or is zero or not finite.
func (x *Index) Load(ctx context.Context) error {
	if x.Loaded() {
		return nil
	}
	x.lmu.Lock()
	defer x.lmu.Unlock()
	if x.Loaded() {
		return nil
	}
	return x.store.Attach(ctx, x.follower())
}

// Reload builds the in-memory matrix afresh from the store and swaps it
// in: queries run on the old matrix until the new one is complete, and
// keep it if the build fails (a stored vector unusable, say). Whatever the
// old matrix had drifted into, the new one holds exactly the stored rows.
// It returns the number of rows loaded. Errors are those of Load.
func (x *Index) Reload(ctx context.Context) (int, error) {
	x.lmu.Lock()
	defer x.lmu.Unlock()
	if err := x.store.Attach(ctx, x.follower()); err != nil {
		return 0, err
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.mem == nil { // dropped meanwhile
		return 0, x.store.Usable()
	}
	return x.mem.len(), nil
}

// LoadProgress reports the load running or last run: the vectors read from
// the store so far and the vectors to read (0 before a load has counted
// them).
func (x *Index) LoadProgress() (read, total int64) {
	return x.loadRead.Load(), x.loadTotal.Load()
}

// Loaded reports whether the in-memory matrix is loaded.
func (x *Index) Loaded() bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.mem != nil
}

// Unload releases the in-memory matrix, if loaded, once the queries running
// on it end; the store keeps the vectors, and the next Query or Load loads
// them again. Call it when switching recall away from the model (the
// palace's ActivateModel leaves the matrix of the model it retires loaded).
func (x *Index) Unload() {
	x.lmu.Lock()
	defer x.lmu.Unlock()
	x.store.Detach(x.follower())
}

// follower is the Index as its store's Follower.
func (x *Index) follower() vecrow.Follower { return (*follower)(x) }

// follower implements vecrow.Follower for an Index; its methods run under the
// store's writer lock.
type follower Index

// Fill builds a matrix from the store's rows and swaps it in.
func (f *follower) Fill(ctx context.Context, n int, read func(add func(vecrow.Row) error) error) error {
	m := newMatrix(f.dim, n)
	f.loadRead.Store(0)
	f.loadTotal.Store(int64(n))
	batch := make([]vecrow.Row, 1)
	err := read(func(r vecrow.Row) error {
		if len(r.Vec) != vecrow.Bytes(f.dim) {
			return engram.Errorf(engram.EINTERNAL, "palace: vector %q of model %q is %d bytes, want %d", r.ID, f.model, len(r.Vec), vecrow.Bytes(f.dim))
		}
		if s := vecrow.Scale(r.Vec, f.dim); !(s > 0) || math.IsInf(float64(s), 0) {
			return engram.Errorf(engram.EINTERNAL, "palace: vector %q of model %q is zero or not finite", r.ID, f.model)
		}
		batch[0] = r
		m.put(batch)
		f.loadRead.Add(1)
		return nil
	})
	if err != nil {
		return err
	}
	m.ids.Trim()
	f.mu.Lock()
	f.mem = m
	f.mu.Unlock()
	return nil
}

// Apply brings the matrix up to a committed write.
func (f *follower) Apply(put []vecrow.Row, remove []string) {
	m := f.mem
	if m == nil {
		return
	}
	var (
		added  int
		chunks [][]int8
	)
	if len(put) > 0 {
		added = m.newRows(put)
		chunks = m.chunksFor(added) // outside mu: queries need not wait for the allocation
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, id := range remove {
		m.remove(id)
	}
	for _, c := range chunks {
		if len(m.codes)*chunkRows < m.len()+added {
			m.codes = append(m.codes, c)
		}
	}
	if len(put) > 0 {
		m.put(put)
	}
}

// Release drops the matrix.
func (f *follower) Release() {
	f.mu.Lock()
	f.mem = nil
	f.mu.Unlock()
}

// Len returns the matrix's rows.
func (f *follower) Len() int {
	if f.mem == nil {
		return 0
	}
	return f.mem.len()
}

// Holds returns the row of id and whether it holds raw.
func (f *follower) Holds(id string, raw []byte) (int, bool) {
	if f.mem == nil {
		return -1, false
	}
	r, ok := f.mem.ids.Row(id)
	if !ok {
		return -1, false
	}
	return r, len(raw) == vecrow.Bytes(f.dim) && f.mem.sameRow(r, raw)
}
