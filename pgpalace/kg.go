package pgpalace

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/facetline"
	"github.com/engram-dev/engram/internal/kgchain"
	"github.com/engram-dev/engram/internal/kwindex"
	"github.com/engram-dev/engram/internal/redacttext"
	"github.com/engram-dev/engram/internal/sqlrow"
)

// The L4 knowledge graph, as package palace keeps it (palace/kg.go), its
// logic in internal/kgchain: each triple is recorded as a statement of a
// chain, and the chains it changed are rebuilt into triples from the
// first statement it changed on. A rebuild here writes only the triples
// that changed (a new change number each) and deletes those gone, so that
// a graph batch sends no server's keyword index of the triples to build
// itself again (a deletion does). The corrections of the namespace apply
// to every chain rebuilt (corrections.go).

// keyTriplesDeleted is the palace_meta key counting the deletions of
// triples.
const keyTriplesDeleted = "triples_deleted"

// graph is a transaction's work on the graph, under the graph's lock.
type graph struct {
	ctx context.Context
	tx  pgx.Tx
}

// chainKey names a chain of statements.
type chainKey struct {
	ns, chain string
	single    bool
}

// ApplyTriples adds triples to the knowledge graph and advances the
// worker's watermark to throughSeq, in one transaction, as package
// palace's does: the graph depends only on the set of statements, not on
// their order or on one applied twice. Triple IDs are set here.
//
// Errors: EINVALID naming the field for a triple without namespace,
// subject, predicate, object or valid_from (kgchain.Check).
func (db *DB) ApplyTriples(ctx context.Context, worker string, triples []engram.Triple, throughSeq int64) error {
	if err := kgchain.Check(triples, func(at time.Time) error { _, err := nanos(at); return err }); err != nil {
		return err
	}
	return db.update(ctx, "apply triples", func(tx pgx.Tx) error {
		if err := lock(ctx, tx, graphLockKey); err != nil {
			return err
		}
		g := graph{ctx, tx}
		var dirty kgchain.Dirty[chainKey]
		for _, t := range triples {
			k, key, changed, err := g.applyTriple(t)
			if err != nil {
				return errors.Join(errors.New("triple ("+t.Subject+", "+t.Predicate+", "+t.Object+")"), err)
			}
			if changed {
				dirty.Mark(k, key)
			}
		}
		err := dirty.Each(func(k chainKey, from kgchain.Key) error {
			if _, _, err := g.rebuild(k, &from); err != nil {
				return errors.Join(errors.New("chain "+k.chain), err)
			}
			return nil
		})
		if err != nil {
			return err
		}
		return setMeta(ctx, tx, workerKey(worker), throughSeq)
	})
}

// applyTriple records t as a statement of its chain and reports whether
// the chain changed (and needs rebuilding from the statement's key on).
func (g graph) applyTriple(t engram.Triple) (k chainKey, key kgchain.Key, changed bool, err error) {
	subj, err := g.resolve(t.Namespace, t.Subject, true)
	if err != nil {
		return k, key, false, err
	}
	var obj int64
	if engram.AliasPredicate(t.Predicate) {
		// The object is a name, an entity of its own made an alias of the
		// subject.
		if obj, err = g.nameEntity(t.Namespace, t.Object); err != nil {
			return k, key, false, err
		}
		if err := g.addAlias(t.Namespace, t.Object, subj); err != nil {
			return k, key, false, err
		}
	} else if obj, err = g.resolve(t.Namespace, t.Object, true); err != nil {
		return k, key, false, err
	}
	chain := kgchain.Chain(subj, t.Predicate, obj)
	at := t.ValidFrom.UnixNano()
	var srcs []string
	err = g.tx.QueryRow(g.ctx, `SELECT sources FROM palace_kg_statements
		WHERE namespace = $1 AND chain = $2 AND at = $3 AND predicate = $4 AND object = $5`,
		t.Namespace, chain, at, t.Predicate, obj).Scan(&srcs)
	known := err == nil
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return k, key, false, err
	}
	merged := facetline.Union(srcs, t.Sources)
	if known && len(merged) == len(srcs) {
		return k, key, false, nil // nothing new
	}
	if _, err := g.tx.Exec(g.ctx, `INSERT INTO palace_kg_statements (namespace, chain, at, subject, predicate, object, sources, memory)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (namespace, chain, at, predicate, object) DO UPDATE SET sources = excluded.sources`,
		t.Namespace, chain, at, subj, t.Predicate, obj, nonNil(merged), t.Memory); err != nil {
		return k, key, false, err
	}
	return chainKey{t.Namespace, chain, engram.SingleValued(t.Predicate)}, kgchain.Key{At: at, Predicate: t.Predicate, Object: obj}, true, nil
}

