// Package pgvectors keeps the vectors of a palace in PostgreSQL (package
// pgpalace), one store a model, shared by every server of the database,
// as package palace keeps them in its file: a write of a model's vectors
// takes the model's next change numbers (palace_vector_models.last_seq)
// under the vectors' write lock, which the host's transactions hold to
// commit, and a deletion is journaled under its own
// (palace_vector_deletes). The in-process index of a model (vecindex)
// attached to its store is kept current from those change numbers: right
// after this server's writes, and by a poll for the writes of the others.
// The tables are the host's migrations', and so are the tests (package
// pgpalace: TestVectorStore, TestVectors_FollowOtherServer,
// TestVectors_AsSQLite, TestVectorIndex_Conformance).
package pgvectors

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/sqlrow"
	"github.com/engram-dev/engram/internal/vecrow"
)

// Limits of vector models, package palace's.
const (
	maxModelNameBytes = 256
	maxVectorDim      = 1 << 16
)

// The states of a vector model, package palace's.
const (
	ModelActive   = "active"
	ModelBuilding = "building"
	ModelRetired  = "retired"
)

// Poll is how often an attached index (or a waiter on Notify) looks for
// the other servers' writes: the bound on how late one server finds by
// meaning a turn another embedded.
const Poll = 200 * time.Millisecond

// DeletesKept is how long the deletions journal keeps an entry: an index
// that fell further behind loads its model again.
const DeletesKept = time.Hour

// Host is the palace the vectors are kept in.
type Host struct {
	Pool *pgxpool.Pool
	Now  func() time.Time
	// Poll returns how often an attached index looks for the other
	// servers' writes; 0: never.
	Poll func() time.Duration
	// Update runs fn in a transaction holding the vectors' write lock,
	// committed if fn returns nil, with the host's retries; op names it
	// in errors.
	Update func(ctx context.Context, op string, fn func(pgx.Tx) error) error
	// Wrap names op in err, as the host's errors do.
	Wrap func(op string, err error) error
	// Closed reports whether the palace is closed.
	Closed func() bool
	// SetWatermark advances a job's watermark in tx.
	SetWatermark func(ctx context.Context, tx pgx.Tx, worker string, seq int64) error
	// Turns reads the turns of palace_turns t where where holds.
	Turns func(ctx context.Context, where string, args ...any) ([]engram.Turn, error)
}

// Stores are a palace's vector stores, one a model.
type Stores struct {
	host    Host
	mu      sync.Mutex
	byModel map[string]*Store
}

// New returns the vector stores of the palace host.
func New(host Host) *Stores { return &Stores{host: host} }

// Store keeps the vectors of one model in palace_vectors. Get one
// with DB.Vectors; it is safe for concurrent use, by this process and
// by other servers.
type Store struct {
	db      *Stores
	model   string
	dim     int
	dropped atomic.Bool

	// mu guards the follower and what it has seen, and serialises its
	// catch-ups, so that it applies the changes in their order.
	mu       sync.Mutex
	follower vecrow.Follower
	seen     int64 // the change number the follower holds the model through
	waiters  chan struct{}
	polling  bool
	stop     chan struct{}
}

