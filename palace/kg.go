package palace

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/facetline"
	"github.com/engram-dev/engram/internal/kgchain"
	"github.com/engram-dev/engram/internal/kwindex"
	"github.com/engram-dev/engram/internal/sqlrow"
)

// ApplyTriples adds triples to the knowledge graph and advances the
// worker's watermark to throughSeq, in one transaction.
//
// Subject and object are resolved to entities by normalised name (case,
// white space, a leading article) and by alias; (X, name, Y) also makes Y
// an alias of X. Each triple is kept as a statement in a chain of
// statements whose values replace each other:
//
//   - a single-valued predicate (engram.SingleValued): the subject and
//     predicate, whose value is the object ("Alice lives_in Berlin", later
//     "Alice lives_in Lisbon");
//   - "likes" and "dislikes": the subject and object, whose value is the
//     predicate;
//   - any other predicate: the triple itself (it holds from its first
//     statement on).
//
// The chain's triples are then rebuilt from its statements in time order:
// consecutive statements of one value make one triple with all their
// sources, valid until the next value's first statement. So the graph
// depends only on the set of statements, not on their order or on one
// being applied twice.
//
// Triple IDs are set here (ID, ValidTo and Confidence of the input are
// ignored). Errors: EINVALID naming the field for a triple without
// namespace, subject, predicate, object or valid_from.
func (db *DB) ApplyTriples(ctx context.Context, worker string, triples []engram.Triple, throughSeq int64) error {
	if err := kgchain.Check(triples, func(at time.Time) error { _, err := nanos(at); return err }); err != nil {
		return err
	}
	// The statements recorded in a transaction commit with their chains
	// rebuilt (updateYielding): a batch holds the writer for long, and a
	// POST arriving meanwhile waited for all of it. A crash between two
	// transactions leaves the watermark before the batch, which is
	// applied again: a statement recorded before is found and changes
	// nothing.
	err := db.updateYielding(ctx, len(triples), func(tx *sql.Tx, from int, yield func(i int) bool) (int, error) {
		// Record the statements, then rebuild each chain they touched
		// once, from the first statement they changed on.
		var dirty kgchain.Dirty[chainKey]
		stop := from
		for ; stop < len(triples) && !yield(stop); stop++ {
			t := triples[stop]
			k, key, changed, err := applyTriple(ctx, tx, t)
			if err != nil {
				return 0, fmt.Errorf("triple (%s, %s, %s): %w", t.Subject, t.Predicate, t.Object, err)
			}
			if changed {
				dirty.Mark(k, key)
			}
		}
		err := dirty.Each(func(k chainKey, from kgchain.Key) error {
			if err := rebuildChainFrom(ctx, tx, k.ns, k.chain, k.single, &from); err != nil {
				return fmt.Errorf("chain %s: %w", k.chain, err)
			}
			return nil
		})
		if err != nil {
			return 0, err
		}
		if stop < len(triples) {
			return stop, nil
		}
		return stop, setWorkerSeq(ctx, tx, worker, throughSeq)
	})
	if err != nil {
		return fmt.Errorf("palace: apply triples: %w", err)
	}
	return nil
}

// chainKey names a chain of statements.
type chainKey struct {
	ns, chain string
	single    bool
}

