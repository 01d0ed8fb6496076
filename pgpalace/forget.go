package pgpalace

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	engram "github.com/engram-dev/engram"
)

// ForgetTurns removes the given turns from the palace in one transaction,
// as package palace's ForgetTurns does for the tables this palace holds so
// far: their rows (palace_turns, palace_turn_text) and their skips. Each
// id is recorded in palace_forgotten with its tombstone's seq, so that
// PutTurns never stores it again under a seq up to it. The count of
// deletions moves, so every server's keyword index builds itself again
// before its next search answers. remake is for the scenes, which this
// palace does not hold yet. Removed lists every id given, as package
// palace's does; already forgotten or unknown ids cost nothing.
func (db *DB) ForgetTurns(ctx context.Context, turns []engram.ForgetTurn, at time.Time, remake engram.SceneRemaker) (engram.ForgetResult, error) {
	var res engram.ForgetResult
	if len(turns) == 0 {
		return res, nil
	}
	ids, seqs := make([]string, len(turns)), make([]int64, len(turns))
	for i, t := range turns {
		ids[i], seqs[i] = t.ID, t.Seq
	}
	err := db.update(ctx, "forget turns", func(tx pgx.Tx) error {
		res = engram.ForgetResult{}
		if err := lockWrites(ctx, tx); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO palace_forgotten (id, seq, at)
			SELECT u.id, max(u.seq), $3 FROM unnest($1::text[], $2::bigint[]) AS u(id, seq) GROUP BY u.id
			ON CONFLICT (id) DO UPDATE SET seq = greatest(palace_forgotten.seq, excluded.seq), at = excluded.at`,
			ids, seqs, at.UnixNano()); err != nil {
			return err
		}
		q, err := tx.Query(ctx, `DELETE FROM palace_turns WHERE id = ANY($1) RETURNING seq`, ids)
		if err != nil {
			return err
		}
		gone, err := pgx.CollectRows(q, pgx.RowTo[int64])
		if err != nil {
			return err
		}
		res.Turns = len(gone)
		if _, err := tx.Exec(ctx, `DELETE FROM palace_turn_text WHERE seq = ANY($1)`, gone); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM palace_turn_skips WHERE id = ANY($1)`, ids); err != nil {
			return err
		}
		if len(gone) > 0 {
			if _, err := tx.Exec(ctx, `INSERT INTO palace_meta (key, value) VALUES ($1, 1)
				ON CONFLICT (key) DO UPDATE SET value = palace_meta.value + 1`, keyTurnsDeleted); err != nil {
				return err
			}
		}
		res.Removed = ids
		return nil
	})
	if err != nil {
		return engram.ForgetResult{}, err
	}
	return res, nil
}

// ForgottenLeft returns the forgotten ids that the palace still holds a
// turn row of (at or before the tombstone's seq), with where: what the
// doctor checks. It returns at most limit of them.
func (db *DB) ForgottenLeft(ctx context.Context, limit int) ([]string, error) {
	rows, err := db.pool.Query(ctx, `SELECT f.id || ': a turn row' FROM palace_forgotten f
		WHERE EXISTS (SELECT 1 FROM palace_turns t WHERE t.id = f.id AND t.seq <= f.seq) ORDER BY f.id LIMIT $1`, limitOrAll(limit))
	if err != nil {
		return nil, wrap("forgotten left", err)
	}
	out, err := pgx.AppendRows([]string(nil), rows, pgx.RowTo[string])
	return out, wrap("forgotten left", err)
}

// CatchUpKeywordIndexes brings the loaded keyword index up to the table.
func (db *DB) CatchUpKeywordIndexes(ctx context.Context) error {
	return wrap("catch up the keyword index", db.kw.CatchUp(ctx))
}
