package pgpalace

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/facetline"
	"github.com/engram-dev/engram/internal/redacttext"
	"github.com/engram-dev/engram/internal/sqlrow"
)

// The L3 personas, as package palace keeps them (palace/persona.go): a row
// a facet of a speaker, its timeline folded by internal/facetline.

// facetRow is a row of palace_persona_facets with its timeline.
type facetRow struct {
	ns, speaker, facet, key string
	line                    []facetline.Observation
}

// facetColumns are the columns scanFacet reads.
const facetColumns = `namespace, speaker, facet, key, value, since, evidence, history`

// scanFacet reads a row of facetColumns.
func scanFacet(r pgx.CollectableRow) (facetRow, error) {
	var (
		x       facetRow
		cur     facetline.Observation
		value   []byte
		history string
		past    []engram.FacetChange
	)
	if err := r.Scan(&x.ns, &x.speaker, &x.facet, &x.key, &value, sqlrow.Time(&cur.From), &cur.Evidence, &history); err != nil {
		return x, err
	}
	if err := json.Unmarshal([]byte(history), &past); err != nil {
		return x, err
	}
	cur.Value = string(value)
	x.line = facetline.Line(cur, past)
	return x, nil
}

// putFacet writes x, whose timeline is not empty.
func putFacet(ctx context.Context, tx pgx.Tx, x facetRow) error {
	cur, past := facetline.Split(x.line)
	history, err := json.Marshal(past)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO palace_persona_facets (namespace, speaker, facet, key, value, since, evidence, history, updated)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $6)
		ON CONFLICT (namespace, speaker, facet, key) DO UPDATE SET value = excluded.value, since = excluded.since,
			evidence = excluded.evidence, history = excluded.history, updated = excluded.updated`,
		x.ns, x.speaker, x.facet, x.key, []byte(cur.Value), cur.From.UnixNano(), nonNil(cur.Evidence), string(history))
	return err
}

// ApplyFacets folds observations into the speakers' personas and advances
// the worker's watermark to throughSeq, in one transaction, as package
// palace's does (internal/facetline: the result depends neither on the
// order of the observations nor on one applied twice).
//
// Errors: EINVALID naming the field for an update without namespace,
// speaker, facet, key, value or time.
func (db *DB) ApplyFacets(ctx context.Context, worker string, updates []engram.FacetUpdate, throughSeq int64) error {
	if err := facetline.Check(updates, func(at time.Time) error { _, err := nanos(at); return err }); err != nil {
		return err
	}
	return db.update(ctx, "apply facets", func(tx pgx.Tx) error {
		// One fold at a time: a fold reads the facet's row and writes it.
		if err := lock(ctx, tx, personaLockKey); err != nil {
			return err
		}
		for _, u := range updates {
			rows, err := tx.Query(ctx, `SELECT `+facetColumns+` FROM palace_persona_facets
				WHERE namespace = $1 AND speaker = $2 AND facet = $3 AND key = $4`, u.Namespace, u.Speaker, u.Facet, u.Key)
			if err != nil {
				return err
			}
			x, err := pgx.CollectExactlyOneRow(rows, scanFacet)
			switch {
			case errors.Is(err, pgx.ErrNoRows):
				x = facetRow{ns: u.Namespace, speaker: u.Speaker, facet: u.Facet, key: u.Key}
			case err != nil:
				return err
			}
			x.line = facetline.Fold(x.line, facetline.Observation{Value: u.Value, From: u.At.UTC(), Evidence: u.Evidence})
			if err := putFacet(ctx, tx, x); err != nil {
				return errors.Join(errors.New("facet "+u.Facet+"/"+u.Key+" of "+u.Speaker), err)
			}
		}
		return setMeta(ctx, tx, workerKey(worker), throughSeq)
	})
}

// asciiLower is SQL lowering the ASCII letters of its argument only, as
// SQLite's lower() does, so that a speaker matches as in package palace.
func asciiLower(expr string) string {
	return `translate(` + expr + `, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')`
}

