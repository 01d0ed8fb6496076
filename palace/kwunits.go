package palace

import (
	"context"
	"database/sql"
	"errors"
	"sync"

	engram "github.com/engram-dev/engram"
)

// The keyword index of the units: each kind's full-text index (the
// session parts in unit_sessions_fts, the scenes in unit_scenes_fts) held
// in memory like the turns' (kwindex.go), with the statistics of its own
// table, so that scoring the units of a query's candidates (ScoreUnits)
// and ranking the units (SearchUnits) cost no FTS5 scan of every unit
// holding a query word, which was a large share of the hybrid path's time
// (docs/benchmarks.md).
//
// A unit's text changes with every turn its session gains, so rather than
// in each write, the index catches up when searched: every insert or
// growth of a unit takes the next change number (units.seq), so the units
// with a change number past the index's are the changed ones, read again
// from their turns (unitText, the text their index holds). A deletion
// takes no change number; it counts in palace_meta (keyUnitsDeleted), and
// the index is built again. A catch-up of more than unitCatchUp units (the
// first load, a bulk ingest) runs in the background while searches use
// FTS5.

// keyUnitsDeleted counts the deletions of units.
const keyUnitsDeleted = "units_deleted"

// unitCatchUp is the most changed units a search reads itself.
const unitCatchUp = 256

// seqKeywords is a keyword index in memory of a table whose rows take
// change numbers as they are written (units.seq, scenes.seq) and whose
// deletions are counted in palace_meta: the units' (by kind), the scenes'.
type seqKeywords struct {
	src      seqSource
	mu       sync.Mutex
	warm     bool
	current  bool                // kinds holds the state of seq and deleted
	seq      int64               // the change number caught up to
	deleted  int64               // the deletion count it reflects
	kinds    map[string]*kwIndex // by kind (units), or one (scenes: "")
	ids      map[string]int64    // row id → n, when src.byID
	catching bool                // a catch-up is running
	builds   sync.WaitGroup
	ranked   int64 // searches it answered, for the tests

	betweenChunks func() // tests: called between the chunks of a catch-up
	state         loadState
}

// seqSource says where a seqKeywords reads its rows.
type seqSource struct {
	table      string   // the table, whose seq column holds the change numbers
	deletedKey string   // the palace_meta key counting its deletions
	kinds      []string // the kinds indexed apart
	byID       bool     // keep the row number of each id (ids)
	// changes reads up to limit rows changed after a change number, in
	// change order, inside tx.
	changes func(ctx context.Context, tx *sql.Tx, after int64, limit int) ([]unitChange, error)
}

// unitsSource is where the units' index reads them.
var unitsSource = seqSource{table: "units", deletedKey: keyUnitsDeleted,
	kinds: []string{engram.UnitSession, engram.UnitScene}, byID: true, changes: unitChanges}