// storedTriple is a row of palace_kg_triples as a rebuild compares it.
type storedTriple struct {
	n                     int64
	id, predicate, memory string
	subject, object, from int64
	to                    *int64
	confidence            float64
	sources               []string
	corrected             *string
	text                  string
}

// rebuild makes the triples of chain k again from its statements, from
// the group holding the last statement before changed on (nil: all), as
// package palace's rebuildChainFrom does, and returns the ids of the
// triples it deleted and of those it wrote again changed (their text
// may have changed: their vectors go). A triple it makes as it was stays
// as it is.
func (g graph) rebuild(k chainKey, changed *kgchain.Key) (gone, rewritten []string, err error) {
	// Where the namespace has corrections, which may drop or change any
	// statement, the whole chain is rebuilt.
	corrected, err := g.hasCorrections(k.ns)
	if err != nil {
		return nil, nil, err
	}
	cond, args := `namespace = $1 AND chain = $2`, []any{k.ns, k.chain}
	tcond := cond
	if changed != nil && !corrected {
		var from kgchain.Key
		err := g.tx.QueryRow(g.ctx, `SELECT valid_from, predicate, object FROM palace_kg_triples
			WHERE namespace = $1 AND chain = $2 AND (valid_from, predicate, object) < ($3, $4, $5)
			ORDER BY valid_from DESC, predicate DESC, object DESC LIMIT 1`,
			k.ns, k.chain, changed.At, changed.Predicate, changed.Object).Scan(&from.At, &from.Predicate, &from.Object)
		switch {
		case err == nil:
			cond += ` AND (at, predicate, object) >= ($3, $4, $5)`
			tcond += ` AND (valid_from, predicate, object) >= ($3, $4, $5)`
			args = append(args, from.At, from.Predicate, from.Object)
		case !errors.Is(err, pgx.ErrNoRows):
			return nil, nil, err
		}
	}
	rows, err := g.tx.Query(g.ctx, `SELECT at, subject, predicate, object, sources, memory FROM palace_kg_statements
		WHERE `+cond+` ORDER BY at, predicate, object`, args...)
	if err != nil {
		return nil, nil, err
	}
	sts, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (kgchain.Statement, error) {
		var s kgchain.Statement
		return s, r.Scan(&s.At, &s.Subject, &s.Predicate, &s.Object, &s.Sources, &s.Memory)
	})
	if err != nil {
		return nil, nil, err
	}
	if corrected {
		if sts, err = g.correct(k.ns, sts); err != nil {
			return nil, nil, err
		}
	}
	rows, err = g.tx.Query(g.ctx, `SELECT n, id, subject, predicate, object, valid_from, valid_to, confidence, sources, memory, corrected, text
		FROM palace_kg_triples WHERE `+tcond, args...)
	if err != nil {
		return nil, nil, err
	}
	stored, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (storedTriple, error) {
		var t storedTriple
		return t, r.Scan(&t.n, &t.id, &t.subject, &t.predicate, &t.object, &t.from, &t.to, &t.confidence, &t.sources, &t.memory, &t.corrected, &t.text)
	})
	if err != nil {
		return nil, nil, err
	}
	old := make(map[string]storedTriple, len(stored))
	for _, t := range stored {
		old[t.id] = t
	}
	var seq int64
	if err := g.tx.QueryRow(g.ctx, `SELECT coalesce(max(seq), 0) FROM palace_kg_triples`).Scan(&seq); err != nil {
		return nil, nil, err
	}
	for _, tr := range kgchain.Triples(sts, k.single) {
		f := tr.First
		t := storedTriple{id: kgchain.TripleID(k.ns, f), subject: f.Subject, predicate: f.Predicate, object: f.Object, from: f.At, to: tr.ValidTo,
			confidence: kgchain.Confidence(len(tr.Sources)), sources: nonNil(tr.Sources), memory: f.Memory}
		if f.Corrected != "" {
			t.corrected = &f.Corrected
		}
		var subj, obj string
		if err := g.tx.QueryRow(g.ctx, `SELECT (SELECT name FROM palace_kg_entities WHERE n = $1), (SELECT name FROM palace_kg_entities WHERE n = $2)`,
			f.Subject, f.Object).Scan(&subj, &obj); err != nil {
			return nil, nil, err
		}
		t.text = engram.Triple{Subject: subj, Predicate: f.Predicate, Object: obj}.Sentence()
		was, ok := old[t.id]
		delete(old, t.id)
		if ok && sameTriple(was, t) {
			continue
		}
		if ok {
			rewritten = append(rewritten, t.id)
		}
		seq++
		// An update of the row, or an insert: an upsert takes a row
		// number even where it updates (see insertScenes).
		if ok {
			_, err = g.tx.Exec(g.ctx, `UPDATE palace_kg_triples SET chain = $2, subject = $3, predicate = $4, object = $5, valid_from = $6,
				valid_to = $7, confidence = $8, sources = $9, memory = $10, corrected = $11, text = $12, seq = $13 WHERE n = $1`,
				was.n, k.chain, t.subject, t.predicate, t.object, t.from, t.to, t.confidence, t.sources, t.memory, t.corrected, t.text, seq)
		} else {
			_, err = g.tx.Exec(g.ctx, `INSERT INTO palace_kg_triples
				(id, namespace, chain, subject, predicate, object, valid_from, valid_to, confidence, sources, memory, corrected, text, seq)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
				t.id, k.ns, k.chain, t.subject, t.predicate, t.object, t.from, t.to, t.confidence, t.sources, t.memory, t.corrected, t.text, seq)
		}
		if err != nil {
			return nil, nil, err
		}
	}
	if len(old) == 0 {
		return nil, rewritten, nil
	}
	for id := range old {
		gone = append(gone, id)
	}
	slices.Sort(gone)
	if _, err := g.tx.Exec(g.ctx, `DELETE FROM palace_kg_triples WHERE id = ANY($1)`, gone); err != nil {
		return nil, nil, err
	}
	return gone, rewritten, countDeletion(g.ctx, g.tx, keyTriplesDeleted)
}

// sameTriple reports whether a rebuild made b as a was stored.
func sameTriple(a, b storedTriple) bool {
	return a.subject == b.subject && a.predicate == b.predicate && a.object == b.object && a.from == b.from &&
		(a.to == nil) == (b.to == nil) && (a.to == nil || *a.to == *b.to) && a.confidence == b.confidence &&
		slices.Equal(a.sources, b.sources) && a.memory == b.memory &&
		(a.corrected == nil) == (b.corrected == nil) && (a.corrected == nil || *a.corrected == *b.corrected) && a.text == b.text
}

// rebuildWhere rebuilds every chain holding a statement that cond (on
// palace_kg_statements, with args) selects, and returns the ids of the
// triples it deleted or wrote again changed.
func (g graph) rebuildWhere(cond string, args ...any) ([]string, error) {
	rows, err := g.tx.Query(g.ctx, `SELECT DISTINCT namespace, chain, predicate FROM palace_kg_statements WHERE `+cond, args...)
	if err != nil {
		return nil, err
	}
	chains, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (chainKey, error) {
		var (
			k    chainKey
			pred string
		)
		err := r.Scan(&k.ns, &k.chain, &pred)
		k.single = engram.SingleValued(pred)
		return k, err
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(chains, func(a, b chainKey) int { return cmp.Or(cmp.Compare(a.ns, b.ns), cmp.Compare(a.chain, b.chain)) })
	chains = slices.Compact(chains)
	var touched []string
	for _, k := range chains {
		gone, rewritten, err := g.rebuild(k, nil)
		if err != nil {
			return nil, err
		}
		touched = append(append(touched, gone...), rewritten...)
	}
	return touched, nil
}

// resolve returns the entity named name (by alias or normalised name),
// making it when create is set; 0 when not found. A known entity met
// under a better spelling takes it as its name.
func (g graph) resolve(ns, name string, create bool) (int64, error) {
	norm, display := kgchain.NormName(name), kgchain.DisplayName(name)
	var (
		n     int64
		known string
	)
	err := g.tx.QueryRow(g.ctx, `SELECT e.n, e.name FROM palace_kg_aliases a JOIN palace_kg_entities e ON e.n = a.entity
		WHERE a.namespace = $1 AND a.norm = $2`, ns, norm).Scan(&n, &known)
	found := err == nil
	switch {
	case err != nil && !errors.Is(err, pgx.ErrNoRows):
		return 0, err
	case found && create && kgchain.NormName(known) == norm:
		return n, g.rename(n, known, display)
	case found:
		return n, nil
	case !create:
		return 0, nil
	}
	if n, err = g.nameEntity(ns, name); err != nil {
		return 0, err
	}
	_, err = g.tx.Exec(g.ctx, `INSERT INTO palace_kg_aliases (namespace, norm, alias, entity) VALUES ($1, $2, $3, $4)
		ON CONFLICT (namespace, norm) DO NOTHING`, ns, norm, display, n)
	return n, err
}

// nameEntity returns the entity whose normalised name is name's, making
// it (without alias) if there is none.
func (g graph) nameEntity(ns, name string) (int64, error) {
	norm, display := kgchain.NormName(name), kgchain.DisplayName(name)
	var (
		n     int64
		known string
	)
	err := g.tx.QueryRow(g.ctx, `SELECT n, name FROM palace_kg_entities WHERE namespace = $1 AND norm = $2`, ns, norm).Scan(&n, &known)
	if errors.Is(err, pgx.ErrNoRows) {
		err = g.tx.QueryRow(g.ctx, `INSERT INTO palace_kg_entities (namespace, name, norm) VALUES ($1, $2, $3) RETURNING n`, ns, display, norm).Scan(&n)
		return n, err
	}
	if err != nil {
		return 0, err
	}
	return n, g.rename(n, known, display)
}

// rename names entity n, now named known, display when that spelling is
// the better (kgchain.BetterName).
func (g graph) rename(n int64, known, display string) error {
	if !kgchain.BetterName(display, known) {
		return nil
	}
	_, err := g.tx.Exec(g.ctx, `UPDATE palace_kg_entities SET name = $1 WHERE n = $2`, display, n)
	return err
}

// addAlias makes name another name of entity, unless the name is taken by
// another entity that has triples of its own (then the two stay apart).
func (g graph) addAlias(ns, name string, entity int64) error {
	norm := kgchain.NormName(name)
	var owner int64
	err := g.tx.QueryRow(g.ctx, `SELECT entity FROM palace_kg_aliases WHERE namespace = $1 AND norm = $2`, ns, norm).Scan(&owner)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		_, err = g.tx.Exec(g.ctx, `INSERT INTO palace_kg_aliases (namespace, norm, alias, entity) VALUES ($1, $2, $3, $4)`, ns, norm, name, entity)
		return err
	case err != nil || owner == entity:
		return err
	}
	var used bool
	if err := g.tx.QueryRow(g.ctx, `SELECT EXISTS (SELECT 1 FROM palace_kg_triples WHERE subject = $1
		OR (object = $1 AND predicate NOT IN ('name', 'alias', 'also_known_as')))`, owner).Scan(&used); err != nil {
		return err
	}
	if used {
		return nil
	}
	_, err = g.tx.Exec(g.ctx, `UPDATE palace_kg_aliases SET entity = $1 WHERE namespace = $2 AND norm = $3`, entity, ns, norm)
	return err
}

// unnamed selects the entities e no statement or triple names.
const unnamed = `NOT EXISTS (SELECT 1 FROM palace_kg_statements s WHERE s.subject = e.n)
	AND NOT EXISTS (SELECT 1 FROM palace_kg_statements s WHERE s.object = e.n)
	AND NOT EXISTS (SELECT 1 FROM palace_kg_triples t WHERE t.subject = e.n)
	AND NOT EXISTS (SELECT 1 FROM palace_kg_triples t WHERE t.object = e.n)`

// deleteUnnamed deletes the entities e that cond (with args) selects and
// nothing names, with their aliases, and returns how many.
func (g graph) deleteUnnamed(cond string, args ...any) (int, error) {
	orphans := `SELECT n FROM palace_kg_entities e WHERE ` + unnamed + ` AND (` + cond + `)`
	if _, err := g.tx.Exec(g.ctx, `DELETE FROM palace_kg_aliases WHERE entity IN (`+orphans+`)`, args...); err != nil {
		return 0, err
	}
	tag, err := g.tx.Exec(g.ctx, `DELETE FROM palace_kg_entities WHERE n IN (`+orphans+`)`, args...)
	return int(tag.RowsAffected()), err
}

// forgetStatements takes the turns gone out of the graph's statements,
// deletes those left without a source, rebuilds the chains that changed
// and deletes the entities nothing names any more, as package palace's
// forget does. It counts the statements changed in res.Facts and adds the
// triples gone to res.Removed.
func (g graph) forgetStatements(gone []string, facts *int, removed *[]string) error {
	type st struct {
		ns, chain, pred string
		at, obj         int64
		sources         []string
	}
	rows, err := g.tx.Query(g.ctx, `SELECT namespace, chain, at, predicate, object, sources FROM palace_kg_statements
		WHERE sources && $1::text[] ORDER BY namespace, chain, at, predicate, object`, gone)
	if err != nil {
		return err
	}
	hits, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (st, error) {
		var s st
		return s, r.Scan(&s.ns, &s.chain, &s.at, &s.pred, &s.obj, &s.sources)
	})
	if err != nil {
		return err
	}
	chains := map[chainKey]bool{}
	var order []chainKey
	for _, s := range hits {
		*facts++
		kept := slices.DeleteFunc(slices.Clone(s.sources), func(id string) bool { return slices.Contains(gone, id) })
		const where = `WHERE namespace = $1 AND chain = $2 AND at = $3 AND predicate = $4 AND object = $5`
		if len(kept) == 0 {
			_, err = g.tx.Exec(g.ctx, `DELETE FROM palace_kg_statements `+where, s.ns, s.chain, s.at, s.pred, s.obj)
		} else {
			_, err = g.tx.Exec(g.ctx, `UPDATE palace_kg_statements SET sources = $6 `+where, s.ns, s.chain, s.at, s.pred, s.obj, kept)
		}
		if err != nil {
			return err
		}
		k := chainKey{s.ns, s.chain, engram.SingleValued(s.pred)}
		if !chains[k] {
			chains[k] = true
			order = append(order, k)
		}
	}
	for _, k := range order {
		gone, _, err := g.rebuild(k, nil)
		if err != nil {
			return err
		}
		*removed = append(*removed, gone...)
	}
	if len(order) == 0 {
		return nil
	}
	// Entities no statement names: their names were the forgotten words.
	_, err = g.deleteUnnamed(`true`)
	return err
}

// tripleColumns are the columns of a triple, from palace_kg_triples t
// joined with its subject's and object's entities (tripleNames), as
// scanTriple reads them.
const (
	tripleColumns = `t.id, t.namespace, s.name, t.predicate, o.name, t.valid_from, t.valid_to, t.confidence, t.sources, t.memory, t.seq`
	tripleNames   = `JOIN palace_kg_entities s ON s.n = t.subject JOIN palace_kg_entities o ON o.n = t.object`
)

// validAt is the condition that triple t holds at $2 (Unix nanoseconds).
const validAt = `t.valid_from <= $2 AND (t.valid_to IS NULL OR t.valid_to > $2)`

// scanTriple reads a row of tripleColumns, then extra.
func scanTriple(r pgx.CollectableRow, extra ...any) (engram.Triple, error) {
	var t engram.Triple
	err := r.Scan(append([]any{&t.ID, &t.Namespace, &t.Subject, &t.Predicate, &t.Object, sqlrow.Time(&t.ValidFrom), sqlrow.Time(&t.ValidTo),
		&t.Confidence, &t.Sources, &t.Memory, &t.Seq}, extra...)...)
	return t, err
}

// queryTriples returns the triples q (whose columns are tripleColumns)
// selects.
func queryTriples(ctx context.Context, qr pgxQuerier, q string, args ...any) ([]engram.Triple, error) {
	rows, err := qr.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return pgx.AppendRows([]engram.Triple(nil), rows, func(r pgx.CollectableRow) (engram.Triple, error) { return scanTriple(r) })
}

// Graph answers q: the triples q.Entity is the subject or object of, valid
// at q.AsOf (zero: now), or all of them in time order for a timeline.
// Errors: EINVALID without an entity; ENOTFOUND when the graph does not
// know it.
func (db *DB) Graph(ctx context.Context, q engram.GraphQuery) (engram.GraphResult, error) {
	if strings.TrimSpace(q.Entity) == "" {
		return engram.GraphResult{}, engram.FieldError("entity", "entity is required")
	}
	ns := cmp.Or(q.Namespace, engram.DefaultNamespace)
	limit := q.Limit
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, maxSearchLimit)
	var res engram.GraphResult
	err := pgx.BeginTxFunc(ctx, db.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		g := graph{ctx, tx}
		n, err := g.resolve(ns, q.Entity, false)
		if err != nil {
			return err
		}
		if n == 0 {
			return engram.Errorf(engram.ENOTFOUND, "the knowledge graph of namespace %q has no entity %q", ns, q.Entity)
		}
		if res.Entity, err = g.entity(n); err != nil {
			return err
		}
		query := `SELECT ` + tripleColumns + ` FROM palace_kg_triples t ` + tripleNames + ` WHERE (t.subject = $1 OR t.object = $1)`
		args := []any{n}
		if !q.Timeline {
			query += ` AND ` + validAt
			args = append(args, cmp.Or(q.AsOf, db.now()).UnixNano())
		}
		res.Triples, err = queryTriples(ctx, tx, query+` ORDER BY t.valid_from, t.n LIMIT `+strconv.Itoa(limit), args...)
		return err
	})
	if err != nil {
		if _, ok := errors.AsType[*engram.Error](err); ok {
			return engram.GraphResult{}, err
		}
		return engram.GraphResult{}, wrap("graph", err)
	}
	return res, nil
}

// entity reads entity n with its other names.
func (g graph) entity(n int64) (engram.Entity, error) {
	var e engram.Entity
	if err := g.tx.QueryRow(g.ctx, `SELECT namespace, name FROM palace_kg_entities WHERE n = $1`, n).Scan(&e.Namespace, &e.Name); err != nil {
		return e, err
	}
	rows, err := g.tx.Query(g.ctx, `SELECT alias FROM palace_kg_aliases WHERE entity = $1 ORDER BY alias COLLATE "C"`, n)
	if err != nil {
		return e, err
	}
	aliases, err := pgx.CollectRows(rows, pgx.RowTo[string])
	for _, a := range aliases {
		if a != e.Name {
			e.Aliases = append(e.Aliases, a)
		}
	}
	return e, err
}

// EntityTriples returns, for each name that resolves to an entity of the
// namespace, the triples valid at asOf (zero: now) that the entity is part
// of; names not in the graph are skipped; at most limit triples.
func (db *DB) EntityTriples(ctx context.Context, ns string, names []string, asOf time.Time, limit int) ([]engram.Triple, error) {
	if len(names) == 0 {
		return nil, nil
	}
	at := cmp.Or(asOf, db.now()).UnixNano()
	var out []engram.Triple
	err := pgx.BeginTxFunc(ctx, db.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		g := graph{ctx, tx}
		seen := map[int64]bool{}
		for _, name := range names {
			n, err := g.resolve(ns, name, false)
			if err != nil {
				return err
			}
			if n == 0 || seen[n] {
				continue
			}
			seen[n] = true
			ts, err := queryTriples(ctx, tx, `SELECT `+tripleColumns+` FROM palace_kg_triples t `+tripleNames+`
				WHERE (t.subject = $1 OR t.object = $1) AND `+validAt+` ORDER BY t.n LIMIT $3`, n, at, limit-len(out))
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
	return out, wrap("entity triples", err)
}

// TriplesSince returns up to limit triples whose change number is above
// after, in change-number order (for the worker that embeds them).
func (db *DB) TriplesSince(ctx context.Context, after int64, limit int) ([]engram.Triple, error) {
	out, err := queryTriples(ctx, db.pool, `SELECT `+tripleColumns+` FROM palace_kg_triples t `+tripleNames+`
		WHERE t.seq > $1 ORDER BY t.seq LIMIT $2`, after, max(limit, 0))
	return out, wrap("triples since", err)
}

// GetTriples returns the triples with the given ids, in the order of ids;
// unknown ids (a triple a rebuilt chain replaced) are skipped.
func (db *DB) GetTriples(ctx context.Context, ids []string) ([]engram.Triple, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	got, err := queryTriples(ctx, db.pool, `SELECT `+tripleColumns+` FROM palace_kg_triples t `+tripleNames+` WHERE t.id = ANY($1)`, ids)
	if err != nil {
		return nil, wrap("get triples", err)
	}
	return sqlrow.InOrder(ids, got, func(t engram.Triple) string { return t.ID }), nil
}

// tripleChanges reads the triples changed after a change number for the
// triples' keyword index, with the sentence stored with each.
func tripleChanges(ctx context.Context, tx pgx.Tx, after int64, limit int) ([]kwindex.Row, error) {
	q, err := tx.Query(ctx, `SELECT n, seq, namespace, text FROM palace_kg_triples WHERE seq > $1 ORDER BY seq LIMIT $2`, after, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(q, func(r pgx.CollectableRow) (kwindex.Row, error) {
		var (
			row  kwindex.Row
			text string
		)
		if err := r.Scan(&row.Doc.Key, &row.Change, &row.Doc.Namespace, &text); err != nil {
			return row, err
		}
		var err error
		row.Doc.Text, err = kwindex.IndexText(text)
		return row, err
	})
}

// SearchTriples ranks the triples valid at asOf (zero: now) whose sentence
// ("Alice lives in Lisbon") holds a word of q.Text by BM25 (higher is
// better), as package palace's does: the best of the triples the keyword
// index ranks, read more deeply while too few of them are valid then.
func (db *DB) SearchTriples(ctx context.Context, q engram.TextQuery, asOf time.Time) ([]engram.TripleHit, error) {
	words, err := textWords(q.Text)
	if err != nil || len(words) == 0 {
		return nil, err
	}
	at := cmp.Or(asOf, db.now()).UnixNano()
	limit := min(max(q.Limit, 1), maxSearchLimit)
	for depth := limit * 4; ; depth *= 4 {
		var hits []kwindex.Hit
		err := fromIndex(ctx, db.gkw, func() (ok bool, err error) {
			hits, ok, err = db.gkw.Best(ctx, nil, words, kwindex.Filter{Namespace: q.Namespace}, depth)
			return ok, err
		})
		if err != nil || len(hits) == 0 {
			return nil, wrap("search triples", err)
		}
		rows, err := db.pool.Query(ctx, `SELECT `+tripleColumns+`, t.n FROM palace_kg_triples t `+tripleNames+`
			WHERE t.n = ANY($1) AND `+validAt, kwindex.Keys(hits), at)
		if err != nil {
			return nil, wrap("search triples", err)
		}
		byN := map[int64]engram.Triple{}
		_, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (struct{}, error) {
			var n int64
			t, err := scanTriple(r, &n)
			byN[n] = t
			return struct{}{}, err
		})
		if err != nil {
			return nil, wrap("search triples", err)
		}
		var out []engram.TripleHit
		for _, h := range hits {
			if t, ok := byN[h.Key]; ok && len(out) < limit {
				out = append(out, engram.TripleHit{Triple: t, Score: h.Score})
			}
		}
		if len(out) >= limit || len(hits) < depth {
			return out, nil
		}
	}
}

// redactEntities replaces the spans in the names and aliases of the
// entities of namespaces, as package palace's redaction does: an entity
// holding one that nothing names is deleted; another takes the redacted
// name and its norm (when another entity has that norm already, this one
// keeps a norm of its own, found through its aliases), and the chains
// naming it are rebuilt. It adds the entities changed to *count and the
// triples gone or rewritten to *removed.
func (g graph) redactEntities(namespaces []string, spans []string, txt *redacttext.Text, count *int, removed *[]string) error {
	for _, ns := range namespaces {
		for _, sp := range spans {
			n, err := g.deleteUnnamed(`e.namespace = $1 AND strpos(e.name, $2) > 0`, ns, sp)
			if err != nil {
				return err
			}
			*count += n
		}
		for _, sp := range spans {
			if err := g.redactAliases(ns, sp, txt); err != nil {
				return err
			}
			rows, err := g.tx.Query(g.ctx, `SELECT n, name FROM palace_kg_entities WHERE namespace = $1 AND strpos(name, $2) > 0 ORDER BY n`, ns, sp)
			if err != nil {
				return err
			}
			type entity struct {
				n    int64
				name string
			}
			ents, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (entity, error) {
				var e entity
				return e, r.Scan(&e.n, &e.name)
			})
			if err != nil {
				return err
			}
			for _, e := range ents {
				name := txt.Red(e.name)
				norm := kgchain.NormName(name)
				var taken bool
				if err := g.tx.QueryRow(g.ctx, `SELECT EXISTS (SELECT 1 FROM palace_kg_entities WHERE namespace = $1 AND norm = $2 AND n <> $3)`,
					ns, norm, e.n).Scan(&taken); err != nil {
					return err
				}
				if norm == "" || taken {
					norm += "#" + strconv.FormatInt(e.n, 10)
				}
				if _, err := g.tx.Exec(g.ctx, `UPDATE palace_kg_entities SET name = $1, norm = $2 WHERE n = $3`, name, norm, e.n); err != nil {
					return err
				}
				*count++
				ids, err := g.rebuildWhere(`subject = $1 OR object = $1`, e.n)
				if err != nil {
					return err
				}
				*removed = append(*removed, ids...)
			}
		}
	}
	return nil
}

// redactAliases replaces span in the aliases of namespace ns: a redacted
// alias that another one already spells goes.
func (g graph) redactAliases(ns, span string, txt *redacttext.Text) error {
	rows, err := g.tx.Query(g.ctx, `SELECT norm, alias, entity FROM palace_kg_aliases WHERE namespace = $1 AND strpos(alias, $2) > 0`, ns, span)
	if err != nil {
		return err
	}
	type alias struct {
		norm, alias string
		entity      int64
	}
	aliases, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (alias, error) {
		var a alias
		return a, r.Scan(&a.norm, &a.alias, &a.entity)
	})
	if err != nil {
		return err
	}
	for _, a := range aliases {
		if _, err := g.tx.Exec(g.ctx, `DELETE FROM palace_kg_aliases WHERE namespace = $1 AND norm = $2`, ns, a.norm); err != nil {
			return err
		}
		name := txt.Red(a.alias)
		if norm := kgchain.NormName(name); norm != "" {
			if _, err := g.tx.Exec(g.ctx, `INSERT INTO palace_kg_aliases (namespace, norm, alias, entity) VALUES ($1, $2, $3, $4)
				ON CONFLICT (namespace, norm) DO NOTHING`, ns, norm, name, a.entity); err != nil {
				return err
			}
		}
	}
	return nil
}
