package palace

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	engram "github.com/engram-dev/engram"
)

var _ engram.VectorIndex = (*VectorIndex)(nil)

// Limits of vector models.
const (
	MaxModelNameBytes = 256     // the longest model name
	MaxVectorDim      = 1 << 16 // the largest dimension
)

// VectorIndex is the embedded vector index of one model: its vectors live in
// table vectors, and a copy, normalised to unit length, in one contiguous
// in-memory matrix that queries scan exactly. Get one with DB.Vectors. It is
// safe for concurrent use: queries run beside each other and beside writes,
// which are serialised per model.
//
// The matrix is loaded from SQLite by Load or by the first Query, and
// released by Unload or DropModel; while it is not loaded, writes go to
// SQLite only, so a process that only writes vectors (to push them to an
// external index, say) never holds them in memory.
type VectorIndex struct {
	db    *DB
	model string
	dim   int

	// wmu serialises the writers of this model (Upsert, Delete, Load,
	// Unload, DropModel), so that the matrix applies SQLite's commits in their
	// order. It is held across the SQLite transaction; mu only while the
	// matrix changes.
	wmu     sync.Mutex
	mu      sync.RWMutex
	mem     *matrix // nil until loaded; guarded by mu, replaced under wmu too
	dropped atomic.Bool
	// loadRead and loadTotal count the rows of a load in progress, for LoadProgress.
	loadRead, loadTotal atomic.Int64

	nmu     sync.Mutex
	changed chan struct{} // closed and replaced after each committed write
}

// Notify returns a channel closed after the next committed write of the
// model's vectors (by any writer: the turn pipeline, the layer jobs, a
// vault sync), what an external index's sync waits on.
func (v *VectorIndex) Notify() <-chan struct{} {
	v.nmu.Lock()
	defer v.nmu.Unlock()
	if v.changed == nil {
		v.changed = make(chan struct{})
	}
	return v.changed
}

// wake closes the channel Notify handed out.
func (v *VectorIndex) wake() {
	v.nmu.Lock()
	defer v.nmu.Unlock()
	if v.changed != nil {
		close(v.changed)
		v.changed = nil
	}
}

// StoredVector is a vector as stored in the palace, with its change number:
// each write of a vector gives it the model's next one.
type StoredVector struct {
	engram.VectorItem
	Seq int64
}

// Vectors returns the embedded vector index of model, creating the model
// (state ModelBuilding) if the palace has none of that name. dim is the
// dimension of the model's vectors; 0 takes the dimension stored, for a
// model whose embedder cannot tell it before its first call. The index is
// cached: every call for one model returns the same *VectorIndex. It does
// not load the vectors into memory; see Load.
//
// Errors: EINVALID for an empty or overlong model name, a dim below 0 or
// above MaxVectorDim, or dim 0 for a model the palace does not know;
// ECONFLICT naming both dimensions when the model is stored with another
// dimension (embed under another model name, or drop the model first);
// EUNAVAILABLE once the palace is closed.
func (db *DB) Vectors(ctx context.Context, model string, dim int) (*VectorIndex, error) {
	if db.closed.Load() {
		return nil, errClosed()
	}
	if err := checkModelName(model); err != nil {
		return nil, err
	}
	if dim < 0 || dim > MaxVectorDim {
		return nil, engram.Errorf(engram.EINVALID, "palace: vector model %q: dimension %d is negative or above %d", model, dim, MaxVectorDim)
	}
	db.vectors.mu.Lock()
	defer db.vectors.mu.Unlock()
	if v := db.vectors.byModel[model]; v != nil {
		if dim != 0 && dim != v.dim {
			return nil, errDimConflict(model, v.dim, dim)
		}
		return v, nil
	}
	stored := 0
	err := db.Update(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT dim FROM vector_models WHERE model = ?`, model).Scan(&stored)
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if dim == 0 {
			return engram.Errorf(engram.EINVALID,
				"palace: vector model %q is new and its dimension is unknown; embed a text first to learn it", model)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO vector_models (model, dim, state, created_at) VALUES (?, ?, ?, ?)`,
			model, dim, ModelBuilding, db.now().UnixNano())
		stored = dim
		return err
	})
	if err != nil {
		return nil, vecErr("open vector model "+model, err)
	}
	if dim != 0 && dim != stored {
		return nil, errDimConflict(model, stored, dim)
	}
	v := &VectorIndex{db: db, model: model, dim: stored}
	if db.vectors.byModel == nil {
		db.vectors.byModel = make(map[string]*VectorIndex)
	}
	db.vectors.byModel[model] = v
	return v, nil
}

