package palace

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/facetline"
	"github.com/engram-dev/engram/internal/sqlrow"
)

// ApplyFacets folds observations into the speakers' personas and advances
// the worker's watermark to throughSeq, in one transaction. The latest value
// (by At) is a facet's value; the values it replaced move to its history
// with the time they held; updated is the start of the current value. An observation of the current value adds its
// evidence; an observation older than the current value goes into the
// history at its place. The result does not depend on the order of the
// observations, nor on one being applied twice.
//
// Errors: EINVALID naming the field for an update without namespace,
// speaker, facet, key, value or time.
func (db *DB) ApplyFacets(ctx context.Context, worker string, updates []engram.FacetUpdate, throughSeq int64) error {
	if err := facetline.Check(updates, func(at time.Time) error { _, err := nanos(at); return err }); err != nil {
		return err
	}
	err := db.Update(ctx, func(tx *sql.Tx) error {
		for _, u := range updates {
			if err := applyFacet(ctx, tx, u); err != nil {
				return fmt.Errorf("facet %s/%s of %s: %w", u.Facet, u.Key, u.Speaker, err)
			}
		}
		return setWorkerSeq(ctx, tx, worker, throughSeq)
	})
	if err != nil {
		return fmt.Errorf("palace: apply facets: %w", err)
	}
	return nil
}

// facet is a row of persona_facets with its history and current value as
// one timeline, oldest first.
type facet struct {
	ns, speaker, facet, key string
	line                    []facetline.Observation
}

// facetColumns are the columns scanFacet reads.
const facetColumns = `namespace, speaker, facet, key, value, since, evidence, history`

// scanFacet reads a row of facetColumns into x through scan (a row's or
// rows' Scan).
func scanFacet(scan func(dest ...any) error, x *facet) error {
	var cur facetline.Observation
	var past []engram.FacetChange
	if err := scan(&x.ns, &x.speaker, &x.facet, &x.key, &cur.Value, sqlrow.Time(&cur.From), sqlrow.JSON(&cur.Evidence), sqlrow.JSON(&past)); err != nil {
		return err
	}
	x.line = facetline.Line(cur, past)
	return nil
}

// putFacet writes x, whose timeline is not empty (facetline.Split).
func putFacet(ctx context.Context, tx *sql.Tx, x facet) error {
	cur, past := facetline.Split(x.line)
	_, err := tx.ExecContext(ctx, `INSERT INTO persona_facets (namespace, speaker, facet, key, value, since, evidence, history, updated)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (namespace, speaker, facet, key) DO UPDATE SET value = excluded.value, since = excluded.since,
			evidence = excluded.evidence, history = excluded.history, updated = excluded.updated`,
		x.ns, x.speaker, x.facet, x.key, cur.Value, cur.From.UnixNano(), sqlrow.JSONList(nonNil(cur.Evidence)), sqlrow.JSONList(past), cur.From.UnixNano())
	return err
}

func applyFacet(ctx context.Context, tx *sql.Tx, u engram.FacetUpdate) error {
	x := facet{ns: u.Namespace, speaker: u.Speaker, facet: u.Facet, key: u.Key}
	err := scanFacet(tx.QueryRowContext(ctx, `SELECT `+facetColumns+` FROM persona_facets
		WHERE namespace = ? AND speaker = ? AND facet = ? AND key = ?`, u.Namespace, u.Speaker, u.Facet, u.Key).Scan, &x)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	x.line = facetline.Fold(x.line, facetline.Observation{Value: u.Value, From: u.At.UTC(), Evidence: u.Evidence})
	return putFacet(ctx, tx, x)
}

// Persona returns the profiles of namespace: of speaker, or of every
// speaker when speaker is "". Facets are ordered by facet and key.
func (db *DB) Persona(ctx context.Context, namespace, speaker string) ([]engram.Persona, error) {
	if namespace == "" {
		namespace = engram.DefaultNamespace
	}
	var out []engram.Persona
	err := db.View(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT speaker, facet, key, value, since, evidence, history, updated FROM persona_facets
			WHERE namespace = ?1 AND (?2 = '' OR lower(speaker) = lower(?2)) ORDER BY speaker, facet, key`, namespace, speaker)
		if err != nil {
			return err
		}
		return sqlrow.Each(rows, func() error {
			var f engram.PersonaFacet
			var who string
			var updated time.Time
			if err := rows.Scan(&who, &f.Facet, &f.Key, &f.Value, sqlrow.Time(&f.Since), sqlrow.JSON(&f.Evidence), sqlrow.JSON(&f.History), sqlrow.Time(&updated)); err != nil {
				return err
			}
			out = facetline.Gather(out, namespace, who, f, updated)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("palace: persona: %w", err)
	}
	return out, nil
}

// ResetPersonas deletes every persona facet and the watermark of worker,
// the persona worker, which then folds every memory again from the first:
// how a memory marked wrong (or restored) leaves (or rejoins) the personas
// it was folded into, their history included, as a rebuild would make
// them. Folding is cheap (memories only, no extraction).
func (db *DB) ResetPersonas(ctx context.Context, worker string) error {
	err := db.Update(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM persona_facets`); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM palace_meta WHERE key = ?`, workerKey(worker))
		return err
	})
	if err != nil {
		return fmt.Errorf("palace: reset personas: %w", err)
	}
	return nil
}