// Vectors returns the vector store of model, creating the model (state
// building) if the palace has none of that name, as package palace's
// does. dim 0 takes the dimension stored. Errors: EINVALID for an empty
// or overlong model name, a bad dim, or dim 0 for a new model; ECONFLICT
// when the model holds vectors of another dimension; EUNAVAILABLE once the
// palace is closed.
func (db *Stores) Vectors(ctx context.Context, model string, dim int) (*Store, error) {
	if db.host.Closed() {
		return nil, errClosed()
	}
	switch {
	case model == "":
		return nil, engram.Errorf(engram.EINVALID, "pgvectors: no vector model named")
	case len(model) > maxModelNameBytes:
		return nil, engram.Errorf(engram.EINVALID, "pgvectors: vector model name is %d bytes, over the limit of %d", len(model), maxModelNameBytes)
	case !utf8.ValidString(model):
		return nil, engram.Errorf(engram.EINVALID, "pgvectors: vector model name is not valid UTF-8")
	case dim < 0 || dim > maxVectorDim:
		return nil, engram.Errorf(engram.EINVALID, "pgvectors: vector model %q: dimension %d is negative or above %d", model, dim, maxVectorDim)
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if v := db.byModel[model]; v != nil && !v.dropped.Load() {
		if dim != 0 && dim != v.dim {
			return nil, errDimConflict(model, v.dim, dim)
		}
		return v, nil
	}
	stored := 0
	err := db.host.Update(ctx, "open vector model "+model, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `SELECT dim FROM palace_vector_models WHERE model = $1`, model).Scan(&stored)
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if dim == 0 {
			return engram.Errorf(engram.EINVALID, "pgvectors: vector model %q is new and its dimension is unknown; embed a text first to learn it", model)
		}
		stored = dim
		_, err = tx.Exec(ctx, `INSERT INTO palace_vector_models (model, dim, state, created_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (model) DO NOTHING`, model, dim, ModelBuilding, db.host.Now().UnixNano())
		if err != nil {
			return err
		}
		// Another server may have made it first, with its dimension.
		return tx.QueryRow(ctx, `SELECT dim FROM palace_vector_models WHERE model = $1`, model).Scan(&stored)
	})
	if err != nil {
		return nil, err
	}
	if dim != 0 && dim != stored {
		return nil, errDimConflict(model, stored, dim)
	}
	v := &Store{db: db, model: model, dim: stored}
	if db.byModel == nil {
		db.byModel = map[string]*Store{}
	}
	db.byModel[model] = v
	return v, nil
}

func errDimConflict(model string, stored, asked int) error {
	return engram.Errorf(engram.ECONFLICT,
		"pgvectors: vector model %q holds vectors of dimension %d, not %d; embed under another model name or drop the model (engram reembed)",
		model, stored, asked)
}

func errClosed() error {
	return &engram.Error{Code: engram.EUNAVAILABLE, Message: "pgvectors: the palace is closed"}
}

func errDropped(model string) error {
	return engram.Errorf(engram.ENOTFOUND, "pgvectors: vector model %q was dropped", model)
}

// Model returns the name of the store's model.
func (v *Store) Model() string { return v.model }

// Dim returns the dimension of the store's vectors.
func (v *Store) Dim() int { return v.dim }

// Usable returns EUNAVAILABLE once the palace is closed and ENOTFOUND once
// the model is dropped.
func (v *Store) Usable() error {
	if v.db.host.Closed() {
		return errClosed()
	}
	if v.dropped.Load() {
		return errDropped(v.model)
	}
	return nil
}

// Upsert inserts or replaces vectors by ID in one transaction; every item
// is checked first (vecrow.Prepare: EINVALID, nothing written).
func (v *Store) Upsert(ctx context.Context, items []engram.VectorItem) error {
	return v.put(ctx, items, 0, "")
}

// PutLayerVectors is Upsert that also advances a layer worker's watermark
// to throughSeq, in the same transaction.
func (v *Store) PutLayerVectors(ctx context.Context, items []engram.VectorItem, worker string, throughSeq int64) error {
	if worker == "" || throughSeq < 0 {
		return engram.Errorf(engram.EINVALID, "pgvectors: layer vectors need a worker and a watermark, got %q and %d", worker, throughSeq)
	}
	return v.put(ctx, items, throughSeq, worker)
}

// PutTurnVectors is Upsert that also advances the model's watermark (the
// turns embedded) to throughSeq, in the same transaction; it never moves
// back. A vector of a turn forgotten meanwhile is left out.
func (v *Store) PutTurnVectors(ctx context.Context, items []engram.VectorItem, throughSeq int64) error {
	if throughSeq < 0 {
		return engram.Errorf(engram.EINVALID, "pgvectors: watermark %d is negative", throughSeq)
	}
	return v.put(ctx, items, throughSeq, "")
}