// applyTriple records t as a statement of its chain and reports whether
// the chain changed (and needs rebuilding from the statement's key on).
func applyTriple(ctx context.Context, tx *sql.Tx, t engram.Triple) (k chainKey, key kgchain.Key, changed bool, err error) {
	subj, err := resolveEntity(ctx, tx, t.Namespace, t.Subject, true)
	if err != nil {
		return k, key, false, err
	}
	var obj int64
	if engram.AliasPredicate(t.Predicate) {
		// The object is a name, kept as an entity of its own (so that the
		// triple reads "Alice name Ally" whichever came first) and made an
		// alias of the subject.
		if obj, err = nameEntity(ctx, tx, t.Namespace, t.Object); err != nil {
			return k, key, false, err
		}
		if err := addAlias(ctx, tx, t.Namespace, t.Object, subj); err != nil {
			return k, key, false, err
		}
	} else if obj, err = resolveEntity(ctx, tx, t.Namespace, t.Object, true); err != nil {
		return k, key, false, err
	}
	chain := kgchain.Chain(subj, t.Predicate, obj)
	at := t.ValidFrom.UnixNano()

	// Record the statement (merging the sources of a repeat).
	var srcs []string
	known, err := sqlrow.One(tx.QueryRowContext(ctx, `SELECT sources FROM kg_statements
		WHERE namespace = ? AND chain = ? AND at = ? AND predicate = ? AND object = ?`,
		t.Namespace, chain, at, t.Predicate, obj), sqlrow.JSON(&srcs))
	if err != nil {
		return k, key, false, err
	}
	merged := facetline.Union(srcs, t.Sources)
	if known && len(merged) == len(srcs) {
		return k, key, false, nil // nothing new
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO kg_statements (namespace, chain, at, subject, predicate, object, sources, memory)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (namespace, chain, at, predicate, object) DO UPDATE SET sources = excluded.sources`,
		t.Namespace, chain, at, subj, t.Predicate, obj, sqlrow.JSONList(nonNil(merged)), t.Memory); err != nil {
		return k, key, false, err
	}
	return chainKey{t.Namespace, chain, engram.SingleValued(t.Predicate)}, kgchain.Key{At: at, Predicate: t.Predicate, Object: obj}, true, nil
}

// rebuildChain replaces the triples of a chain with those its statements
// make.
func rebuildChain(ctx context.Context, tx *sql.Tx, ns, chain string, single bool) error {
	return rebuildChainFrom(ctx, tx, ns, chain, single, nil)
}

// rebuildChainFrom is rebuildChain when the statements before changed
// (a key) are as the chain's triples were built from: it rebuilds from
// the group holding the last statement before changed on. The groups
// before it are the same, and so are their triples, whose valid_to is
// the first statement of the next group. Where the namespace has
// corrections, which may drop or change any statement, it rebuilds all.
func rebuildChainFrom(ctx context.Context, tx *sql.Tx, ns, chain string, single bool, changed *kgchain.Key) error {
	corrected, err := hasCorrections(ctx, tx, ns)
	if err != nil {
		return err
	}
	cond, args := `namespace = ? AND chain = ?`, []any{ns, chain}
	tcond := cond
	if changed != nil && !corrected {
		from, ok, err := chainGroupBefore(ctx, tx, ns, chain, *changed)
		if err != nil {
			return err
		}
		if ok {
			cond += ` AND (at, predicate, object) >= (?, ?, ?)`
			tcond += ` AND (valid_from, predicate, object) >= (?, ?, ?)`
			args = append(args, from.At, from.Predicate, from.Object)
		}
	}
	sts, err := sqlrow.Query(ctx, tx, `SELECT at, subject, predicate, object, sources, memory FROM kg_statements
		WHERE `+cond+` ORDER BY at, predicate, object`, args, func(r *sql.Rows, s *kgchain.Statement) error {
		return r.Scan(&s.At, &s.Subject, &s.Predicate, &s.Object, sqlrow.JSON(&s.Sources), &s.Memory)
	})
	if err != nil {
		return err
	}
	if corrected {
		if sts, err = correctStatements(ctx, tx, ns, sts); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM kg_fts WHERE rowid IN (SELECT n FROM kg_triples WHERE `+tcond+`)`, args...); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM kg_triples WHERE `+tcond, args...); err != nil {
		return err
	}
	seq, err := nextSeq(ctx, tx, "kg_triples")
	if err != nil {
		return err
	}
	for _, tr := range kgchain.Triples(sts, single) {
		first := tr.First
		seq++
		var n int64
		var corrected any
		if first.Corrected != "" {
			corrected = first.Corrected
		}
		if err := tx.QueryRowContext(ctx, `INSERT INTO kg_triples
			(id, namespace, chain, subject, predicate, object, valid_from, valid_to, confidence, sources, memory, seq, corrected)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING n`,
			kgchain.TripleID(ns, first), ns, chain, first.Subject, first.Predicate,
			first.Object, first.At, tr.ValidTo, kgchain.Confidence(len(tr.Sources)), sqlrow.JSONList(nonNil(tr.Sources)), first.Memory, seq, corrected).Scan(&n); err != nil {
			return err
		}
		var subj, obj string
		if err := tx.QueryRowContext(ctx, `SELECT (SELECT name FROM kg_entities WHERE n = ?), (SELECT name FROM kg_entities WHERE n = ?)`,
			first.Subject, first.Object).Scan(&subj, &obj); err != nil {
			return err
		}
		text, err := kwindex.IndexText(engram.Triple{Subject: subj, Predicate: first.Predicate, Object: obj}.Sentence())
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO kg_fts (rowid, text) VALUES (?, ?)`, n, text); err != nil {
			return err
		}
	}
	return nil
}