// vectorCache holds the DB's VectorIndex of each model.
type vectorCache struct {
	mu      sync.Mutex // taken before any VectorIndex.wmu
	byModel map[string]*VectorIndex
}

func errDimConflict(model string, stored, asked int) error {
	return engram.Errorf(engram.ECONFLICT,
		"palace: vector model %q holds vectors of dimension %d, not %d; embed under another model name or drop the model (engram reembed)",
		model, stored, asked)
}

func checkModelName(model string) error {
	switch {
	case model == "":
		return engram.Errorf(engram.EINVALID, "palace: no vector model named")
	case len(model) > MaxModelNameBytes:
		return engram.Errorf(engram.EINVALID, "palace: vector model name is %d bytes, over the limit of %d", len(model), MaxModelNameBytes)
	case !utf8.ValidString(model):
		return engram.Errorf(engram.EINVALID, "palace: vector model name is not valid UTF-8")
	}
	return nil
}

// vecErr wraps err with a prefix, leaving *engram.Error values as they are.
func vecErr(op string, err error) error {
	var e *engram.Error
	if err == nil || errors.As(err, &e) {
		return err
	}
	return fmt.Errorf("palace: %s: %w", op, err)
}

// Model returns the name of the index's model.
func (v *VectorIndex) Model() string { return v.model }

// Dim returns the dimension of the index's vectors.
func (v *VectorIndex) Dim() int { return v.dim }

// usable returns EUNAVAILABLE once the palace is closed and ENOTFOUND once
// the model is dropped.
func (v *VectorIndex) usable() error {
	if v.db.closed.Load() {
		return errClosed()
	}
	if v.dropped.Load() {
		return errDropped(v.model)
	}
	return nil
}

func errDropped(model string) error {
	return engram.Errorf(engram.ENOTFOUND, "palace: vector model %q was dropped", model)
}

// checkVector returns EINVALID unless vec has the index's dimension, only
// finite values and a non-zero length (cosine needs a direction).
func (v *VectorIndex) checkVector(what string, vec []float32) error {
	if len(vec) != v.dim {
		return engram.Errorf(engram.EINVALID, "palace: %s has dimension %d, vector model %q has dimension %d",
			what, len(vec), v.model, v.dim)
	}
	zero := true
	for _, x := range vec {
		if f := float64(x); math.IsNaN(f) || math.IsInf(f, 0) {
			return engram.Errorf(engram.EINVALID, "palace: %s holds %v; vectors must be finite", what, x)
		}
		zero = zero && x == 0
	}
	if zero {
		return engram.Errorf(engram.EINVALID, "palace: %s is all zeros; cosine needs a non-zero vector", what)
	}
	return nil
}

// prepared is a batch of items checked and encoded outside any lock.
type prepared struct {
	rows []vecRow
	ts   []any // for SQLite: Unix nanoseconds or nil
}