// put writes items and advances a watermark: the model's, or worker's.
func (v *Store) put(ctx context.Context, items []engram.VectorItem, throughSeq int64, worker string) error {
	if err := v.Usable(); err != nil {
		return err
	}
	if len(items) == 0 && throughSeq == 0 {
		return nil
	}
	rows, err := vecrow.Prepare(v.model, v.dim, items)
	if err != nil {
		return err
	}
	return v.write(ctx, "put", func(tx pgx.Tx) error {
		if worker == "" && len(rows) > 0 {
			// A turn embedded from a read that began before its forget.
			ids := make([]string, len(rows))
			for i, r := range rows {
				ids[i] = r.ID
			}
			q, err := tx.Query(ctx, `SELECT id FROM palace_forgotten WHERE id = ANY($1)`, ids)
			if err != nil {
				return err
			}
			gone, err := pgx.CollectRows(q, pgx.RowTo[string])
			if err != nil {
				return err
			}
			rows = deleteIDs(rows, gone)
		}
		if worker != "" {
			if err := v.db.host.SetWatermark(ctx, tx, worker, throughSeq); err != nil {
				return err
			}
		} else if _, err := tx.Exec(ctx, `UPDATE palace_vector_models SET embedded_seq = greatest(embedded_seq, $1) WHERE model = $2`,
			throughSeq, v.model); err != nil {
			return err
		}
		return Put(ctx, tx, v.model, rows)
	})
}

// deleteIDs is rows less those of ids.
func deleteIDs(rows []vecrow.Row, ids []string) []vecrow.Row {
	if len(ids) == 0 {
		return rows
	}
	gone := make(map[string]bool, len(ids))
	for _, id := range ids {
		gone[id] = true
	}
	out := rows[:0]
	for _, r := range rows {
		if !gone[r.ID] {
			out = append(out, r)
		}
	}
	return out
}

// Put writes rows of model under its next change numbers, in tx, which
// holds the vectors' write lock.
func Put(ctx context.Context, tx pgx.Tx, model string, rows []vecrow.Row) error {
	if len(rows) == 0 {
		return nil
	}
	var last int64
	if err := tx.QueryRow(ctx, `UPDATE palace_vector_models SET last_seq = last_seq + $1, last_put = last_seq + $1 WHERE model = $2 RETURNING last_seq`,
		len(rows), model).Scan(&last); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return errDropped(model)
		}
		return err
	}
	ids, kinds, nss := make([]string, len(rows)), make([]string, len(rows)), make([]string, len(rows))
	tss, seqs := make([]*int64, len(rows)), make([]int64, len(rows))
	vecs := make([][]byte, len(rows))
	for i, r := range rows {
		ids[i], kinds[i], nss[i], vecs[i] = r.ID, r.Kind, r.Namespace, r.Vec
		if r.TS != vecrow.NoTS {
			ts := r.TS
			tss[i] = &ts
		}
		seqs[i] = last - int64(len(rows)) + int64(i) + 1
	}
	_, err := tx.Exec(ctx, `INSERT INTO palace_vectors (model, id, kind, namespace, ts, vec, seq)
		SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::bigint[], $6::bytea[], $7::bigint[])
		ON CONFLICT (model, id) DO UPDATE SET kind = excluded.kind, namespace = excluded.namespace, ts = excluded.ts,
			vec = excluded.vec, seq = excluded.seq`, model, ids, kinds, nss, tss, vecs, seqs)
	return err
}

// Delete deletes the vectors of ids of model ("" for every model),
// journaling each deletion under its model's next change number, in tx,
// which holds the vectors' write lock. It returns the models that lost
// one.
func Delete(ctx context.Context, tx pgx.Tx, model string, ids []string, now int64) ([]string, error) {
	rows, err := tx.Query(ctx, `WITH gone AS (
			DELETE FROM palace_vectors WHERE id = ANY($1) AND ($2 = '' OR model = $2) RETURNING model, id
		), numbered AS (
			SELECT g.model, g.id, m.last_seq + row_number() OVER (PARTITION BY g.model ORDER BY g.id) AS seq
			FROM gone g JOIN palace_vector_models m ON m.model = g.model
		), journal AS (
			INSERT INTO palace_vector_deletes (model, seq, id, at) SELECT model, seq, id, $3 FROM numbered
		)
		UPDATE palace_vector_models m SET last_seq = n.top FROM (SELECT model, max(seq) AS top FROM numbered GROUP BY model) n
		WHERE m.model = n.model RETURNING m.model`, ids, model, now)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// write runs fn in a transaction under the vectors' lock, then brings
// the attached index up to the commit and wakes the waiters of Notify.
func (v *Store) write(ctx context.Context, op string, fn func(tx pgx.Tx) error) error {
	if err := v.Usable(); err != nil {
		return err
	}
	if err := v.db.host.Update(ctx, op+" vectors of "+v.model, fn); err != nil {
		return err
	}
	return v.CatchUp(ctx)
}

// Delete removes vectors by ID in one transaction; unknown ids are
// ignored.
func (v *Store) Delete(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return v.Usable()
	}
	return v.write(ctx, "delete", func(tx pgx.Tx) error {
		_, err := Delete(ctx, tx, v.model, ids, v.db.host.Now().UnixNano())
		return err
	})
}

