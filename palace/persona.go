package palace

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/sqlrow"
)

// maxFacetHistory bounds the past values kept per facet.
const maxFacetHistory = 50

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
	for i, u := range updates {
		field := "facets[" + strconv.Itoa(i) + "]."
		switch {
		case u.Namespace == "" || u.Speaker == "":
			return engram.FieldError(field+"speaker", "namespace and speaker are required")
		case u.Facet == "" || u.Key == "":
			return engram.FieldError(field+"key", "facet and key are required")
		case u.Value == "":
			return engram.FieldError(field+"value", "value is required")
		case u.At.IsZero():
			return engram.FieldError(field+"at", "time is required")
		}
		if _, err := nanos(u.At); err != nil {
			return engram.FieldError(field+"at", "%v", err)
		}
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

// observation is a value held from At, in the facet's timeline.
type observation struct {
	Value    string    `json:"value"`
	From     time.Time `json:"from"`
	Evidence []string  `json:"evidence"`
}

// facet is a row of persona_facets with its history and current value as
// one timeline, oldest first.
type facet struct {
	ns, speaker, facet, key string
	line                    []observation
}

// facetColumns are the columns scanFacet reads.
const facetColumns = `namespace, speaker, facet, key, value, since, evidence, history`

// scanFacet reads a row of facetColumns into x through scan (a row's or
// rows' Scan).
func scanFacet(scan func(dest ...any) error, x *facet) error {
	var cur observation
	var past []engram.FacetChange
	if err := scan(&x.ns, &x.speaker, &x.facet, &x.key, &cur.Value, sqlrow.Time(&cur.From), sqlrow.JSON(&cur.Evidence), sqlrow.JSON(&past)); err != nil {
		return err
	}
	x.line = x.line[:0]
	for _, p := range past {
		x.line = append(x.line, observation{p.Value, p.From, p.Evidence})
	}
	x.line = append(x.line, cur)
	return nil
}

// putFacet writes x, whose timeline is not empty: its last value is the
// facet's, held since it began, and the values before it its history (the
// latest maxFacetHistory), each held until the next began.
func putFacet(ctx context.Context, tx *sql.Tx, x facet) error {
	cur := x.line[len(x.line)-1]
	past := make([]engram.FacetChange, 0, len(x.line)-1)
	for i, o := range x.line[:len(x.line)-1] {
		past = append(past, engram.FacetChange{Value: o.Value, From: o.From, To: x.line[i+1].From, Evidence: o.Evidence})
	}
	if len(past) > maxFacetHistory {
		past = past[len(past)-maxFacetHistory:]
	}
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
	x.line = fold(x.line, observation{u.Value, u.At.UTC(), u.Evidence})
	return putFacet(ctx, tx, x)
}

// fold adds o to a timeline sorted by From: an observation of the value in
// force at its time only adds evidence (and moves the start earlier when it
// is the earlier statement); any other starts a new entry.
func fold(line []observation, o observation) []observation {
	i, _ := slices.BinarySearchFunc(line, o.From, func(x observation, t time.Time) int { return x.From.Compare(t) })
	// line[i-1] is in force at o.From (the last entry starting at or before it).
	for i < len(line) && line[i].From.Equal(o.From) {
		i++
	}
	if i > 0 && line[i-1].Value == o.Value {
		line[i-1].Evidence = union(line[i-1].Evidence, o.Evidence)
		return line
	}
	if i < len(line) && line[i].Value == o.Value {
		line[i].From = o.From
		line[i].Evidence = union(line[i].Evidence, o.Evidence)
		return line
	}
	return slices.Insert(line, i, observation{o.Value, o.From, slices.Clone(o.Evidence)})
}

func union(a, b []string) []string {
	out := append(slices.Clone(a), b...)
	slices.Sort(out)
	return capSources(slices.Compact(out))
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
			if len(out) == 0 || out[len(out)-1].Speaker != who {
				out = append(out, engram.Persona{Namespace: namespace, Speaker: who})
			}
			p := &out[len(out)-1]
			p.Facets = append(p.Facets, f)
			if updated.After(p.Updated) {
				p.Updated = updated
			}
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