// prepare checks items and encodes them. When an ID repeats, the last item
// wins. One bad item fails the whole batch with EINVALID.
func (v *VectorIndex) prepare(items []engram.VectorItem) (prepared, error) {
	last := make(map[string]int, len(items))
	for i, it := range items {
		if it.ID == "" {
			return prepared{}, engram.Errorf(engram.EINVALID, "palace: vector item %d has an empty id", i)
		}
		what := fmt.Sprintf("vector item %d (id %q)", i, it.ID)
		if err := v.checkVector(what, it.Vector); err != nil {
			return prepared{}, err
		}
		if !it.TS.IsZero() && (!it.TS.After(minTime) || it.TS.After(maxTime)) {
			return prepared{}, engram.Errorf(engram.EINVALID,
				"palace: %s: %s", what, outsideRange(it.TS))
		}
		last[it.ID] = i
	}
	n := len(last)
	p := prepared{rows: make([]vecRow, 0, n), ts: make([]any, 0, n)}
	unit := make([]float32, v.dim)
	raw := make([]byte, 0, n*vecBytes(v.dim))
	for i, it := range items {
		if last[it.ID] != i {
			continue
		}
		normalize(unit, it.Vector)
		r := vecRow{id: it.ID, kind: it.Kind, namespace: it.Namespace, ts: noTS}
		var ts any
		if !it.TS.IsZero() {
			r.ts = it.TS.UnixNano()
			ts = r.ts
		}
		start := len(raw)
		raw = appendVector(raw, unit)
		r.vec = raw[start:len(raw):len(raw)]
		p.rows = append(p.rows, r)
		p.ts = append(p.ts, ts)
	}
	return p, nil
}

// Upsert inserts or replaces vectors by ID in one transaction, then in the
// in-memory matrix if loaded. When one call holds an ID twice, the last item
// wins.
//
// Every item is checked before anything is written: an empty ID, a vector
// whose dimension is not the index's (the message names both), a zero
// vector, one holding NaN or ±Inf, or a time outside what an int64 of nanoseconds holds
// returns EINVALID and writes nothing. Errors: EUNAVAILABLE once the palace
// is closed; ENOTFOUND once the model is dropped.
func (v *VectorIndex) Upsert(ctx context.Context, items []engram.VectorItem) error {
	return v.put(ctx, items, 0, "")
}

// PutLayerVectors is Upsert that also advances a layer worker's watermark
// (WorkerSeq of worker) to throughSeq, in the same transaction: the vectors
// of memories and scenes, embedded in change-number order. Errors are those
// of Upsert; EINVALID for an empty worker or a negative throughSeq.
func (v *VectorIndex) PutLayerVectors(ctx context.Context, items []engram.VectorItem, worker string, throughSeq int64) error {
	if worker == "" || throughSeq < 0 {
		return engram.Errorf(engram.EINVALID, "palace: layer vectors need a worker and a watermark, got %q and %d", worker, throughSeq)
	}
	return v.put(ctx, items, throughSeq, worker)
}

// PutTurnVectors is Upsert that also advances the model's watermark to
// throughSeq, in the same transaction: the pipeline embeds archived turns in
// seq order and resumes from Watermark, so a crash can never leave the
// watermark ahead of the vectors it stands for. The watermark never moves
// back; items may be empty, to advance it past turns that give no vector.
// Errors are those of Upsert; EINVALID for a negative throughSeq.
func (v *VectorIndex) PutTurnVectors(ctx context.Context, items []engram.VectorItem, throughSeq int64) error {
	if throughSeq < 0 {
		return engram.Errorf(engram.EINVALID, "palace: watermark %d is negative", throughSeq)
	}
	return v.put(ctx, items, throughSeq, "")
}

// put upserts items and advances a watermark to throughSeq: the model's
// (turn) watermark, or worker's when worker is set.
func (v *VectorIndex) put(ctx context.Context, items []engram.VectorItem, throughSeq int64, worker string) error {
	if err := v.usable(); err != nil {
		return err
	}
	if len(items) == 0 && throughSeq == 0 {
		return nil
	}
	p, err := v.prepare(items)
	if err != nil {
		return err
	}

	v.wmu.Lock()
	defer v.wmu.Unlock()
	if err := v.usable(); err != nil {
		return err
	}
	err = v.db.Update(ctx, func(tx *sql.Tx) error {
		if worker == "" {
			// A turn embedded from a read that began before its forget.
			var err error
			if p, err = dropForgotten(ctx, tx, p); err != nil {
				return err
			}
		}
		return v.write(ctx, tx, p, nil, throughSeq, worker)
	})
	if err != nil {
		return vecErr("put vectors of "+v.model, err)
	}
	v.apply(p, nil)
	return nil
}