// Count returns how many vectors the palace holds of the model.
func (v *Store) Count(ctx context.Context) (int, error) {
	if err := v.Usable(); err != nil {
		return 0, err
	}
	var n int
	err := v.db.host.Pool.QueryRow(ctx, `SELECT count(*) FROM palace_vectors WHERE model = $1`, v.model).Scan(&n)
	return n, v.db.host.Wrap("count vectors of "+v.model, err)
}

// Attach implements vecindex.Store: f reads the model's rows, in change
// order, and is then kept current with every server's writes (catchUp),
// until Detach, another follower's Attach, DropModel or Close.
func (v *Store) Attach(ctx context.Context, f vecrow.Follower) error {
	if err := v.Usable(); err != nil {
		return err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := v.fill(ctx, f); err != nil {
		return err
	}
	if v.follower != nil && v.follower != f {
		v.follower.Release()
	}
	v.follower = f
	v.startPoll()
	return nil
}

// fill has f read the model's rows in one snapshot and records the change
// number it holds them through. Call with mu held.
func (v *Store) fill(ctx context.Context, f vecrow.Follower) error {
	err := pgx.BeginTxFunc(ctx, v.db.host.Pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var n int
		if err := tx.QueryRow(ctx, `SELECT m.last_seq, (SELECT count(*) FROM palace_vectors WHERE model = $1)
			FROM palace_vector_models m WHERE m.model = $1`, v.model).Scan(&v.seen, &n); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return errDropped(v.model)
			}
			return err
		}
		return f.Fill(ctx, n, func(add func(vecrow.Row) error) error {
			rows, err := tx.Query(ctx, `SELECT id, kind, namespace, ts, vec FROM palace_vectors WHERE model = $1 ORDER BY seq`, v.model)
			if err != nil {
				return err
			}
			var (
				r  vecrow.Row
				ts *int64
			)
			_, err = pgx.ForEachRow(rows, []any{&r.ID, &r.Kind, &r.Namespace, &ts, &r.Vec}, func() error {
				r.TS = vecrow.NoTS
				if ts != nil {
					r.TS = *ts
				}
				return add(r)
			})
			return err
		})
	})
	if _, ok := errors.AsType[*engram.Error](err); ok {
		return err
	}
	return v.db.host.Wrap("load vectors of "+v.model, err)
}

// CatchUp brings the attached index, if any, up to the model's last
// change, in one snapshot: the rows written since it was (the last write
// of each) and the ids deleted since and not written again; when the
// journal of deletions no longer reaches back to it, it loads the model
// again. Then it wakes the waiters of Notify, if anything changed.
func (v *Store) CatchUp(ctx context.Context) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	var last, pruned int64
	err := v.db.host.Pool.QueryRow(ctx, `SELECT last_seq, pruned_seq FROM palace_vector_models WHERE model = $1`, v.model).Scan(&last, &pruned)
	if errors.Is(err, pgx.ErrNoRows) {
		return errDropped(v.model)
	}
	if err != nil {
		return v.db.host.Wrap("follow vectors of "+v.model, err)
	}
	if last <= v.seen {
		return nil
	}
	if v.follower == nil {
		v.seen = last
		v.wake()
		return nil
	}
	if pruned > v.seen {
		if err := v.fill(ctx, v.follower); err != nil {
			return err
		}
		v.wake()
		return nil
	}
	var (
		put    []vecrow.Row
		remove []string
		top    int64
	)
	err = pgx.BeginTxFunc(ctx, v.db.host.Pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT last_seq FROM palace_vector_models WHERE model = $1`, v.model).Scan(&top); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT id, kind, namespace, ts, vec FROM palace_vectors WHERE model = $1 AND seq > $2 ORDER BY seq`,
			v.model, v.seen)
		if err != nil {
			return err
		}
		put, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (vecrow.Row, error) {
			var (
				row vecrow.Row
				ts  *int64
			)
			err := r.Scan(&row.ID, &row.Kind, &row.Namespace, &ts, &row.Vec)
			row.TS = vecrow.NoTS
			if ts != nil {
				row.TS = *ts
			}
			return row, err
		})
		if err != nil {
			return err
		}
		rows, err = tx.Query(ctx, `SELECT DISTINCT d.id FROM palace_vector_deletes d WHERE d.model = $1 AND d.seq > $2
			AND NOT EXISTS (SELECT 1 FROM palace_vectors x WHERE x.model = d.model AND x.id = d.id)`, v.model, v.seen)
		if err != nil {
			return err
		}
		remove, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		return v.db.host.Wrap("follow vectors of "+v.model, err)
	}
	v.follower.Apply(put, remove)
	v.seen = top
	v.wake()
	return nil
}