// Persona returns the profiles of namespace: of speaker (its ASCII
// letters in any case), or of every speaker when speaker is "". Facets are
// ordered by facet and key, speakers by name, bytewise.
func (db *DB) Persona(ctx context.Context, namespace, speaker string) ([]engram.Persona, error) {
	if namespace == "" {
		namespace = engram.DefaultNamespace
	}
	rows, err := db.pool.Query(ctx, `SELECT speaker, facet, key, value, since, evidence, history, updated FROM palace_persona_facets
		WHERE namespace = $1 AND ($2 = '' OR `+asciiLower("speaker")+` = `+asciiLower("$2")+`)
		ORDER BY speaker COLLATE "C", facet COLLATE "C", key COLLATE "C"`, namespace, speaker)
	if err != nil {
		return nil, wrap("persona", err)
	}
	var (
		out          []engram.Persona
		f            engram.PersonaFacet
		who, history string
		value        []byte
		updated      time.Time
	)
	_, err = pgx.ForEachRow(rows, []any{&who, &f.Facet, &f.Key, &value, sqlrow.Time(&f.Since), &f.Evidence, &history, sqlrow.Time(&updated)}, func() error {
		f.Value, f.History = string(value), nil
		if err := json.Unmarshal([]byte(history), &f.History); err != nil {
			return err
		}
		out = facetline.Gather(out, namespace, who, f, updated)
		return nil
	})
	if err != nil {
		return nil, wrap("persona", err)
	}
	return out, nil
}

// ResetPersonas deletes every persona facet and the watermark of worker,
// the persona job, which then folds every memory again from the first.
func (db *DB) ResetPersonas(ctx context.Context, worker string) error {
	return db.update(ctx, "reset personas", func(tx pgx.Tx) error {
		if err := lock(ctx, tx, personaLockKey); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM palace_persona_facets`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM palace_meta WHERE key = $1`, workerKey(worker))
		return err
	})
}

// keepFacets takes the turns of gone out of each facet's evidence, current
// value and history alike (facetline.Keep), as package palace's forget
// does: a value left without evidence goes, a facet left with none is
// deleted. only, when set, picks the facets to change. It returns how many
// changed.
func keepFacets(ctx context.Context, tx pgx.Tx, gone map[string]bool, only func(speaker, key string) bool) (int, error) {
	rows, err := tx.Query(ctx, `SELECT `+facetColumns+` FROM palace_persona_facets`)
	if err != nil {
		return 0, err
	}
	all, err := pgx.CollectRows(rows, scanFacet)
	if err != nil {
		return 0, err
	}
	kept := func(ids []string) []string {
		return slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return gone[id] })
	}
	changed := 0
	for _, x := range all {
		if only != nil && !only(x.speaker, x.key) {
			continue
		}
		line, ok := facetline.Keep(x.line, kept)
		if !ok {
			continue
		}
		changed++
		if len(line) == 0 {
			_, err = tx.Exec(ctx, `DELETE FROM palace_persona_facets WHERE namespace = $1 AND speaker = $2 AND facet = $3 AND key = $4`,
				x.ns, x.speaker, x.facet, x.key)
		} else {
			x.line = line
			err = putFacet(ctx, tx, x)
		}
		if err != nil {
			return 0, err
		}
	}
	return changed, nil
}

// redactFacets redacts the value and history of the persona facets the
// turn turnID is evidence for; it returns how many changed.
func redactFacets(ctx context.Context, tx pgx.Tx, turnID string, txt *redacttext.Text) (int, error) {
	rows, err := tx.Query(ctx, `SELECT namespace, speaker, facet, key, value, history FROM palace_persona_facets
		WHERE evidence @> ARRAY[$1::text] OR strpos(history, $1) > 0`, turnID)
	if err != nil {
		return 0, err
	}
	type facet struct {
		ns, speaker, facet, key string
		value                   []byte
		history                 string
	}
	found, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (facet, error) {
		var f facet
		return f, r.Scan(&f.ns, &f.speaker, &f.facet, &f.key, &f.value, &f.history)
	})
	if err != nil {
		return 0, err
	}
	changed := 0
	for _, f := range found {
		v, h := txt.Red(string(f.value)), txt.JSON(f.history)
		if v == string(f.value) && h == f.history {
			continue
		}
		if _, err := tx.Exec(ctx, `UPDATE palace_persona_facets SET value = $5, history = $6
			WHERE namespace = $1 AND speaker = $2 AND facet = $3 AND key = $4`, f.ns, f.speaker, f.facet, f.key, []byte(v), h); err != nil {
			return 0, err
		}
		changed++
	}
	return changed, nil
}

// redactedFacet says which facets a redaction of spans takes the turns'
// evidence from (the persona job files them again under the redacted
// name), as package palace's: those whose speaker or key holds a span.
func redactedFacet(txt *redacttext.Text) func(speaker, key string) bool {
	return func(speaker, key string) bool { return txt.Holds(speaker) || txt.HoldsFolded(key) }
}