// chainGroupBefore returns the first statement's key of the chain's last
// triple that begins before key: the group the last statement before key
// is in; ok is false where there is none. Only for a namespace without
// corrections: with them, triples need not hold their first statements'
// keys.
func chainGroupBefore(ctx context.Context, tx *sql.Tx, ns, chain string, key kgchain.Key) (from kgchain.Key, ok bool, err error) {
	ok, err = sqlrow.One(tx.QueryRowContext(ctx, `SELECT valid_from, predicate, object FROM kg_triples
		WHERE namespace = ? AND chain = ? AND (valid_from, predicate, object) < (?, ?, ?)
		ORDER BY valid_from DESC, predicate DESC, object DESC LIMIT 1`,
		ns, chain, key.At, key.Predicate, key.Object), &from.At, &from.Predicate, &from.Object)
	return from, ok, err
}

// chainTripleIDs returns the ids of the triples of chain k.
func chainTripleIDs(ctx context.Context, tx *sql.Tx, k chainKey) ([]string, error) {
	return sqlrow.Strings(ctx, tx, `SELECT id FROM kg_triples WHERE namespace = ? AND chain = ?`, k.ns, k.chain)
}

// rebuildChainsWhere rebuilds every chain holding a statement that cond (a
// condition on kg_statements, with args) selects, and returns the ids its
// triples had before.
func rebuildChainsWhere(ctx context.Context, tx *sql.Tx, cond string, args ...any) ([]string, error) {
	chains, err := sqlrow.Query(ctx, tx, `SELECT DISTINCT namespace, chain, predicate FROM kg_statements WHERE `+cond, args,
		func(r *sql.Rows, k *chainKey) error {
			var pred string
			err := r.Scan(&k.ns, &k.chain, &pred)
			k.single = engram.SingleValued(pred)
			return err
		})
	if err != nil {
		return nil, err
	}
	var before []string
	for _, k := range chains {
		ids, err := chainTripleIDs(ctx, tx, k)
		if err != nil {
			return nil, err
		}
		before = append(before, ids...)
		if err := rebuildChain(ctx, tx, k.ns, k.chain, k.single); err != nil {
			return nil, err
		}
	}
	return before, nil
}

// resolveEntity returns the entity named name (by alias or normalised
// name), creating it when create is set; 0 when not found. A known entity
// met under a better spelling (kgchain.BetterName) takes it as its name.
func resolveEntity(ctx context.Context, tx *sql.Tx, ns, name string, create bool) (int64, error) {
	norm, display := kgchain.NormName(name), kgchain.DisplayName(name)
	var n int64
	var known string
	found, err := sqlrow.One(tx.QueryRowContext(ctx, `SELECT e.n, e.name FROM kg_aliases a JOIN kg_entities e ON e.n = a.entity
		WHERE a.namespace = ? AND a.norm = ?`, ns, norm), &n, &known)
	switch {
	case err != nil:
		return 0, err
	case found && create && kgchain.NormName(known) == norm:
		return n, rename(ctx, tx, n, known, display)
	case found:
		return n, nil
	case !create:
		return 0, nil
	}
	if n, err = nameEntity(ctx, tx, ns, name); err != nil {
		return 0, err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO kg_aliases (namespace, norm, alias, entity) VALUES (?, ?, ?, ?)
		ON CONFLICT (namespace, norm) DO NOTHING`, ns, norm, display, n)
	return n, err
}

// nameEntity returns the entity whose normalised name is name's, creating
// it (without alias) if there is none.
func nameEntity(ctx context.Context, tx *sql.Tx, ns, name string) (int64, error) {
	norm, display := kgchain.NormName(name), kgchain.DisplayName(name)
	var n int64
	var known string
	found, err := sqlrow.One(tx.QueryRowContext(ctx, `SELECT n, name FROM kg_entities WHERE namespace = ? AND norm = ?`, ns, norm), &n, &known)
	switch {
	case err != nil:
		return 0, err
	case !found:
		err = tx.QueryRowContext(ctx, `INSERT INTO kg_entities (namespace, name, norm) VALUES (?, ?, ?) RETURNING n`, ns, display, norm).Scan(&n)
		return n, err
	}
	return n, rename(ctx, tx, n, known, display)
}

// rename names entity n, now named known, display when that spelling is
// the better (kgchain.BetterName).
func rename(ctx context.Context, tx *sql.Tx, n int64, known, display string) error {
	if !kgchain.BetterName(display, known) {
		return nil
	}
	_, err := tx.ExecContext(ctx, `UPDATE kg_entities SET name = ? WHERE n = ?`, display, n)
	return err
}

// addAlias makes name another name of entity, unless the name is taken by
// another entity that has triples of its own (then the two stay apart).
func addAlias(ctx context.Context, tx *sql.Tx, ns, name string, entity int64) error {
	norm := kgchain.NormName(name)
	var owner int64
	found, err := sqlrow.One(tx.QueryRowContext(ctx, `SELECT entity FROM kg_aliases WHERE namespace = ? AND norm = ?`, ns, norm), &owner)
	switch {
	case err != nil || found && owner == entity:
		return err
	case !found:
		_, err = tx.ExecContext(ctx, `INSERT INTO kg_aliases (namespace, norm, alias, entity) VALUES (?, ?, ?, ?)`, ns, norm, name, entity)
		return err
	}
	var used int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM kg_triples WHERE subject = ?1 OR (object = ?1 AND predicate NOT IN ('name', 'alias', 'also_known_as'))`, owner).Scan(&used); err != nil {
		return err
	}
	if used > 0 {
		return nil
	}
	_, err = tx.ExecContext(ctx, `UPDATE kg_aliases SET entity = ? WHERE namespace = ? AND norm = ?`, entity, ns, norm)
	return err
}