// Notify returns a channel closed after the next write of the model's
// vectors a catch-up sees (this server's at once, the others' within
// vectorPoll): what an external index's sync waits on.
func (v *Store) Notify() <-chan struct{} {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.waiters == nil {
		v.waiters = make(chan struct{})
	}
	v.startPoll()
	return v.waiters
}

// wake closes the channel Notify handed out. Call with mu held.
func (v *Store) wake() {
	if v.waiters != nil {
		close(v.waiters)
		v.waiters = nil
	}
}

// startPoll starts the poll that follows the other servers' writes, once.
// Call with mu held.
func (v *Store) startPoll() {
	if v.polling || v.db.host.Poll() <= 0 {
		return
	}
	v.polling, v.stop = true, make(chan struct{})
	stop := v.stop
	go func() {
		every := v.db.host.Poll()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if v.Usable() != nil {
					return
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*every)
				_ = v.CatchUp(ctx) // a database down: the next poll tries again
				cancel()
			}
		}
	}()
}

// stopPoll stops the poll, if it runs. Call with mu held.
func (v *Store) stopPoll() {
	if v.polling {
		close(v.stop)
		v.polling = false
	}
}

// Detach implements vecindex.Store: f, if attached, is released and told
// of no more writes.
func (v *Store) Detach(f vecrow.Follower) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.follower == f {
		v.follower.Release()
		v.follower = nil
		if v.waiters == nil {
			v.stopPoll()
		}
	}
}

// close releases the follower and stops the poll (the palace closes, or
// the model is dropped).
func (v *Store) close() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.follower != nil {
		v.follower.Release()
		v.follower = nil
	}
	v.stopPoll()
}

// Watermark returns the archive seq through which every turn is embedded
// with this model, 0 for none.
func (v *Store) Watermark(ctx context.Context) (int64, error) {
	return v.counter(ctx, "embedded_seq")
}

// SyncedSeq returns the change number through which the model's vectors
// were pushed to an external index, 0 for none.
func (v *Store) SyncedSeq(ctx context.Context) (int64, error) {
	return v.counter(ctx, "synced_seq")
}

// LastChange returns the newest change number of the model's vectors.
func (v *Store) LastChange(ctx context.Context) (int64, error) {
	return v.counter(ctx, "last_seq")
}

// counter reads one of the model's counters; column is a constant.
func (v *Store) counter(ctx context.Context, column string) (int64, error) {
	if err := v.Usable(); err != nil {
		return 0, err
	}
	var n int64
	err := v.db.host.Pool.QueryRow(ctx, `SELECT `+column+` FROM palace_vector_models WHERE model = $1`, v.model).Scan(&n)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, errDropped(v.model)
	}
	return n, v.db.host.Wrap("read "+column+" of "+v.model, err)
}

// SetSyncedSeq records that the vectors through change number seq were
// pushed to an external index; 0 starts over. Errors: EINVALID for a seq
// below 0 or beyond the last change.
func (v *Store) SetSyncedSeq(ctx context.Context, seq int64) error {
	if err := v.Usable(); err != nil {
		return err
	}
	if seq < 0 {
		return engram.Errorf(engram.EINVALID, "pgvectors: synced seq %d is negative", seq)
	}
	return v.db.host.Update(ctx, "set synced seq of "+v.model, func(tx pgx.Tx) error {
		var last int64
		err := tx.QueryRow(ctx, `SELECT last_put FROM palace_vector_models WHERE model = $1 FOR UPDATE`, v.model).Scan(&last)
		if errors.Is(err, pgx.ErrNoRows) {
			return errDropped(v.model)
		}
		if err != nil {
			return err
		}
		if seq > last {
			return engram.Errorf(engram.EINVALID, "pgvectors: synced seq %d is beyond the last change %d of vector model %q", seq, last, v.model)
		}
		_, err = tx.Exec(ctx, `UPDATE palace_vector_models SET synced_seq = $1 WHERE model = $2`, seq, v.model)
		return err
	})
}

