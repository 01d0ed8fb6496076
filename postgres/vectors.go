package postgres

import (
	"context"
	"encoding/binary"
	"math"

	"github.com/jackc/pgx/v5"

	"github.com/engram-dev/engram"
)

// Turn vectors shared by the servers of one archive. Each server keeps its
// own vector index, but a turn's vector under one model is the same on
// every server: the first server to embed a turn stores the vector in
// archive_vectors (float32 bytes, by model and seq), and the others read
// it instead of embedding the turn again, which with a model server is
// most of the cost of a turn.
//
// A vector is only ever of a turn's current text. A forget or a redaction
// deletes the vectors of the turns it rewrites in its own transaction. A
// server stores a vector only for a turn no rewrite has touched since it
// read the turn (RewriteMark, taken before the read, against the rewrite
// journal), and stores it holding the vectors' lock shared, which a
// rewrite holds exclusively: so a vector embedded from a text a redaction
// replaced is never stored after the redaction deleted the old one.

// RewriteMark returns the number of the rewrite journal's last entry (0
// for none): taken before turns are read, it dates what was read for
// PutTurnVectors.
func (a *Archive) RewriteMark(ctx context.Context) (int64, error) {
	if a.closed.Load() {
		return 0, errClosed()
	}
	var n int64
	err := a.retryRead(ctx, func() error {
		return a.pool.QueryRow(ctx, `SELECT coalesce(max(n), 0) FROM archive_rewrites`).Scan(&n)
	})
	if err != nil {
		return 0, readFailure(ctx, err)
	}
	return n, nil
}

// TurnVectors returns the stored vectors of model of the turns of seqs,
// by seq; a turn without one, or with one of another dimension than dim,
// is left out.
func (a *Archive) TurnVectors(ctx context.Context, model string, dim int, seqs []int64) (map[int64][]float32, error) {
	if a.closed.Load() {
		return nil, errClosed()
	}
	out := make(map[int64][]float32, len(seqs))
	if len(seqs) == 0 {
		return out, nil
	}
	err := a.retryRead(ctx, func() error {
		clear(out)
		rows, err := a.pool.Query(ctx, `SELECT seq, vec FROM archive_vectors WHERE model = $1 AND seq = ANY($2)`, model, seqs)
		if err != nil {
			return err
		}
		var (
			seq int64
			raw []byte
		)
		_, err = pgx.ForEachRow(rows, []any{&seq, &raw}, func() error {
			if len(raw) == 4*dim {
				out[seq] = decodeVector(raw)
			}
			return nil
		})
		return err
	})
	if err != nil {
		return nil, readFailure(ctx, err)
	}
	return out, nil
}

// PutTurnVectors stores vecs[i], of model, as the vector of the turn of
// seqs[i], unless a vector is stored for it already, the turn is a
// tombstone or gone, or a rewrite after mark (RewriteMark, taken before
// the turns were read) changed it. It returns how many it stored.
func (a *Archive) PutTurnVectors(ctx context.Context, model string, mark int64, seqs []int64, vecs [][]float32) (int, error) {
	if len(seqs) != len(vecs) {
		return 0, engram.Errorf(engram.EINVALID, "postgres: %d vectors for %d turns", len(vecs), len(seqs))
	}
	if a.closed.Load() {
		return 0, errClosed()
	}
	if len(seqs) == 0 {
		return 0, nil
	}
	raws := make([][]byte, len(vecs))
	for i, v := range vecs {
		raws[i] = encodeVector(v)
	}
	var stored int
	err := pgx.BeginTxFunc(ctx, a.pool, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock_shared($1)`, vectorsLockKey); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO archive_vectors (model, seq, vec)
			SELECT $1, v.seq, v.vec FROM unnest($2::bigint[], $3::bytea[]) AS v(seq, vec)
			WHERE EXISTS (SELECT 1 FROM archive_turns t WHERE t.seq = v.seq AND t.ts IS NOT NULL)
			  AND NOT EXISTS (SELECT 1 FROM archive_rewrites r WHERE r.n > $4 AND v.seq = ANY(r.seqs))
			ON CONFLICT DO NOTHING`, model, seqs, raws, mark)
		stored = int(tag.RowsAffected())
		return err
	})
	if err != nil {
		return 0, dbFailure(ctx, "store turn vectors", err)
	}
	return stored, nil
}

// deleteVectors deletes the shared vectors of the turns of seqs, in a
// rewrite's transaction, under the vectors' lock held exclusively.
func deleteVectors(ctx context.Context, tx pgx.Tx, seqs []int64) error {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, vectorsLockKey); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `DELETE FROM archive_vectors WHERE seq = ANY($1)`, seqs)
	return err
}

// encodeVector is v as little-endian float32s.
func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// decodeVector is the inverse of encodeVector.
func decodeVector(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}
