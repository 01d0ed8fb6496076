package palace

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/sqlrow"
	"github.com/engram-dev/engram/internal/vecrow"
)

// Limits of vector models.
const (
	MaxModelNameBytes = 256     // the longest model name
	MaxVectorDim      = 1 << 16 // the largest dimension
)

// VectorStore keeps the vectors of one model in table vectors, with the
// model's watermarks and change numbers in table vector_models. Get one
// with DB.Vectors. It is safe for concurrent use; its writes are
// serialised.
//
// It is the vecindex.Store of the in-process vector index (vecindex.New):
// the index's matrix, once loaded, is attached to the store as its
// follower, and every committed write of the model's vectors (Upsert, the
// Put methods, UpdateWith, Delete, DropBad) is applied to it in commit
// order. While no index is attached, writes go to SQLite only.
type VectorStore struct {
	db    *DB
	model string
	dim   int

	// wmu serialises the writers of this model, and the attaching and
	// telling of the follower, so that it applies SQLite's commits in
	// their order. It is held across the SQLite transaction.
	wmu      sync.Mutex
	follower vecrow.Follower // the attached in-memory index, if any; guarded by wmu
	dropped  atomic.Bool

	nmu     sync.Mutex
	changed chan struct{} // closed and replaced after each committed write
}

// Notify returns a channel closed after the next committed write of the
// model's vectors (by any writer: the turn pipeline, the layer jobs, a
// vault sync), what an external index's sync waits on.
func (v *VectorStore) Notify() <-chan struct{} {
	v.nmu.Lock()
	defer v.nmu.Unlock()
	if v.changed == nil {
		v.changed = make(chan struct{})
	}
	return v.changed
}