// Since returns up to limit vectors written after change number after, in
// change order, as stored, with the change number of the last one (after
// itself when none): what an external index missed. Deletions are not
// in it (an external index that missed one is put right by a rebuild).
func (v *Store) Since(ctx context.Context, after int64, limit int) ([]engram.VectorItem, int64, error) {
	if err := v.Usable(); err != nil {
		return nil, after, err
	}
	if limit < 1 {
		return nil, after, engram.Errorf(engram.EINVALID, "pgvectors: limit must be at least 1, got %d", limit)
	}
	rows, err := v.db.host.Pool.Query(ctx, `SELECT id, kind, namespace, ts, vec, seq FROM palace_vectors
		WHERE model = $1 AND seq > $2 ORDER BY seq LIMIT $3`, v.model, after, limit)
	if err != nil {
		return nil, after, v.db.host.Wrap("read vectors of "+v.model, err)
	}
	var (
		out  []engram.VectorItem
		last = after
	)
	_, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (struct{}, error) {
		var (
			it  engram.VectorItem
			raw []byte
		)
		if err := r.Scan(&it.ID, &it.Kind, &it.Namespace, sqlrow.Time(&it.TS), &raw, &last); err != nil {
			return struct{}{}, err
		}
		if len(raw) != vecrow.Bytes(v.dim) {
			return struct{}{}, engram.Errorf(engram.EINTERNAL, "pgvectors: vector %q of model %q is %d bytes, want %d", it.ID, v.model, len(raw), vecrow.Bytes(v.dim))
		}
		it.Vector = make([]float32, v.dim)
		vecrow.Decode(it.Vector, raw)
		out = append(out, it)
		return struct{}{}, nil
	})
	if err != nil {
		return nil, after, v.db.host.Wrap("read vectors of "+v.model, err)
	}
	return out, last, nil
}

// ActiveModel returns the active vector model and its dimension; ok is
// false when no model is active.
func (db *Stores) ActiveModel(ctx context.Context) (model string, dim int, ok bool, err error) {
	err = db.host.Pool.QueryRow(ctx, `SELECT model, dim FROM palace_vector_models WHERE state = $1`, ModelActive).Scan(&model, &dim)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", 0, false, nil
	}
	if err != nil {
		return "", 0, false, db.host.Wrap("active vector model", err)
	}
	return model, dim, true, nil
}

// ActivateModel makes model the active one and retires the one that was,
// in one transaction; activating the active model does nothing.
// Errors: ENOTFOUND for a model the palace does not hold.
func (db *Stores) ActivateModel(ctx context.Context, model string) error {
	return db.host.Update(ctx, "activate vector model "+model, func(tx pgx.Tx) error {
		state, err := modelState(ctx, tx, model)
		if err != nil {
			return err
		}
		if state == ModelActive {
			return nil
		}
		if _, err := tx.Exec(ctx, `UPDATE palace_vector_models SET state = $1 WHERE state = $2`, ModelRetired, ModelActive); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE palace_vector_models SET state = $1, activated_at = $2 WHERE model = $3`, ModelActive, db.host.Now().UnixNano(), model)
		return err
	})
}

// modelState reads the state of model in tx; ENOTFOUND for a model the
// palace does not hold.
func modelState(ctx context.Context, tx pgx.Tx, model string) (string, error) {
	var state string
	err := tx.QueryRow(ctx, `SELECT state FROM palace_vector_models WHERE model = $1`, model).Scan(&state)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", errNoModel(model)
	}
	return state, err
}

// SetModelState sets the state of model: active is ActivateModel; building
// and retired leave the other models as they are. Errors: EINVALID for an
// unknown state; ENOTFOUND for a model the palace does not hold.
func (db *Stores) SetModelState(ctx context.Context, model, state string) error {
	switch state {
	case ModelActive:
		return db.ActivateModel(ctx, model)
	case ModelBuilding, ModelRetired:
	default:
		return engram.Errorf(engram.EINVALID, "pgvectors: unknown vector model state %q (want %s, %s or %s)", state, ModelActive, ModelBuilding, ModelRetired)
	}
	return db.host.Update(ctx, "set state of vector model "+model, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE palace_vector_models SET state = $1 WHERE model = $2`, state, model)
		if err == nil && tag.RowsAffected() == 0 {
			err = errNoModel(model)
		}
		return err
	})
}

