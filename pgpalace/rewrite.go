package pgpalace

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/redacttext"
	"github.com/engram-dev/engram/pgpalace/pgvectors"
)

// ForgetTurns removes the given turns from the palace in one transaction,
// as package palace's ForgetTurns does for the tables this palace holds so
// far: their rows (palace_turns, palace_turn_text), their skips, the
// session parts they were in (counted again, or deleted when no turn is
// left: fixUnits), the scenes holding them with their units (made again of
// the turns left by remake, when set: forgetScenes), and their evidence in
// the persona facets (keepFacets). Each id is recorded in
// palace_forgotten with its tombstone's seq, so that PutTurns never
// stores it again under a seq up to it. The counts of deletions move, so
// every server's keyword indexes build themselves again before their
// next search answers. Removed lists every id given, as package palace's
// does; already forgotten or unknown ids cost nothing.
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
		if err := lockWrites(ctx, tx, graphLockKey, personaLockKey, memoryLockKey, vectorLockKey); err != nil {
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
		units, err := unitsOf(ctx, tx, gone)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM palace_unit_turns WHERE turn_seq = ANY($1)`, gone); err != nil {
			return err
		}
		if err := fixUnits(ctx, tx, units, &res.Units, &res.Removed); err != nil {
			return err
		}
		w := &memories{ctx: ctx, tx: tx}
		if err := w.begin(); err != nil {
			return err
		}
		if err := w.forget(ids, &res); err != nil {
			return err
		}
		if err := forgetScenes(ctx, tx, ids, remake, &res); err != nil {
			return err
		}
		forgotten := map[string]bool{}
		for _, id := range ids {
			forgotten[id] = true
		}
		if res.Facets, err = keepFacets(ctx, tx, forgotten, nil); err != nil {
			return err
		}
		if err := (graph{ctx, tx}).forgetStatements(ids, &res.Facts, &res.Removed); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM palace_turn_skips WHERE id = ANY($1)`, ids); err != nil {
			return err
		}
		if len(gone) > 0 {
			if err := countDeletion(ctx, tx, keyTurnsDeleted); err != nil {
				return err
			}
		}
		res.Removed = append(res.Removed, ids...)
		_, err = pgvectors.Delete(ctx, tx, "", res.Removed, db.now().UnixNano())
		return err
	})
	if err != nil {
		return engram.ForgetResult{}, err
	}
	// This server's indexes let go of the vectors now; should the
	// database not answer, their poll does it within pgvectors.Poll.
	_ = db.vectors.Follow(ctx)
	return res, nil
}

// ForgottenLeft returns the forgotten ids that the palace still holds
// (a turn row at or before the tombstone's seq, a memory's sources, a
// scene, a graph statement or triple, a persona facet), with where: what
// the doctor checks. It returns at most limit of them.
func (db *DB) ForgottenLeft(ctx context.Context, limit int) ([]string, error) {
	rows, err := db.pool.Query(ctx, `SELECT id || ': ' || what FROM (SELECT f.id, CASE
			WHEN EXISTS (SELECT 1 FROM palace_turns t WHERE t.id = f.id AND t.seq <= f.seq) THEN 'a turn row'
			WHEN EXISTS (SELECT 1 FROM palace_memories m WHERE m.sources @> ARRAY[f.id]) THEN 'a memory''s sources'
			WHEN EXISTS (SELECT 1 FROM palace_scenes s WHERE s.turns @> ARRAY[f.id]) THEN 'a scene'
			WHEN EXISTS (SELECT 1 FROM palace_kg_statements s WHERE s.sources @> ARRAY[f.id]) THEN 'a graph statement'
			WHEN EXISTS (SELECT 1 FROM palace_kg_triples s WHERE s.sources @> ARRAY[f.id]) THEN 'a graph triple'
			WHEN EXISTS (SELECT 1 FROM palace_persona_facets p WHERE p.evidence @> ARRAY[f.id]) THEN 'a persona facet'
			ELSE '' END AS what FROM palace_forgotten f) AS left_
		WHERE what <> '' ORDER BY id LIMIT $1`, limitOrAll(limit))
	if err != nil {
		return nil, wrap("forgotten left", err)
	}
	out, err := pgx.AppendRows([]string(nil), rows, pgx.RowTo[string])
	return out, wrap("forgotten left", err)
}

// CatchUpKeywordIndexes brings the loaded keyword indexes up to their
// tables.
func (db *DB) CatchUpKeywordIndexes(ctx context.Context) error {
	for _, c := range db.indexes() {
		if err := c.CatchUp(ctx); err != nil {
			return wrap("catch up the keyword indexes", err)
		}
	}
	return nil
}