// Graph answers q: the triples q.Entity is the subject or object of, valid
// at q.AsOf (zero: now), or all of them in time order for a timeline.
// Errors: EINVALID without an entity; ENOTFOUND when the graph does not know
// it.
func (db *DB) Graph(ctx context.Context, q engram.GraphQuery) (engram.GraphResult, error) {
	if strings.TrimSpace(q.Entity) == "" {
		return engram.GraphResult{}, engram.FieldError("entity", "entity is required")
	}
	ns := q.Namespace
	if ns == "" {
		ns = engram.DefaultNamespace
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, MaxSearchLimit)
	var res engram.GraphResult
	err := db.View(ctx, func(tx *sql.Tx) error {
		n, err := resolveEntity(ctx, tx, ns, q.Entity, false)
		if err != nil {
			return err
		}
		if n == 0 {
			return engram.Errorf(engram.ENOTFOUND, "the knowledge graph of namespace %q has no entity %q", ns, q.Entity)
		}
		if res.Entity, err = loadEntity(ctx, tx, n); err != nil {
			return err
		}
		cond, args := ``, []any{n}
		if !q.Timeline {
			at := q.AsOf
			if at.IsZero() {
				at = db.now()
			}
			cond = ` AND ` + validAt
			args = append(args, at.UnixNano())
		}
		res.Triples, err = queryTriples(ctx, tx, `(t.subject = ?1 OR t.object = ?1)`+cond+` ORDER BY t.valid_from, t.n LIMIT `+strconv.Itoa(limit), args...)
		return err
	})
	if err != nil {
		var e *engram.Error
		if errors.As(err, &e) {
			return engram.GraphResult{}, err
		}
		return engram.GraphResult{}, fmt.Errorf("palace: graph: %w", err)
	}
	return res, nil
}

func loadEntity(ctx context.Context, tx *sql.Tx, n int64) (engram.Entity, error) {
	var e engram.Entity
	if err := tx.QueryRowContext(ctx, `SELECT namespace, name FROM kg_entities WHERE n = ?`, n).Scan(&e.Namespace, &e.Name); err != nil {
		return e, err
	}
	aliases, err := sqlrow.Strings(ctx, tx, `SELECT alias FROM kg_aliases WHERE entity = ? ORDER BY alias`, n)
	for _, a := range aliases {
		if a != e.Name {
			e.Aliases = append(e.Aliases, a)
		}
	}
	return e, err
}

// tripleColumns are the columns of a triple, from kg_triples t joined
// with its subject's and object's entities (tripleNames), as scanTriple
// reads them.
const (
	tripleColumns = `t.id, t.namespace, s.name, t.predicate, o.name, t.valid_from, t.valid_to, t.confidence, t.sources, t.memory, t.seq`
	tripleNames   = `JOIN kg_entities s ON s.n = t.subject JOIN kg_entities o ON o.n = t.object`
)

// validAt is the condition that triple t holds at ?2 (Unix nanoseconds).
const validAt = `t.valid_from <= ?2 AND (t.valid_to IS NULL OR t.valid_to > ?2)`