// countDeletion counts a deletion of the rows of a seqKeywords' table
// (its deletedKey) inside tx.
func countDeletion(ctx context.Context, tx *sql.Tx, key string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO palace_meta (key, value) VALUES (?1, 1)
		ON CONFLICT (key) DO UPDATE SET value = value + 1`, key)
	return err
}

// seqIndexes are the DB's keyword indexes kept by change numbers.
func (db *DB) seqIndexes() []*seqKeywords { return []*seqKeywords{&db.ukw, &db.skw, &db.mkw} }

// indexState reads the change number and deletion count of k's table.
func (db *DB) indexState(ctx context.Context, k *seqKeywords) (seq, deleted int64, err error) {
	err = db.View(ctx, func(tx *sql.Tx) error {
		rows, err := db.readQuery(ctx, tx, stateQuery(k.src.table), k.src.deletedKey)
		if err != nil {
			return err
		}
		defer rows.Close()
		if rows.Next() {
			if err := rows.Scan(&seq, &deleted); err != nil {
				return err
			}
		}
		return rows.Err()
	})
	return seq, deleted, err
}

// stateQuery reads a table's change number and, with the key as its
// argument, its deletion count.
func stateQuery(table string) string {
	return `SELECT (SELECT coalesce(max(seq), 0) FROM ` + table + `),
		coalesce((SELECT value FROM palace_meta WHERE key = ?), 0)`
}

// unitChange is a unit read for the index.
type unitChange struct {
	id, kind string
	change   int64 // its change number (the table's seq)
	add      kwAdd
}

// catchUpChunk is the most changed rows a catch-up reads at once: their
// text is in memory together (a catch-up of every session part at once
// held all of their text).
const catchUpChunk = 512

// readChanges reads up to limit rows of k's table changed after a change
// number, in change order, and the state of the table then.
func (db *DB) readChanges(ctx context.Context, k *seqKeywords, after int64, limit int) (changes []unitChange, seq, deleted int64, err error) {
	err = db.View(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, stateQuery(k.src.table), k.src.deletedKey).Scan(&seq, &deleted); err != nil {
			return err
		}
		var err error
		changes, err = k.src.changes(ctx, tx, after, limit)
		return err
	})
	return changes, seq, deleted, err
}

// unitChanges reads up to limit units changed after a change number, with
// their text as their full-text index holds it.
func unitChanges(ctx context.Context, tx *sql.Tx, after int64, limit int) ([]unitChange, error) {
	var changes []unitChange
	rows, err := tx.QueryContext(ctx, `SELECT n, seq, id, kind, namespace, start_ts, end_ts FROM units WHERE seq > ? ORDER BY seq LIMIT ?`, after, limit)
	if err != nil {
		return nil, err
	}
	err = eachRow(rows, func() error {
		var (
			c          unitChange
			start, end sql.NullInt64
		)
		if err := rows.Scan(&c.add.seq, &c.change, &c.id, &c.kind, &c.add.namespace, &start, &end); err != nil {
			return err
		}
		c.add.ts, c.add.hasTS = start.Int64, start.Valid
		c.add.end, c.add.hasEnd = end.Int64, end.Valid
		changes = append(changes, c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	st := txStmts(ctx, tx)
	for i := range changes {
		text, err := unitText(ctx, st, changes[i].add.seq)
		if err != nil {
			return nil, err
		}
		if changes[i].add.text, err = indexText(text); err != nil {
			return nil, err
		}
	}
	return changes, nil
}

// catchUp brings k to the palace's state: the changed rows on top of the
// index, or every row into a new one (fresh, or a deletion since the
// index's state). It reads them catchUpChunk at a time, each chunk in a
// read transaction of its own, and adds each chunk under k's lock; until
// the last, k's change number is behind the table's, so searches leave k
// to FTS5 (withIndex), as they do while catching is set. A row changed
// again after its chunk takes a later change number and comes again in a
// later chunk; a deletion meanwhile starts again from every row.
func (db *DB) catchUp(ctx context.Context, u *seqKeywords, fresh bool) error {
	u.mu.Lock()
	after, deletedBefore := u.seq, u.deleted
	u.mu.Unlock()
	defer func() {
		u.mu.Lock()
		u.catching = false
		if u.warm {
			if u.current {
				u.state.v.Store(stateReady)
			} else if u.state.v.Load() != stateReady {
				u.state.v.Store(stateFailed)
			}
		}
		u.mu.Unlock()
	}()
	if fresh {
		after = 0
	}
	added := map[*kwIndex]int64{} // what this catch-up added to each index
	for first := true; ; first = false {
		changes, seq, deleted, err := db.readChanges(ctx, u, after, catchUpChunk)
		if err != nil {
			return err
		}
		if deleted != deletedBefore && (!fresh || !first) {
			// Rows deleted since the index's state, or since this
			// fresh build began: every row again.
			fresh, first, after, deletedBefore = true, true, 0, deleted
			if changes, seq, deleted, err = db.readChanges(ctx, u, 0, catchUpChunk); err != nil {
				return err
			}
		}
		deletedBefore = deleted
		u.mu.Lock()
		if first && fresh {
			u.kinds = map[string]*kwIndex{}
			for _, kind := range u.src.kinds {
				u.kinds[kind] = newKWIndex()
			}
			u.ids = map[string]int64{}
			clear(added)
		} else if u.seq != after || !u.current {
			u.mu.Unlock()
			return nil // another catch-up got there first
		}
		for _, c := range changes {
			x := u.kinds[c.kind]
			if x == nil {
				continue
			}
			x.add(c.add)
			added[x]++
			if u.src.byID {
				u.ids[c.id] = c.add.seq
			}
		}
		last := len(changes) < catchUpChunk
		if last {
			after = seq
		} else {
			after = changes[len(changes)-1].change
		}
		u.seq, u.deleted, u.current = after, deleted, true
		if last {
			for _, x := range u.kinds {
				switch {
				case fresh:
					x.trim()
				case added[x] > 1024 && 4*added[x] > x.live:
					// A big catch-up (the first search after the layer
					// jobs ran) grew the postings by appending: give
					// them their length.
					x.compact()
				default:
					x.compactIfWasteful()
				}
			}
		}
		u.mu.Unlock()
		if last {
			return nil
		}
		if u.betweenChunks != nil {
			u.betweenChunks()
		}
	}
}

// CatchUpKeywordIndexes brings the loaded keyword indexes of the units,
// scenes and memories up to the palace, in the caller's goroutine, unless
// one is catching up already. The layer jobs call it after a run, so that
// the first searches after a catch-up of the jobs find them current,
// rather than reading every row the jobs wrote at once, and so that the
// memory they take shows where the jobs' does.
func (db *DB) CatchUpKeywordIndexes(ctx context.Context) error {
	var errs []error
	for _, u := range db.seqIndexes() {
		u.mu.Lock()
		if !u.current || u.catching {
			u.mu.Unlock()
			continue
		}
		u.catching = true
		u.builds.Add(1)
		u.mu.Unlock()
		errs = append(errs, db.catchUp(ctx, u, false))
		u.builds.Done()
	}
	return errors.Join(errs...)
}

// warmIndex starts loading k in the background; WarmKeywordIndex calls
// it.
func (db *DB) warmIndex(u *seqKeywords) {
	u.mu.Lock()
	u.warm = true
	u.state.warm(u.current && !u.catching)
	start := !u.catching && !u.current
	if start {
		u.catching = true
		u.builds.Add(1)
	}
	u.mu.Unlock()
	if start {
		go func() {
			defer u.builds.Done()
			db.catchUp(context.Background(), u, true) // on failure searches stay with FTS5
		}()
	}
}

// withIndex calls fn with k, caught up, and reports whether it did: false
// (the search goes to FTS5) when it is not warm, or so far behind that it
// catches up in the background.
func (db *DB) withIndex(ctx context.Context, u *seqKeywords, fn func(u *seqKeywords)) (bool, error) {
	u.mu.Lock()
	warm := u.warm
	u.mu.Unlock()
	if !warm {
		return false, nil
	}
	seq, deleted, err := db.indexState(ctx, u)
	if err != nil {
		return false, err
	}
	u.mu.Lock()
	if u.current && u.seq == seq && u.deleted == deleted {
		fn(u)
		u.ranked++
		u.mu.Unlock()
		return true, nil
	}
	if u.catching {
		u.mu.Unlock()
		return false, nil
	}
	u.catching = true
	fresh := !u.current || u.deleted != deleted
	if fresh || seq-u.seq > unitCatchUp {
		u.builds.Add(1)
		u.mu.Unlock()
		go func() {
			defer u.builds.Done()
			db.catchUp(context.Background(), u, fresh)
		}()
		return false, nil
	}
	u.mu.Unlock()
	if err := db.catchUp(ctx, u, false); err != nil {
		return false, err
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.current || u.seq < seq {
		return false, nil
	}
	fn(u)
	u.ranked++
	return true, nil
}

// unitHitsFromMemory reads the units of hits (n and score, by kind order)
// into UnitHits, in the order of hits; a unit gone meanwhile is left out.
func (db *DB) unitHitsFromMemory(ctx context.Context, hits []kwHit) ([]engram.UnitHit, error) {
	if len(hits) == 0 {
		return nil, nil
	}
	byN, err := rowsByKey(ctx, db, `SELECT `+unitColumns+`, u.n FROM units u WHERE u.n IN (SELECT value FROM json_each(?))`, hits,
		func(rows *sql.Rows, add func(int64, engram.Unit)) error {
			return eachRow(rows, func() error {
				var n int64
				un, err := scanUnit(rows, &n)
				if err != nil {
					return err
				}
				add(n, un)
				return nil
			})
		})
	if err != nil {
		return nil, err
	}
	out := make([]engram.UnitHit, 0, len(hits))
	for _, h := range hits {
		if un, ok := byN[h.seq]; ok {
			out = append(out, engram.UnitHit{Unit: un, Score: h.score})
		}
	}
	return out, nil
}

// scoreUnitsFromMemory is ScoreUnits from the index; ok false when the
// index cannot answer.
func (db *DB) scoreUnitsFromMemory(ctx context.Context, terms []term, ids []string, kinds []string) ([]engram.UnitHit, bool, error) {
	toks, ok := kwTokens(terms)
	if !ok {
		return nil, false, nil
	}
	var hits []kwHit
	ok, err := db.withIndex(ctx, &db.ukw, func(u *seqKeywords) {
		want := make(map[int64]bool, len(ids))
		for _, id := range ids {
			if n, found := u.ids[id]; found {
				want[n] = true
			}
		}
		for _, kind := range kinds {
			x := u.kinds[kind]
			x.score(toks, func(d *kwDoc) bool { return want[d.seq] }, func(d uint32, score float64) {
				hits = append(hits, kwHit{seq: x.docs[d].seq, score: score})
			})
		}
	})
	if err != nil || !ok {
		return nil, false, err
	}
	out, err := db.unitHitsFromMemory(ctx, hits)
	return out, err == nil, err
}

// searchUnitsFromMemory is SearchUnits from the index.
func (db *DB) searchUnitsFromMemory(ctx context.Context, q engram.TextQuery, terms []term, kinds []string, limit int) ([]engram.UnitHit, bool, error) {
	toks, ok := kwTokens(terms)
	if !ok {
		return nil, false, nil
	}
	var hits []kwHit
	ok, err := db.withIndex(ctx, &db.ukw, func(u *seqKeywords) {
		for _, kind := range kinds {
			x := u.kinds[kind]
			if keep, some := spanFilter(x, q); some {
				hits = append(hits, x.best(toks, limit, keep)...)
			}
		}
	})
	if err != nil || !ok {
		return nil, false, err
	}
	out, err := db.unitHitsFromMemory(ctx, hits)
	return out, err == nil, err
}

// searchOne ranks the one kind of u (the scenes', the memories') for
// terms: the best limit docs that filter's keep accepts, read by query
// (the keys as its argument) and scan, passed to add with their scores,
// best first; a row gone meanwhile is left out. ok is false when the index
// cannot answer.
func searchOne[T any](ctx context.Context, db *DB, u *seqKeywords, terms []term, limit int,
	filter func(x *kwIndex) (keep func(*kwDoc) bool, some bool),
	query string, scan func(*sql.Rows, func(int64, T)) error, add func(v T, score float64)) (bool, error) {
	toks, ok := kwTokens(terms)
	if !ok {
		return false, nil
	}
	var hits []kwHit
	ok, err := db.withIndex(ctx, u, func(u *seqKeywords) {
		x := u.kinds[""]
		if keep, some := filter(x); some {
			hits = x.best(toks, limit, keep)
		}
	})
	if err != nil || !ok {
		return false, err
	}
	byN, err := rowsByKey(ctx, db, query, hits, scan)
	if err != nil {
		return false, err
	}
	for _, h := range hits {
		if v, found := byN[h.seq]; found {
			add(v, h.score)
		}
	}
	return true, nil
}

// spanFilter keeps the docs of x (units, scenes: a start and an end) of
// q's namespace that overlap [q.From, q.To), as the FTS5 searches filter
// them; some is false when no doc can be kept.
func spanFilter(x *kwIndex, q engram.TextQuery) (keep func(*kwDoc) bool, some bool) {
	nsc, nsOK := x.nsCode[q.Namespace]
	if q.Namespace != "" && !nsOK {
		return nil, false
	}
	from, to := nanosOrZero(q.From), nanosOrZero(q.To)
	return func(d *kwDoc) bool {
		if q.Namespace != "" && d.ns != nsc {
			return false
		}
		return (from == 0 || (d.hasEnd && d.end >= from)) && (to == 0 || (d.hasTS && d.ts < to))
	}, true
}
