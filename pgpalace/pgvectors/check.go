package pgvectors

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/vecrow"
)

// checkTries bounds how often Check reads the model again while other
// servers write it between its catch-up and its read.
const checkTries = 3

// Check reports on the model's vectors, as package palace's does: the
// stored rows by kind and those unusable, the turns through throughSeq
// without a vector, the turn vectors without a turn, and, with an index
// attached here, how its copy differs from the rows (caught up first:
// a copy that another server's write keeps behind is compared as it is).
func (v *Store) Check(ctx context.Context, throughSeq int64) (engram.VectorCheck, error) {
	c := engram.VectorCheck{Model: v.model, Dim: v.dim, ByKind: map[string]int{}}
	if err := v.Usable(); err != nil {
		return c, err
	}
	for try := 1; ; try++ {
		if err := v.CatchUp(ctx); err != nil {
			return c, err
		}
		done, err := v.check(ctx, throughSeq, &c, try == checkTries)
		if err != nil || done {
			return c, err
		}
	}
}

// check is one try of Check, in one snapshot; done is false when the
// attached copy is behind the snapshot and anyway is not set.
func (v *Store) check(ctx context.Context, throughSeq int64, c *engram.VectorCheck, anyway bool) (done bool, err error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	*c = engram.VectorCheck{Model: v.model, Dim: v.dim, ByKind: map[string]int{}}
	m := v.follower
	tally := vecrow.NewTally(c, m)
	err = pgx.BeginTxFunc(ctx, v.db.host.Pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var last int64
		if err := tx.QueryRow(ctx, `SELECT state, embedded_seq, last_put, synced_seq, last_seq FROM palace_vector_models WHERE model = $1`, v.model).
			Scan(&c.State, &c.EmbeddedSeq, &c.LastChange, &c.SyncedSeq, &last); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return errDropped(v.model)
			}
			return err
		}
		if m != nil && last != v.seen && !anyway {
			return nil
		}
		done = true
		if err := v.eachStored(ctx, tx, tally.Add); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT t.id FROM palace_turns t
			WHERE t.seq <= $1 AND NOT EXISTS (SELECT 1 FROM palace_vectors v WHERE v.model = $2 AND v.id = t.id) ORDER BY t.seq`, throughSeq, v.model)
		if err != nil {
			return err
		}
		var id string
		if _, err := pgx.ForEachRow(rows, []any{&id}, func() error { tally.Missing(id); return nil }); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT count(*) FROM palace_vectors v
			WHERE v.model = $1 AND v.kind = $2 AND NOT EXISTS (SELECT 1 FROM palace_turns t WHERE t.id = v.id)`,
			v.model, engram.KindTurn).Scan(&c.Orphans)
	})
	if err != nil {
		if _, ok := errors.AsType[*engram.Error](err); ok {
			return true, err
		}
		return true, v.db.host.Wrap("check vectors of "+v.model, err)
	}
	tally.Done()
	return done, nil
}

// eachStored reads every stored vector of the model and calls fn with its
// id, kind and what makes it unusable (Reason "" when nothing does), and
// its stored bytes.
func (v *Store) eachStored(ctx context.Context, tx pgx.Tx, fn func(b engram.BadVector, raw []byte)) error {
	rows, err := tx.Query(ctx, `SELECT id, kind, vec FROM palace_vectors WHERE model = $1`, v.model)
	if err != nil {
		return err
	}
	unit := make([]float32, v.dim)
	var (
		b   engram.BadVector
		raw []byte
	)
	_, err = pgx.ForEachRow(rows, []any{&b.ID, &b.Kind, &raw}, func() error {
		b.Reason = vecrow.Bad(raw, unit)
		fn(b, raw)
		return nil
	})
	return err
}

// DropBad deletes the model's unusable vectors and returns them (their
// texts need embedding again), in one transaction.
func (v *Store) DropBad(ctx context.Context) ([]engram.BadVector, error) {
	var bad []engram.BadVector
	err := v.write(ctx, "drop bad", func(tx pgx.Tx) error {
		bad = bad[:0]
		err := v.eachStored(ctx, tx, func(b engram.BadVector, _ []byte) {
			if b.Reason != "" {
				bad = append(bad, b)
			}
		})
		if err != nil || len(bad) == 0 {
			return err
		}
		ids := make([]string, len(bad))
		for i, b := range bad {
			ids[i] = b.ID
		}
		_, err = Delete(ctx, tx, v.model, ids, v.db.host.Now().UnixNano())
		return err
	})
	return bad, err
}

// TurnsWithoutVector returns up to limit turns, with seq in (afterSeq,
// throughSeq], in seq order, that have no vector of the model. Errors:
// EINVALID for limit < 1.
func (v *Store) TurnsWithoutVector(ctx context.Context, afterSeq, throughSeq int64, limit int) ([]engram.Turn, error) {
	if err := v.Usable(); err != nil {
		return nil, err
	}
	if limit < 1 {
		return nil, engram.Errorf(engram.EINVALID, "pgvectors: limit must be at least 1, got %d", limit)
	}
	out, err := v.db.host.Turns(ctx, `t.seq > $1 AND t.seq <= $2 AND NOT EXISTS (SELECT 1 FROM palace_vectors v WHERE v.model = $3 AND v.id = t.id)
		ORDER BY t.seq LIMIT $4`, afterSeq, throughSeq, v.model, limit)
	return out, v.db.host.Wrap("turns without a vector of "+v.model, err)
}

// CountByKind returns how many vectors the model holds of each kind.
func (v *Store) CountByKind(ctx context.Context) (map[string]int, error) {
	if err := v.Usable(); err != nil {
		return nil, err
	}
	rows, err := v.db.host.Pool.Query(ctx, `SELECT kind, count(*) FROM palace_vectors WHERE model = $1 GROUP BY kind`, v.model)
	if err != nil {
		return nil, v.db.host.Wrap("count vectors of "+v.model, err)
	}
	out := map[string]int{}
	var (
		kind string
		n    int
	)
	_, err = pgx.ForEachRow(rows, []any{&kind, &n}, func() error { out[kind] = n; return nil })
	return out, v.db.host.Wrap("count vectors of "+v.model, err)
}