// write writes prepared rows, deletes the rows of remove and advances a
// watermark, inside tx. Call with wmu held; apply the change to the
// in-memory matrix after the commit.
func (v *VectorIndex) write(ctx context.Context, tx *sql.Tx, p prepared, remove []string, throughSeq int64, worker string) error {
	var last int64
	turnSeq := throughSeq
	if worker != "" {
		if err := setWorkerSeq(ctx, tx, worker, throughSeq); err != nil {
			return err
		}
		turnSeq = 0
	}
	err := tx.QueryRowContext(ctx, `UPDATE vector_models
		SET last_seq = last_seq + ?, embedded_seq = max(embedded_seq, ?)
		WHERE model = ? RETURNING last_seq`, len(p.rows), turnSeq, v.model).Scan(&last)
	if errors.Is(err, sql.ErrNoRows) {
		return errDropped(v.model)
	}
	if err != nil {
		return err
	}
	for _, id := range remove {
		if _, err := tx.ExecContext(ctx, `DELETE FROM vectors WHERE model = ? AND id = ?`, v.model, id); err != nil {
			return err
		}
	}
	if len(p.rows) == 0 {
		return nil
	}
	ins, err := tx.PrepareContext(ctx, `INSERT INTO vectors (model, id, kind, namespace, ts, dim, vec, seq)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (model, id) DO UPDATE SET
			kind = excluded.kind, namespace = excluded.namespace, ts = excluded.ts,
			dim = excluded.dim, vec = excluded.vec, seq = excluded.seq`)
	if err != nil {
		return err
	}
	defer ins.Close()
	seq := last - int64(len(p.rows))
	for i, r := range p.rows {
		seq++
		if _, err := ins.ExecContext(ctx, v.model, r.id, r.kind, r.namespace, p.ts[i], v.dim, r.vec, seq); err != nil {
			return fmt.Errorf("vector %q: %w", r.id, err)
		}
	}
	return nil
}