// wake closes the channel Notify handed out.
func (v *VectorStore) wake() {
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

// Vectors returns the vector store of model, creating the model
// (state ModelBuilding) if the palace has none of that name. dim is the
// dimension of the model's vectors; 0 takes the dimension stored, for a
// model whose embedder cannot tell it before its first call. The store is
// cached: every call for one model returns the same *VectorStore.
//
// Errors: EINVALID for an empty or overlong model name, a dim below 0 or
// above MaxVectorDim, or dim 0 for a model the palace does not know;
// ECONFLICT naming both dimensions when the model is stored with another
// dimension (embed under another model name, or drop the model first);
// EUNAVAILABLE once the palace is closed.
func (db *DB) Vectors(ctx context.Context, model string, dim int) (*VectorStore, error) {
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
	v := &VectorStore{db: db, model: model, dim: stored}
	if db.vectors.byModel == nil {
		db.vectors.byModel = make(map[string]*VectorStore)
	}
	db.vectors.byModel[model] = v
	return v, nil
}

// vectorCache holds the DB's VectorStore of each model.
type vectorCache struct {
	mu      sync.Mutex // taken before any VectorStore.wmu
	byModel map[string]*VectorStore
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

// Model returns the name of the store's model.
func (v *VectorStore) Model() string { return v.model }

// Dim returns the dimension of the store's vectors.
func (v *VectorStore) Dim() int { return v.dim }

// Usable returns EUNAVAILABLE once the palace is closed and ENOTFOUND once
// the model is dropped.
func (v *VectorStore) Usable() error {
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

// prepared is a batch of items checked and encoded outside any lock.
type prepared []vecrow.Row

// prepare checks items and encodes them (vecrow.Prepare).
func (v *VectorStore) prepare(items []engram.VectorItem) (prepared, error) {
	return vecrow.Prepare(v.model, v.dim, items)
}

// Upsert inserts or replaces vectors by ID in one transaction, then in the
// attached index, if any. When one call holds an ID twice, the last item
// wins.
//
// Every item is checked before anything is written: an empty ID, a vector
// whose dimension is not the index's (the message names both), a zero
// vector, one holding NaN or ±Inf, or a time outside what an int64 of nanoseconds holds
// returns EINVALID and writes nothing. Errors: EUNAVAILABLE once the palace
// is closed; ENOTFOUND once the model is dropped.
func (v *VectorStore) Upsert(ctx context.Context, items []engram.VectorItem) error {
	return v.put(ctx, items, 0, "")
}

// PutLayerVectors is Upsert that also advances a layer worker's watermark
// (WorkerSeq of worker) to throughSeq, in the same transaction: the vectors
// of memories and scenes, embedded in change-number order. Errors are those
// of Upsert; EINVALID for an empty worker or a negative throughSeq.
func (v *VectorStore) PutLayerVectors(ctx context.Context, items []engram.VectorItem, worker string, throughSeq int64) error {
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
func (v *VectorStore) PutTurnVectors(ctx context.Context, items []engram.VectorItem, throughSeq int64) error {
	if throughSeq < 0 {
		return engram.Errorf(engram.EINVALID, "palace: watermark %d is negative", throughSeq)
	}
	return v.put(ctx, items, throughSeq, "")
}

// put upserts items and advances a watermark to throughSeq: the model's
// (turn) watermark, or worker's when worker is set.
func (v *VectorStore) put(ctx context.Context, items []engram.VectorItem, throughSeq int64, worker string) error {
	if err := v.Usable(); err != nil {
		return err
	}
	if len(items) == 0 && throughSeq == 0 {
		return nil
	}
	return v.commit(ctx, "put", items, nil, throughSeq, worker, func(tx *sql.Tx, p *prepared) (err error) {
		if worker == "" {
			// A turn embedded from a read that began before its forget.
			*p, err = dropForgotten(ctx, tx, *p)
		}
		return err
	})
}

// commit checks and encodes items, then, in one write transaction, runs
// fn (which may leave rows out of them), writes them, deletes the rows of
// remove and advances a watermark (see write); then it applies the change
// to the attached index and wakes the waiters of Notify. op names the
// write in errors.
func (v *VectorStore) commit(ctx context.Context, op string, items []engram.VectorItem, remove []string, throughSeq int64, worker string,
	fn func(tx *sql.Tx, p *prepared) error) error {
	if err := v.Usable(); err != nil {
		return err
	}
	p, err := v.prepare(items)
	if err != nil {
		return err
	}
	v.wmu.Lock()
	defer v.wmu.Unlock()
	if err := v.Usable(); err != nil {
		return err
	}
	err = v.db.Update(ctx, func(tx *sql.Tx) error {
		if err := fn(tx, &p); err != nil {
			return err
		}
		return v.write(ctx, tx, p, remove, throughSeq, worker)
	})
	if err != nil {
		return vecErr(op+" vectors of "+v.model, err)
	}
	v.tell(p, remove)
	v.wake()
	return nil
}

// write writes prepared rows, deletes the rows of remove and advances a
// watermark, inside tx. Call with wmu held; apply the change to the
// attached index after the commit (tell).
func (v *VectorStore) write(ctx context.Context, tx *sql.Tx, p prepared, remove []string, throughSeq int64, worker string) error {
	var last int64
	turnSeq := throughSeq
	if worker != "" {
		if err := setWorkerSeq(ctx, tx, worker, throughSeq); err != nil {
			return err
		}
		turnSeq = 0
	}
	found, err := sqlrow.One(tx.QueryRowContext(ctx, `UPDATE vector_models
		SET last_seq = last_seq + ?, embedded_seq = max(embedded_seq, ?)
		WHERE model = ? RETURNING last_seq`, len(p), turnSeq, v.model), &last)
	if err == nil && !found {
		err = errDropped(v.model)
	}
	if err != nil {
		return err
	}
	for _, id := range remove {
		if _, err := tx.ExecContext(ctx, `DELETE FROM vectors WHERE model = ? AND id = ?`, v.model, id); err != nil {
			return err
		}
	}
	if len(p) == 0 {
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
	seq := last - int64(len(p))
	for _, r := range p {
		seq++
		var ts any
		if r.TS != vecrow.NoTS {
			ts = r.TS
		}
		if _, err := ins.ExecContext(ctx, v.model, r.ID, r.Kind, r.Namespace, ts, v.dim, r.Vec, seq); err != nil {
			return fmt.Errorf("vector %q: %w", r.ID, err)
		}
	}
	return nil
}

// tell applies a committed write to the attached index, if any. Call with
// wmu held.
func (v *VectorStore) tell(p prepared, remove []string) {
	if v.follower != nil {
		v.follower.Apply(p, remove)
	}
}

// UpdateWith runs fn in a write transaction of the palace and, in the
// same transaction, upserts items and deletes the vectors of remove, then
// applies both to the attached index: what the vectors go with (a vault
// document's chunks) and the vectors change together. Items are checked
// before anything is written, as Upsert checks them; errors are Upsert's
// and fn's.
func (v *VectorStore) UpdateWith(ctx context.Context, items []engram.VectorItem, remove []string, fn func(*sql.Tx) error) error {
	return v.commit(ctx, "write", items, remove, 0, "", func(tx *sql.Tx, _ *prepared) error { return fn(tx) })
}

// Delete removes vectors by ID, in one transaction, then from the attached
// index, if any; unknown ids are ignored. Deletes are not journaled for
// external indexes (see VectorsSince). Errors: EUNAVAILABLE once the palace
// is closed; ENOTFOUND once the model is dropped.
func (v *VectorStore) Delete(ctx context.Context, ids []string) error {
	if err := v.Usable(); err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	v.wmu.Lock()
	defer v.wmu.Unlock()
	if err := v.Usable(); err != nil {
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
	v.tell(nil, ids)
	return nil
}

// Count returns how many vectors SQLite holds of the model. Errors:
// EUNAVAILABLE once the palace is closed; ENOTFOUND once the model is
// dropped.
func (v *VectorStore) Count(ctx context.Context) (int, error) {
	if err := v.Usable(); err != nil {
		return 0, err
	}
	var n int
	err := v.db.View(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `SELECT count(*) FROM vectors WHERE model = ?`, v.model).Scan(&n)
	})
	return n, vecErr("count vectors of "+v.model, err)
}

// Attach implements vecindex.Store: f reads the model's rows, in change
// order, and is told of every write committed after, until Detach, another
// follower's Attach, or DropModel. Errors: EUNAVAILABLE once the palace is
// closed; ENOTFOUND once the model is dropped; f's error.
func (v *VectorStore) Attach(ctx context.Context, f vecrow.Follower) error {
	v.wmu.Lock()
	defer v.wmu.Unlock()
	if err := v.Usable(); err != nil {
		return err
	}
	err := v.db.viewLoad(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM vectors WHERE model = ?`, v.model).Scan(&n); err != nil {
			return err
		}
		return f.Fill(ctx, n, func(add func(vecrow.Row) error) error {
			return v.eachRow(ctx, tx, add)
		})
	})
	if err != nil {
		return vecErr("load vectors of "+v.model, err)
	}
	if v.follower != nil && v.follower != f {
		v.follower.Release()
	}
	v.follower = f
	return nil
}

// eachRow passes the model's rows to add in change order.
func (v *VectorStore) eachRow(ctx context.Context, tx *sql.Tx, add func(vecrow.Row) error) error {
	rows, err := tx.QueryContext(ctx, `SELECT id, kind, namespace, ts, vec FROM vectors WHERE model = ? ORDER BY seq`, v.model)
	if err != nil {
		return err
	}
	return sqlrow.Each(rows, func() error {
		var (
			r   vecrow.Row
			ts  sql.NullInt64
			raw sql.RawBytes
		)
		if err := rows.Scan(&r.ID, &r.Kind, &r.Namespace, &ts, &raw); err != nil {
			return err
		}
		r.Vec = raw
		r.TS = vecrow.NoTS
		if ts.Valid {
			r.TS = ts.Int64
		}
		return add(r)
	})
}

// Detach implements vecindex.Store: f, if attached, is released and told
// of no more writes.
func (v *VectorStore) Detach(f vecrow.Follower) {
	v.wmu.Lock()
	defer v.wmu.Unlock()
	if v.follower == f {
		v.release()
	}
}

// release detaches the follower, if any; wmu must be held.
func (v *VectorStore) release() {
	if v.follower != nil {
		v.follower.Release()
		v.follower = nil
	}
}

// Watermark returns the archive seq through which the pipeline has embedded
// every turn for this model (see PutTurnVectors), 0 for none.
func (v *VectorStore) Watermark(ctx context.Context) (int64, error) {
	return v.counter(ctx, "embedded_seq")
}

// SyncedSeq returns the change number through which the model's vectors
// were pushed to an external index (see SetSyncedSeq), 0 for none.
func (v *VectorStore) SyncedSeq(ctx context.Context) (int64, error) {
	return v.counter(ctx, "synced_seq")
}

// LastChange returns the newest change number given to one of the model's
// vectors, 0 for none: an external index whose SyncedSeq is below it has
// vectors to catch up on.
func (v *VectorStore) LastChange(ctx context.Context) (int64, error) {
	return v.counter(ctx, "last_seq")
}

// counter reads one of the model's counters; column is a constant.
func (v *VectorStore) counter(ctx context.Context, column string) (int64, error) {
	if err := v.Usable(); err != nil {
		return 0, err
	}
	var n int64
	err := v.db.View(ctx, func(tx *sql.Tx) error { return v.modelRow(ctx, tx, column, &n) })
	return n, vecErr("read "+column+" of "+v.model, err)
}

// modelRow scans columns of the model's row of vector_models into dest,
// inside tx; ENOTFOUND once the model is dropped.
func (v *VectorStore) modelRow(ctx context.Context, tx *sql.Tx, columns string, dest ...any) error {
	found, err := sqlrow.One(tx.QueryRowContext(ctx, `SELECT `+columns+` FROM vector_models WHERE model = ?`, v.model), dest...)
	if err == nil && !found {
		err = errDropped(v.model)
	}
	return err
}

// SetSyncedSeq records that the vectors through change number seq were
// pushed to an external index; 0 starts over (a rebuild). Errors: EINVALID
// for a seq below 0 or above the last change number.
func (v *VectorStore) SetSyncedSeq(ctx context.Context, seq int64) error {
	if err := v.Usable(); err != nil {
		return err
	}
	if seq < 0 {
		return engram.Errorf(engram.EINVALID, "palace: synced seq %d is negative", seq)
	}
	err := v.db.Update(ctx, func(tx *sql.Tx) error {
		var last int64
		if err := v.modelRow(ctx, tx, `last_seq`, &last); err != nil {
			return err
		}
		if seq > last {
			return engram.Errorf(engram.EINVALID, "palace: synced seq %d is beyond the last change %d of vector model %q", seq, last, v.model)
		}
		_, err := tx.ExecContext(ctx, `UPDATE vector_models SET synced_seq = ? WHERE model = ?`, seq, v.model)
		return err
	})
	return vecErr("set synced seq of "+v.model, err)
}

// VectorsSince returns up to limit stored vectors whose change number is
// above afterSeq, in change order, as stored (unit vectors, rounded to
// the codes of vecrow.Encode):
// what an external index has missed since SyncedSeq, or, from 0, all of
// them. A vector written twice appears once, at its last change. Deleted
// vectors do not appear: deletes are not journaled, so an external index
// that missed one is put right by a rebuild. Errors: EINVALID for limit < 1.
func (v *VectorStore) VectorsSince(ctx context.Context, afterSeq int64, limit int) ([]StoredVector, error) {
	if err := v.Usable(); err != nil {
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
		return sqlrow.Each(rows, func() error {
			var (
				sv  StoredVector
				raw sql.RawBytes
			)
			if err := rows.Scan(&sv.ID, &sv.Kind, &sv.Namespace, sqlrow.Time(&sv.TS), &raw, &sv.Seq); err != nil {
				return err
			}
			if len(raw) != vecrow.Bytes(v.dim) {
				return engram.Errorf(engram.EINTERNAL, "palace: vector %q of model %q is %d bytes, want %d", sv.ID, v.model, len(raw), vecrow.Bytes(v.dim))
			}
			sv.Vector = make([]float32, v.dim)
			vecrow.Decode(sv.Vector, raw)
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
// VectorJournal, so a VectorStore feeds an external index directly.
func (v *VectorStore) Since(ctx context.Context, after int64, limit int) ([]engram.VectorItem, int64, error) {
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
	if err := tx.QueryRowContext(ctx, qAnyForgotten).Scan(&any); err != nil || !any {
		return p, err
	}
	ids := make([]string, len(p))
	for i, r := range p {
		ids[i] = r.ID
	}
	gone, err := forgottenAmong(ctx, tx, ids)
	if err != nil || len(gone) == 0 {
		return p, err
	}
	return slices.DeleteFunc(p, func(r vecrow.Row) bool { return slices.Contains(gone, r.ID) }), nil
}