// DropModel deletes model and all its vectors, and releases the index
// attached to its store here (another server's fails with ENOTFOUND at
// its next catch-up). Errors: ENOTFOUND for a model the palace does not
// hold; ECONFLICT for the active model.
func (db *Stores) DropModel(ctx context.Context, model string) error {
	db.mu.Lock()
	defer db.mu.Unlock()
	err := db.host.Update(ctx, "drop vector model "+model, func(tx pgx.Tx) error {
		state, err := modelState(ctx, tx, model)
		if err != nil {
			return err
		}
		if state == ModelActive {
			return engram.Errorf(engram.ECONFLICT, "pgvectors: vector model %q is active; activate another model or retire it before dropping it", model)
		}
		_, err = tx.Exec(ctx, `DELETE FROM palace_vector_models WHERE model = $1`, model) // its vectors and journal cascade
		return err
	})
	if err != nil {
		return err
	}
	if v := db.byModel[model]; v != nil {
		v.dropped.Store(true)
		v.close()
		delete(db.byModel, model)
	}
	return nil
}

func errNoModel(model string) error {
	return engram.Errorf(engram.ENOTFOUND, "pgvectors: no vector model %q", model)
}

// Follow brings the attached indexes of this server up to a
// rewrite just committed (a forget, a redaction), so that a search here
// no longer finds what it deleted.
func (db *Stores) Follow(ctx context.Context) error {
	stores := db.all()
	var errs []error
	for _, v := range stores {
		if v.Usable() == nil {
			errs = append(errs, v.CatchUp(ctx))
		}
	}
	return errors.Join(errs...)
}

// Prune drops the journal's deletions older than DeletesKept,
// raising each model's pruned_seq past them: an index behind it loads its
// model again.
func Prune(ctx context.Context, tx pgx.Tx, now time.Time) error {
	_, err := tx.Exec(ctx, `WITH gone AS (
			DELETE FROM palace_vector_deletes WHERE at < $1 RETURNING model, seq
		)
		UPDATE palace_vector_models m SET pruned_seq = greatest(m.pruned_seq, g.top)
		FROM (SELECT model, max(seq) AS top FROM gone GROUP BY model) g WHERE m.model = g.model`, now.Add(-DeletesKept).UnixNano())
	return err
}

// all are the stores handed out.
func (db *Stores) all() []*Store {
	db.mu.Lock()
	defer db.mu.Unlock()
	out := make([]*Store, 0, len(db.byModel))
	for _, v := range db.byModel {
		out = append(out, v)
	}
	return out
}

// Close releases every store's index and stops their polls (the palace
// closes).
func (db *Stores) Close() {
	for _, v := range db.all() {
		v.close()
	}
}

// Dropped marks every store handed out dropped and releases it: the
// palace was emptied (a rebuild), its models are gone.
func (db *Stores) Dropped() {
	db.mu.Lock()
	defer db.mu.Unlock()
	for model, v := range db.byModel {
		v.dropped.Store(true)
		v.close()
		delete(db.byModel, model)
	}
}

// Lag says how far each attached index is behind its model's changes,
// a note each, none when current.
func (db *Stores) Lag(ctx context.Context) ([]string, error) {
	var notes []string
	for _, v := range db.all() {
		v.mu.Lock()
		attached, seen := v.follower != nil, v.seen
		v.mu.Unlock()
		if !attached {
			continue
		}
		last, err := v.counter(ctx, "last_seq")
		if err != nil {
			return nil, err
		}
		if last > seen {
			notes = append(notes, fmt.Sprintf("vectors of %s: %d changes behind (read within %s)", v.model, last-seen, db.host.Poll()))
		}
	}
	return notes, nil
}