// apply brings the in-memory matrix, if loaded, up to a committed write,
// and wakes those waiting on Notify.
func (v *VectorIndex) apply(p prepared, remove []string) {
	defer v.wake()
	m := v.mem
	if m == nil {
		return
	}
	var (
		added  int
		chunks [][]int8
	)
	if len(p.rows) > 0 {
		added = m.newRows(p.rows)
		chunks = m.chunksFor(added) // outside mu: queries need not wait for the allocation
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, id := range remove {
		m.remove(id)
	}
	for _, c := range chunks {
		if len(m.codes)*chunkRows < m.len()+added {
			m.codes = append(m.codes, c)
		}
	}
	if len(p.rows) > 0 {
		m.put(p.rows)
	}
}

// VectorWrite is a batch of vectors written inside another palace
// transaction (PutVaultDoc), so that a document's chunks and their vectors
// change together: Stage checks and encodes them first.
type VectorWrite struct {
	v      *VectorIndex
	p      prepared
	remove []string
}

// Stage prepares items to upsert and ids to delete for a write inside
// another transaction. Errors are those of Upsert.
func (v *VectorIndex) Stage(items []engram.VectorItem, remove []string) (*VectorWrite, error) {
	if err := v.usable(); err != nil {
		return nil, err
	}
	p, err := v.prepare(items)
	if err != nil {
		return nil, err
	}
	return &VectorWrite{v: v, p: p, remove: remove}, nil
}

// Delete removes vectors by ID, in one transaction, then from the in-memory
// matrix if loaded; unknown ids are ignored. Deletes are not journaled for
// external indexes (see VectorsSince). Errors: EUNAVAILABLE once the palace
// is closed; ENOTFOUND once the model is dropped.
func (v *VectorIndex) Delete(ctx context.Context, ids []string) error {
	if err := v.usable(); err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	v.wmu.Lock()
	defer v.wmu.Unlock()
	if err := v.usable(); err != nil {
		return err
	}
	err := v.db.Update(ctx, func(tx *sql.Tx) error {
		del, err := tx.PrepareContext(ctx, `DELETE FROM vectors WHERE model = ? AND id = ?`)
		if err != nil {
			return err
		}
		defer del.Close()
		for _, id := range ids {
			if _, err := del.ExecContext(ctx, v.model, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return vecErr("delete vectors of "+v.model, err)
	}
	if m := v.mem; m != nil {
		v.mu.Lock()
		for _, id := range ids {
			m.remove(id)
		}
		v.mu.Unlock()
	}
	return nil
}

// Count returns how many vectors the model holds. Errors: EUNAVAILABLE once
// the palace is closed; ENOTFOUND once the model is dropped.
func (v *VectorIndex) Count(ctx context.Context) (int, error) {
	if err := v.usable(); err != nil {
		return 0, err
	}
	v.mu.RLock()
	m := v.mem
	n := 0
	if m != nil {
		n = m.len()
	}
	v.mu.RUnlock()
	if m != nil {
		return n, nil
	}
	err := v.db.View(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `SELECT count(*) FROM vectors WHERE model = ?`, v.model).Scan(&n)
	})
	return n, vecErr("count vectors of "+v.model, err)
}

// Query returns up to q.K vectors nearest to q.Vector by cosine similarity,
// best first, that pass the filters: q.Namespace (exact, "" for all),
// q.Kinds (any of them, empty for all) and the time range [q.From, q.To), a
// zero bound leaving that side open. It scores every vector that passes the
// filters (with q.IDs, only those ids: a lookup, no scan) by its codes in
// memory: scores are the cosines of the vectors as stored (see
// appendVector). Equal scores come in id order. The first Query loads the matrix (see
// Load).
//
// Errors: EINVALID for q.K < 1 or a bad query vector (wrong dimension, the
// message naming both; zero; not finite); EUNAVAILABLE once the palace is
// closed; ENOTFOUND once the model is dropped; ctx's error when it ends
// during the scan.
func (v *VectorIndex) Query(ctx context.Context, q engram.VectorQuery) ([]engram.VectorHit, error) {
	if err := v.usable(); err != nil {
		return nil, err
	}
	if q.K < 1 {
		return nil, engram.Errorf(engram.EINVALID, "palace: vector query: k must be at least 1, got %d", q.K)
	}
	if err := v.checkVector("query vector", q.Vector); err != nil {
		return nil, err
	}
	unit := make([]float32, v.dim)
	normalize(unit, q.Vector)
	kk := q.K
	if len(q.IDs) > 0 {
		kk = max(q.K, len(q.IDs))
	}
	top := &topK{k: kk, h: make([]scored, 0, min(kk, 1024))}

	for {
		if err := v.Load(ctx); err != nil {
			return nil, err
		}
		v.mu.RLock()
		if m := v.mem; m != nil {
			err := m.search(ctx, unit, m.filterFor(q), q.IDs, top)
			var hits []engram.VectorHit
			if err == nil {
				hits = m.hits(top)
			}
			v.mu.RUnlock()
			if err != nil {
				return nil, err
			}
			return hits[:min(q.K, len(hits))], nil
		}
		v.mu.RUnlock() // unloaded since Load returned: load again
	}
}

// Load reads the model's vectors from SQLite into the in-memory matrix,
// unless loaded already; Query calls it. It takes about a second per
// 100,000 vectors of 512 dimensions (see BenchmarkVectorLoad) and holds
// N * (dim + 4) bytes of codes and scales, plus the ids and metadata (see
// the package's caveats), so a server should call it at start rather than make
// its first recall wait. Writes to the model wait while it loads; queries
// of a loaded matrix do not.
//
// Errors: EUNAVAILABLE once the palace is closed; ENOTFOUND once the model
// is dropped; EINTERNAL if a stored vector does not have the model's
// dimension.
func (v *VectorIndex) Load(ctx context.Context) error {
	v.mu.RLock()
	loaded := v.mem != nil
	v.mu.RUnlock()
	if loaded {
		return nil
	}
	v.wmu.Lock()
	defer v.wmu.Unlock()
	if err := v.usable(); err != nil {
		return err
	}
	if v.mem != nil {
		return nil
	}
	m, err := v.read(ctx)
	if err != nil {
		return err
	}
	v.mu.Lock()
	v.mem = m
	v.mu.Unlock()
	return nil
}

// LoadProgress reports the load running or last run: the vectors read from
// SQLite so far and the vectors to read (0 before a load has counted them).
func (v *VectorIndex) LoadProgress() (read, total int64) {
	return v.loadRead.Load(), v.loadTotal.Load()
}

// Loaded reports whether the in-memory matrix is loaded.
func (v *VectorIndex) Loaded() bool {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.mem != nil
}

// Unload releases the in-memory matrix, if loaded, once the queries running
// on it end; SQLite keeps the vectors, and the next Query or Load loads them
// again. Call it when switching recall away from the model (ActivateModel
// leaves the matrix of the model it retires loaded).
func (v *VectorIndex) Unload() {
	v.wmu.Lock()
	defer v.wmu.Unlock()
	v.unload()
}

// unload drops the in-memory matrix; v.wmu must be held.
func (v *VectorIndex) unload() {
	v.mu.Lock()
	v.mem = nil
	v.mu.Unlock()
}

// read builds a matrix from SQLite, rows in change order.
func (v *VectorIndex) read(ctx context.Context) (*matrix, error) {
	var m *matrix
	err := v.db.View(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM vectors WHERE model = ?`, v.model).Scan(&n); err != nil {
			return err
		}
		m = newMatrix(v.dim, n)
		v.loadRead.Store(0)
		v.loadTotal.Store(int64(n))
		rows, err := tx.QueryContext(ctx, `SELECT id, kind, namespace, ts, vec FROM vectors WHERE model = ? ORDER BY seq`, v.model)
		if err != nil {
			return err
		}
		batch := make([]vecRow, 1)
		return eachRow(rows, func() error {
			var (
				r   vecRow
				ts  sql.NullInt64
				raw sql.RawBytes
			)
			if err := rows.Scan(&r.id, &r.kind, &r.namespace, &ts, &raw); err != nil {
				return err
			}
			if len(raw) != vecBytes(v.dim) {
				return engram.Errorf(engram.EINTERNAL, "palace: vector %q of model %q is %d bytes, want %d", r.id, v.model, len(raw), vecBytes(v.dim))
			}
			if s := storedScale(raw, v.dim); !(s > 0) || math.IsInf(float64(s), 0) {
				return engram.Errorf(engram.EINTERNAL, "palace: vector %q of model %q is zero or not finite", r.id, v.model)
			}
			r.vec = raw
			r.ts = noTS
			if ts.Valid {
				r.ts = ts.Int64
			}
			batch[0] = r
			m.put(batch)
			v.loadRead.Add(1)
			return nil
		})
	})
	if err != nil {
		return nil, vecErr("load vectors of "+v.model, err)
	}
	m.ids.Trim()
	return m, nil
}

// Watermark returns the archive seq through which the pipeline has embedded
// every turn for this model (see PutTurnVectors), 0 for none.
func (v *VectorIndex) Watermark(ctx context.Context) (int64, error) {
	return v.counter(ctx, "embedded_seq")
}

// SyncedSeq returns the change number through which the model's vectors
// were pushed to an external index (see SetSyncedSeq), 0 for none.
func (v *VectorIndex) SyncedSeq(ctx context.Context) (int64, error) {
	return v.counter(ctx, "synced_seq")
}

// LastChange returns the newest change number given to one of the model's
// vectors, 0 for none: an external index whose SyncedSeq is below it has
// vectors to catch up on.
func (v *VectorIndex) LastChange(ctx context.Context) (int64, error) {
	return v.counter(ctx, "last_seq")
}

// counter reads one of the model's counters; column is a constant.
func (v *VectorIndex) counter(ctx context.Context, column string) (int64, error) {
	if err := v.usable(); err != nil {
		return 0, err
	}
	var n int64
	err := v.db.View(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT `+column+` FROM vector_models WHERE model = ?`, v.model).Scan(&n)
		if errors.Is(err, sql.ErrNoRows) {
			return errDropped(v.model)
		}
		return err
	})
	return n, vecErr("read "+column+" of "+v.model, err)
}