// scanTriple scans a row of tripleColumns, and extra after them.
func scanTriple(r *sql.Rows, t *engram.Triple, extra ...any) error {
	return r.Scan(append([]any{&t.ID, &t.Namespace, &t.Subject, &t.Predicate, &t.Object, sqlrow.Time(&t.ValidFrom), sqlrow.Time(&t.ValidTo),
		&t.Confidence, sqlrow.JSON(&t.Sources), &t.Memory, &t.Seq}, extra...)...)
}

// queryTriples returns the triples where selects, in its order.
func queryTriples(ctx context.Context, tx *sql.Tx, where string, args ...any) ([]engram.Triple, error) {
	return sqlrow.Query(ctx, tx, `SELECT `+tripleColumns+` FROM kg_triples t `+tripleNames+` WHERE `+where, args,
		func(r *sql.Rows, t *engram.Triple) error { return scanTriple(r, t) })
}

// EntityTriples returns, for each name that resolves to an entity of the
// namespace, the triples valid at asOf (zero: now) that the entity is part
// of: the graph evidence deep recall weighs. Names not in the graph are
// skipped; at most limit triples.
func (db *DB) EntityTriples(ctx context.Context, ns string, names []string, asOf time.Time, limit int) ([]engram.Triple, error) {
	if len(names) == 0 {
		return nil, nil
	}
	if asOf.IsZero() {
		asOf = db.now()
	}
	var out []engram.Triple
	err := db.View(ctx, func(tx *sql.Tx) error {
		seen := map[int64]bool{}
		for _, name := range names {
			n, err := resolveEntity(ctx, tx, ns, name, false)
			if err != nil {
				return err
			}
			if n == 0 || seen[n] {
				continue
			}
			seen[n] = true
			ts, err := queryTriples(ctx, tx, `(t.subject = ?1 OR t.object = ?1) AND `+validAt+` LIMIT ?3`,
				n, asOf.UnixNano(), limit-len(out))
			if err != nil {
				return err
			}
			out = append(out, ts...)
			if len(out) >= limit {
				break
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("palace: entity triples: %w", err)
	}
	return out, nil
}

// TriplesSince returns up to limit triples whose change number is above
// after, in change-number order (for the worker that embeds them).
func (db *DB) TriplesSince(ctx context.Context, after int64, limit int) ([]engram.Triple, error) {
	var out []engram.Triple
	err := db.View(ctx, func(tx *sql.Tx) (err error) {
		out, err = queryTriples(ctx, tx, `t.seq > ? ORDER BY t.seq LIMIT ?`, after, limit)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("palace: triples since %d: %w", after, err)
	}
	return out, nil
}

// GetTriples returns the triples with the given ids, in the order of ids;
// unknown ids (a triple a rebuilt chain replaced) are skipped.
func (db *DB) GetTriples(ctx context.Context, ids []string) ([]engram.Triple, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var got []engram.Triple
	err := db.View(ctx, func(tx *sql.Tx) (err error) {
		got, err = queryTriples(ctx, tx, `t.id IN (SELECT value FROM json_each(?))`, sqlrow.JSONList(ids))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("palace: get triples: %w", err)
	}
	return sqlrow.InOrder(ids, got, func(t engram.Triple) string { return t.ID }), nil
}

// SearchTriples ranks the triples valid at asOf (zero: now) whose sentence
// ("Alice lives in Lisbon") holds a word of q.Text, by BM25 (higher is
// better).
func (db *DB) SearchTriples(ctx context.Context, q engram.TextQuery, asOf time.Time) ([]engram.TripleHit, error) {
	terms, err := kwindex.QueryTerms(q.Text)
	if err != nil || len(terms) == 0 {
		return nil, err
	}
	if asOf.IsZero() {
		asOf = db.now()
	}
	limit := min(max(q.Limit, 1), MaxSearchLimit)
	var out []engram.TripleHit
	err = db.View(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+tripleColumns+`, f.rank FROM kg_fts f JOIN kg_triples t ON t.n = f.rowid `+tripleNames+`
			WHERE kg_fts MATCH ?1 AND (?3 = '' OR t.namespace = ?3) AND `+validAt+`
			ORDER BY f.rank LIMIT ?4`, matchExpr(terms), asOf.UnixNano(), q.Namespace, limit)
		if err != nil {
			return err
		}
		return sqlrow.Each(rows, func() error {
			var h engram.TripleHit
			var rank float64
			if err := scanTriple(rows, &h.Triple, &rank); err != nil {
				return err
			}
			h.Score = -rank
			out = append(out, h)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("palace: search triples: %w", err)
	}
	return out, nil
}