// RedactTurns stores the redacted versions of turns (same id and seq; new
// content, speaker and meta, see engram.Turn.RedactSpans) in one
// transaction, as package palace's RedactTurns does for the tables this
// palace holds so far: the turn's row, with a new change number (every
// server's keyword index reads it again at its next search), its row of
// palace_turn_text when it has one, the units holding it (counted again,
// with a new change number: fixUnits), the scenes holding it (title,
// summary, participants and draft lose every span of spans, replaced by
// marker: redactScenes) and the persona facets it is evidence for
// (redactDerived). A turn not stored (skipped, or not yet: the indexer
// stores the new version) is left out.
func (db *DB) RedactTurns(ctx context.Context, turns []engram.Turn, spans []string, marker string) (engram.RedactResult, error) {
	var res engram.RedactResult
	err := db.update(ctx, "redact turns", func(tx pgx.Tx) error {
		res = engram.RedactResult{TurnVectors: map[string][]string{}, Watermarks: map[string]int64{}}
		var redacted []int64
		redactedIDs, namespaces := map[string]bool{}, map[string]bool{}
		txt := redacttext.New(spans, marker)
		if err := lockWrites(ctx, tx, graphLockKey, personaLockKey, memoryLockKey, vectorLockKey); err != nil {
			return err
		}
		w := &memories{ctx: ctx, tx: tx}
		if err := w.begin(); err != nil {
			return err
		}
		for _, t := range turns {
			var meta *string
			if len(t.Meta) > 0 {
				m := string(t.Meta)
				meta = &m
			}
			var ns string
			err := tx.QueryRow(ctx, `UPDATE palace_turns SET content = $3, speaker = $4, meta = $5, change = nextval('palace_turns_change')
				WHERE seq = $1 AND id = $2 RETURNING namespace`, t.Seq, t.ID, []byte(t.Content), t.Speaker, meta).Scan(&ns)
			if errors.Is(err, pgx.ErrNoRows) {
				continue
			}
			if err != nil {
				return err
			}
			res.Turns++
			res.Removed = append(res.Removed, t.ID)
			redacted = append(redacted, t.Seq)
			redactedIDs[t.ID] = true
			namespaces[ns] = true
			if _, err := tx.Exec(ctx, `UPDATE palace_turn_text SET folded = $2, grams = $3 WHERE seq = $1`,
				t.Seq, folded(t.Content), grams(t.Content, t.Speaker)); err != nil {
				return err
			}
			n, err := w.redact(t.ID, txt)
			if err != nil {
				return err
			}
			res.Memories += n
			if n, err = redactScenes(ctx, tx, t.ID, txt); err != nil {
				return err
			}
			res.Scenes += n
		}
		if err := redactDerived(ctx, tx, redactedIDs, txt, &res); err != nil {
			return err
		}
		units, err := unitsOf(ctx, tx, redacted)
		if err != nil {
			return err
		}
		if err := fixUnits(ctx, tx, units, &res.Units, &res.Removed); err != nil {
			return err
		}
		if err := w.redactCorrections(txt); err != nil {
			return err
		}
		if err := (graph{ctx, tx}).redactEntities(slices.Sorted(maps.Keys(namespaces)), spans, txt, &res.Entities, &res.Removed); err != nil {
			return err
		}
		return redactVectors(ctx, tx, redacted, &res, db.now().UnixNano())
	})
	if err != nil {
		return engram.RedactResult{}, err
	}
	_ = db.vectors.Follow(ctx) // as after a forget
	return res, nil
}

// redactVectors deletes the vectors of every model of what a redaction
// removed (res.Removed), as package palace's does: the models that held
// a redacted turn's vector (of seqs) are named in res.TurnVectors, and
// their watermarks move back before the first such turn (the one each had
// in res.Watermarks), so that the turns are embedded again from their
// redacted text.
func redactVectors(ctx context.Context, tx pgx.Tx, seqs []int64, res *engram.RedactResult, now int64) error {
	rows, err := tx.Query(ctx, `SELECT v.model, t.id, t.seq FROM palace_vectors v JOIN palace_turns t ON t.id = v.id
		WHERE t.seq = ANY($1) ORDER BY v.model, t.seq`, seqs)
	if err != nil {
		return err
	}
	first := map[string]int64{}
	var (
		model, id string
		seq       int64
	)
	if _, err := pgx.ForEachRow(rows, []any{&model, &id, &seq}, func() error {
		res.TurnVectors[model] = append(res.TurnVectors[model], id)
		if f, ok := first[model]; !ok || seq < f {
			first[model] = seq
		}
		return nil
	}); err != nil {
		return err
	}
	for model, seq := range first {
		var wm int64
		if err := tx.QueryRow(ctx, `SELECT embedded_seq FROM palace_vector_models WHERE model = $1`, model).Scan(&wm); err != nil {
			return err
		}
		res.Watermarks[model] = wm
		if _, err := tx.Exec(ctx, `UPDATE palace_vector_models SET embedded_seq = least(embedded_seq, $1) WHERE model = $2`, seq-1, model); err != nil {
			return err
		}
	}
	_, err = pgvectors.Delete(ctx, tx, "", res.Removed, now)
	return err
}

var _ engram.TurnRewriter = (*DB)(nil)

// redactDerived redacts the persona facets and the graph statements of
// the redacted turns (ids), as package palace's: a facet a span names
// loses their evidence, the others are redacted in place; the statements
// lose them as sources.
func redactDerived(ctx context.Context, tx pgx.Tx, ids map[string]bool, txt *redacttext.Text, res *engram.RedactResult) error {
	if len(ids) == 0 {
		return nil
	}
	n, err := keepFacets(ctx, tx, ids, redactedFacet(txt))
	if err != nil {
		return err
	}
	res.Facets = n
	for id := range ids {
		n, err := redactFacets(ctx, tx, id, txt)
		if err != nil {
			return err
		}
		res.Facets += n
	}
	// The graph statements of the turns go; the graph job makes them
	// again from the redacted memories.
	var facts int
	return (graph{ctx, tx}).forgetStatements(slices.Collect(maps.Keys(ids)), &facts, &res.Removed)
}