// SetSyncedSeq records that the vectors through change number seq were
// pushed to an external index; 0 starts over (a rebuild). Errors: EINVALID
// for a seq below 0 or above the last change number.
func (v *VectorIndex) SetSyncedSeq(ctx context.Context, seq int64) error {
	if err := v.usable(); err != nil {
		return err
	}
	if seq < 0 {
		return engram.Errorf(engram.EINVALID, "palace: synced seq %d is negative", seq)
	}
	err := v.db.Update(ctx, func(tx *sql.Tx) error {
		var last int64
		err := tx.QueryRowContext(ctx, `SELECT last_seq FROM vector_models WHERE model = ?`, v.model).Scan(&last)
		if errors.Is(err, sql.ErrNoRows) {
			return errDropped(v.model)
		}
		if err != nil {
			return err
		}
		if seq > last {
			return engram.Errorf(engram.EINVALID, "palace: synced seq %d is beyond the last change %d of vector model %q", seq, last, v.model)
		}
		_, err = tx.ExecContext(ctx, `UPDATE vector_models SET synced_seq = ? WHERE model = ?`, seq, v.model)
		return err
	})
	return vecErr("set synced seq of "+v.model, err)
}

// VectorsSince returns up to limit stored vectors whose change number is
// above afterSeq, in change order, as stored (unit vectors, rounded to
// the codes of appendVector):
// what an external index has missed since SyncedSeq, or, from 0, all of
// them. A vector written twice appears once, at its last change. Deleted
// vectors do not appear: deletes are not journaled, so an external index
// that missed one is put right by a rebuild. Errors: EINVALID for limit < 1.
func (v *VectorIndex) VectorsSince(ctx context.Context, afterSeq int64, limit int) ([]StoredVector, error) {
	if err := v.usable(); err != nil {
		return nil, err
	}
	if limit < 1 {
		return nil, engram.Errorf(engram.EINVALID, "palace: limit must be at least 1, got %d", limit)
	}
	var out []StoredVector
	err := v.db.View(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT id, kind, namespace, ts, vec, seq FROM vectors
			WHERE model = ? AND seq > ? ORDER BY seq LIMIT ?`, v.model, afterSeq, limit)
		if err != nil {
			return err
		}
		return eachRow(rows, func() error {
			var (
				sv  StoredVector
				ts  sql.NullInt64
				raw sql.RawBytes
			)
			if err := rows.Scan(&sv.ID, &sv.Kind, &sv.Namespace, &ts, &raw, &sv.Seq); err != nil {
				return err
			}
			if len(raw) != vecBytes(v.dim) {
				return engram.Errorf(engram.EINTERNAL, "palace: vector %q of model %q is %d bytes, want %d", sv.ID, v.model, len(raw), vecBytes(v.dim))
			}
			sv.Vector = make([]float32, v.dim)
			decodeVector(sv.Vector, raw)
			if ts.Valid {
				sv.TS = time.Unix(0, ts.Int64).UTC()
			}
			out = append(out, sv)
			return nil
		})
	})
	if err != nil {
		return nil, vecErr("read vectors of "+v.model, err)
	}
	return out, nil
}

// Since returns up to limit vectors written after change number after, in
// change order, with the change number of the last one (after itself when
// there are none). It is VectorsSince in the shape of the pipeline's
// VectorJournal, so a VectorIndex feeds an external index directly.
func (v *VectorIndex) Since(ctx context.Context, after int64, limit int) ([]engram.VectorItem, int64, error) {
	svs, err := v.VectorsSince(ctx, after, limit)
	if err != nil || len(svs) == 0 {
		return nil, after, err
	}
	items := make([]engram.VectorItem, len(svs))
	for i, sv := range svs {
		items[i] = sv.VectorItem
	}
	return items, svs[len(svs)-1].Seq, nil
}

// dropForgotten leaves out of p the rows of forgotten turns.
func dropForgotten(ctx context.Context, tx *sql.Tx, p prepared) (prepared, error) {
	var any bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM forgotten)`).Scan(&any); err != nil || !any {
		return p, err
	}
	var out prepared
	for i, r := range p.rows {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM forgotten WHERE id = ?`, r.id).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			out.rows = append(out.rows, r)
			out.ts = append(out.ts, p.ts[i])
			continue
		}
		if err != nil {
			return p, err
		}
	}
	return out, nil
}
