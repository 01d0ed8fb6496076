package palace

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/kwindex"
	"github.com/engram-dev/engram/internal/sqlrow"
)

// The in-memory keyword indexes (internal/kwindex) rank the turns, the
// units, the scenes and the memories as their FTS5 tables do, to the last
// bit of the score, without FTS5 computing bm25() for every row holding a
// query word (docs/benchmarks.md). The tables stay the store; this file is
// what the indexes read of the palace and when, and their hits read back
// as rows.
//
// The turns' index (db.kw) is kept current by the writes of this process:
// each transaction that changes turns_fts counts a generation in
// palace_meta (keyKeywordGen, countKeywordChange) and hands its change to
// the index once committed (db.kw.Begin, End). The others catch up
// when searched from the change numbers their rows take (units.seq,
// scenes.seq, memories.seq) and the deletions counted in palace_meta
// (tableSource).

// keyKeywordGen is the palace_meta key counting changes of turns_fts.
const keyKeywordGen = "keyword_gen"

// The palace_meta keys counting the deletions of units, scenes and
// memories (countDeletion).
const (
	keyUnitsDeleted    = "units_deleted"
	keyScenesDeleted   = "scenes_deleted"
	keyMemoriesDeleted = "memories_deleted"
)

// speakerWeight is the weight of turns_fts's speaker column in its rank,
// bm25(1.0, 0.4) (migrations/0001_turns.sql).
const speakerWeight = 0.4

// Keyword index states, as KeywordIndexStates reports them.
const (
	IndexLoading = kwindex.Loading
	IndexReady   = kwindex.Ready
	IndexFailed  = kwindex.Failed
)

// openKeyword makes the DB's keyword indexes, none loaded.
func (db *DB) openKeyword() {
	db.kw = kwindex.NewGenCache(speakerWeight, db.loadTurnDocs)
	db.ukw = kwindex.NewSeqCache(tableSource{db, "units", keyUnitsDeleted, unitChanges}, true, engram.UnitSession, engram.UnitScene)
	db.skw = kwindex.NewSeqCache(tableSource{db, "scenes", keyScenesDeleted, sceneChanges}, false, "")
	db.mkw = kwindex.NewSeqCache(tableSource{db, "memories", keyMemoriesDeleted, memoryChanges}, false, "")
}

// seqIndexes are the DB's keyword indexes kept by change numbers.
func (db *DB) seqIndexes() []*kwindex.SeqCache { return []*kwindex.SeqCache{db.ukw, db.skw, db.mkw} }

// LoadKeywordIndex builds the in-memory keyword indexes from the turns, the
// units, the scenes and the memories, if they are not loaded, and keeps
// them current from then on (see WarmKeywordIndex). On a large palace it
// takes seconds (BenchmarkRecall100k logs the time and size;
// docs/benchmarks.md has the size a turn).
func (db *DB) LoadKeywordIndex(ctx context.Context) error {
	for _, u := range db.seqIndexes() {
		u.Warm()
	}
	for _, u := range db.seqIndexes() {
		u.Wait()
	}
	return db.kw.Load(ctx)
}

// WarmKeywordIndex starts loading the keyword indexes in the background;
// searches use FTS5 until they are ready. A server calls it at start.
func (db *DB) WarmKeywordIndex() {
	db.kw.Warm()
	for _, u := range db.seqIndexes() {
		u.Warm()
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
		errs = append(errs, u.CatchUp(ctx))
	}
	return errors.Join(errs...)
}

// KeywordIndexStates reports the in-memory keyword indexes that are warm
// (WarmKeywordIndex), by what they index ("turns", "units", "scenes",
// "memories"): IndexLoading until the first load is done (searches use
// FTS5 meanwhile), IndexReady once it is, IndexFailed when it failed
// (searches stay with FTS5). Nil when none is warm. It takes no lock of
// the indexes.
func (db *DB) KeywordIndexStates() map[string]string {
	states := map[string]string{}
	for name, st := range map[string]string{"turns": db.kw.State(), "units": db.ukw.State(), "scenes": db.skw.State(), "memories": db.mkw.State()} {
		if st != "" {
			states[name] = st
		}
	}
	if len(states) == 0 {
		return nil
	}
	return states
}

// countKeywordChange takes the next generation of turns_fts for c inside
// its transaction, if it changed anything.
func countKeywordChange(ctx context.Context, tx *sql.Tx, c *kwindex.Change) error {
	if c.Empty() {
		return nil
	}
	err := tx.QueryRowContext(ctx, `INSERT INTO palace_meta (key, value) VALUES (?1, 1)
		ON CONFLICT (key) DO UPDATE SET value = value + 1 RETURNING value`, keyKeywordGen).Scan(&c.Gen)
	if err != nil {
		return fmt.Errorf("count the keyword change: %w", err)
	}
	return nil
}

// turnDoc is a turn's row of turns_fts as the keyword index holds it; ts
// is its time (an int64), nil when it has none.
func turnDoc(seq int64, namespace string, ts any, text, speaker string) kwindex.Doc {
	d := kwindex.Doc{Key: seq, Namespace: namespace, Text: text, Second: speaker}
	d.TS, d.HasTS = ts.(int64)
	return d
}

// countDeletion counts a deletion of the rows of a table kept by change
// numbers (its deletedKey) inside tx.
func countDeletion(ctx context.Context, tx *sql.Tx, key string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO palace_meta (key, value) VALUES (?1, 1)
		ON CONFLICT (key) DO UPDATE SET value = value + 1`, key)
	return err
}

// loadTurnDocs reads every turn, as turns_fts holds it, and the generation
// of turns_fts: the load of the turns' index.
func (db *DB) loadTurnDocs(ctx context.Context, add func(kwindex.Doc)) (gen int64, err error) {
	err = db.viewLoad(ctx, func(tx *sql.Tx) error {
		var err error
		if gen, err = metaIn(ctx, tx, keyKeywordGen); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT seq, namespace, ts, content, speaker FROM turns ORDER BY seq`)
		if err != nil {
			return err
		}
		return sqlrow.Each(rows, func() error {
			var (
				d       kwindex.Doc
				ts      sql.NullInt64
				content string
			)
			if err := rows.Scan(&d.Key, &d.Namespace, &ts, &content, &d.Second); err != nil {
				return err
			}
			d.TS, d.HasTS = ts.Int64, ts.Valid
			if d.Text, err = kwindex.IndexText(content); err != nil {
				return err
			}
			if d.Second, err = kwindex.IndexText(d.Second); err != nil {
				return err
			}
			add(d)
			return nil
		})
	})
	if err != nil {
		return 0, fmt.Errorf("palace: load the keyword index: %w", err)
	}
	return gen, nil
}

// readInts reads the row of query (it has one at most) into dest, leaving
// dest as it is when there is none.
func (db *DB) readInts(ctx context.Context, query string, arg any, dest ...any) error {
	return db.View(ctx, func(tx *sql.Tx) error {
		rows, err := db.readQuery(ctx, tx, query, arg)
		if err != nil {
			return err
		}
		return sqlrow.Each(rows, func() error { return rows.Scan(dest...) })
	})
}

// rankFromMemory ranks terms with the turns' keyword index into s, if it
// is loaded and current; it reports whether it did. A turn ranked but gone
// when its row is read (deleted meanwhile) is left out.
func (db *DB) rankFromMemory(ctx context.Context, s *search, terms []term) (bool, error) {
	if !db.kw.Active() {
		return false, nil
	}
	var gen int64
	if err := db.readInts(ctx, `SELECT value FROM palace_meta WHERE key = ?`, keyKeywordGen, &gen); err != nil {
		return false, err
	}
	hits, ok := db.kw.Best(gen, termWords(terms), kwindex.Filter{Namespace: s.ns, From: s.from, To: s.to}, s.Limit)
	if !ok {
		return false, nil
	}
	s.Floor = 1
	err := hitRows(ctx, db, `SELECT `+turnColumns+` FROM turns t WHERE t.seq IN (SELECT value FROM json_each(?))`, hits,
		func(rows *sql.Rows, add func(int64, engram.Turn)) error {
			return scanTurns(rows, func(t engram.Turn, _ float64) { add(t.Seq, t) })
		},
		func(t engram.Turn, score float64) {
			if s.Add(t, score) {
				s.Floor = score
			}
		})
	return err == nil, err
}

// termWords is the text of each term.
func termWords(terms []term) []string {
	words := make([]string, len(terms))
	for i, t := range terms {
		words[i] = t.Text
	}
	return words
}

// tableSource reads a table kept by change numbers for its keyword index:
// its seq column holds the change numbers, deletedKey counts its
// deletions, and changes reads up to limit rows changed after a change
// number, in change order, inside tx.
type tableSource struct {
	db         *DB
	table      string
	deletedKey string
	changes    func(ctx context.Context, tx *sql.Tx, after int64, limit int) ([]kwindex.Row, error)
}

// stateQuery reads the table's change number and, with the key as its
// argument, its deletion count.
func (s tableSource) stateQuery() string {
	return `SELECT (SELECT coalesce(max(seq), 0) FROM ` + s.table + `),
		coalesce((SELECT value FROM palace_meta WHERE key = ?), 0)`
}

// State reads the table's change number and deletion count.
func (s tableSource) State(ctx context.Context) (seq, deleted int64, err error) {
	err = s.db.readInts(ctx, s.stateQuery(), s.deletedKey, &seq, &deleted)
	return seq, deleted, err
}

// Changes reads up to limit rows changed after a change number, in change
// order, and the state of the table then.
func (s tableSource) Changes(ctx context.Context, after int64, limit int) (rows []kwindex.Row, seq, deleted int64, err error) {
	err = s.db.viewLoad(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, s.stateQuery(), s.deletedKey).Scan(&seq, &deleted); err != nil {
			return err
		}
		var err error
		rows, err = s.changes(ctx, tx, after, limit)
		return err
	})
	return rows, seq, deleted, err
}

// unitChanges reads up to limit units changed after a change number, with
// their text as their full-text index holds it.
func unitChanges(ctx context.Context, tx *sql.Tx, after int64, limit int) ([]kwindex.Row, error) {
	rows, err := tx.QueryContext(ctx, `SELECT n, seq, id, kind, namespace, start_ts, end_ts FROM units WHERE seq > ? ORDER BY seq LIMIT ?`, after, limit)
	if err != nil {
		return nil, err
	}
	changes, err := scanRows(rows, func(r *kwindex.Row, start, end *sql.NullInt64) []any {
		return []any{&r.Doc.Key, &r.Change, &r.ID, &r.Kind, &r.Doc.Namespace, start, end}
	}, nil)
	if err != nil {
		return nil, err
	}
	st := txStmts(ctx, tx)
	for i := range changes {
		text, err := unitText(ctx, st, changes[i].Doc.Key)
		if err != nil {
			return nil, err
		}
		if changes[i].Doc.Text, err = kwindex.IndexText(text); err != nil {
			return nil, err
		}
	}
	return changes, nil
}

// sceneChanges reads the scenes written after a change number, with the
// text scenes_fts holds of each (see PutScenes).
func sceneChanges(ctx context.Context, tx *sql.Tx, after int64, limit int) ([]kwindex.Row, error) {
	rows, err := tx.QueryContext(ctx, `SELECT n, seq, id, namespace, start_ts, end_ts, title, summary, participants
		FROM scenes WHERE seq > ? ORDER BY seq LIMIT ?`, after, limit)
	if err != nil {
		return nil, err
	}
	var (
		title, summary string
		parts          []string
	)
	return scanRows(rows, func(r *kwindex.Row, start, end *sql.NullInt64) []any {
		parts = nil
		return []any{&r.Doc.Key, &r.Change, &r.ID, &r.Doc.Namespace, start, end, &title, &summary, sqlrow.JSON(&parts)}
	}, func(r *kwindex.Row) (string, error) {
		return engram.Scene{Title: title, Summary: summary, Participants: parts}.SearchText(), nil
	})
}

// memoryChanges reads the memories written after a change number, with
// the text memories_fts holds of each (see putMemory). Superseded and
// wrong memories stay in the index, as they stay in memories_fts, whose
// statistics count them; a search leaves them out (Doc.Hidden).
func memoryChanges(ctx context.Context, tx *sql.Tx, after int64, limit int) ([]kwindex.Row, error) {
	rows, err := tx.QueryContext(ctx, `SELECT n, seq, id, namespace, ts, text, rationale, entities,
			superseded_by IS NOT NULL OR wrong <> 0
		FROM memories WHERE seq > ? ORDER BY seq LIMIT ?`, after, limit)
	if err != nil {
		return nil, err
	}
	var m engram.Memory
	return scanRows(rows, func(r *kwindex.Row, ts, _ *sql.NullInt64) []any {
		m.Entities = nil
		return []any{&r.Doc.Key, &r.Change, &r.ID, &r.Doc.Namespace, ts, &m.Text, &m.Rationale, sqlrow.JSON(&m.Entities), &r.Doc.Hidden}
	}, func(r *kwindex.Row) (string, error) {
		return m.SearchText(), nil
	})
}

// scanRows scans each of rows into a Row, through the destinations dest
// gives for it and for its doc's start and end (the end left out where
// there is none), and gives its doc the text of text (nil: none), as
// kwindex.IndexText makes it.
func scanRows(rows *sql.Rows, dest func(r *kwindex.Row, start, end *sql.NullInt64) []any, text func(r *kwindex.Row) (string, error)) ([]kwindex.Row, error) {
	var out []kwindex.Row
	err := sqlrow.Each(rows, func() error {
		var (
			r          kwindex.Row
			start, end sql.NullInt64
		)
		if err := rows.Scan(dest(&r, &start, &end)...); err != nil {
			return err
		}
		r.Doc.TS, r.Doc.HasTS = start.Int64, start.Valid
		r.Doc.End, r.Doc.HasEnd = end.Int64, end.Valid
		if text != nil {
			s, err := text(&r)
			if err != nil {
				return err
			}
			if r.Doc.Text, err = kwindex.IndexText(s); err != nil {
				return err
			}
		}
		out = append(out, r)
		return nil
	})
	return out, err
}

// unitHitsFromMemory reads the units of hits into UnitHits, in the order
// of hits; a unit gone meanwhile is left out.
func (db *DB) unitHitsFromMemory(ctx context.Context, hits []kwindex.Hit) ([]engram.UnitHit, error) {
	if len(hits) == 0 {
		return nil, nil
	}
	out := make([]engram.UnitHit, 0, len(hits))
	err := hitRows(ctx, db, `SELECT `+unitColumns+`, u.n FROM units u WHERE u.n IN (SELECT value FROM json_each(?))`, hits,
		func(rows *sql.Rows, add func(int64, engram.Unit)) error {
			return sqlrow.Each(rows, func() error {
				var n int64
				un, err := scanUnit(rows, &n)
				if err != nil {
					return err
				}
				add(n, un)
				return nil
			})
		},
		func(un engram.Unit, score float64) { out = append(out, engram.UnitHit{Unit: un, Score: score}) })
	if err != nil {
		return nil, err
	}
	return out, nil
}

// scoreUnitsFromMemory is ScoreUnits from the index; ok false when the
// index cannot answer.
func (db *DB) scoreUnitsFromMemory(ctx context.Context, terms []term, ids []string, kinds []string) ([]engram.UnitScore, bool, error) {
	hits, ok, err := db.ukw.Score(ctx, kinds, termWords(terms), ids)
	if err != nil || !ok {
		return nil, false, err
	}
	out := make([]engram.UnitScore, len(hits))
	for i, h := range hits {
		out[i] = engram.UnitScore{ID: h.ID, Kind: h.Kind, Score: h.Score}
	}
	return out, true, nil
}

// searchUnitsFromMemory is SearchUnits from the index.
func (db *DB) searchUnitsFromMemory(ctx context.Context, q engram.TextQuery, terms []term, kinds []string, limit int) ([]engram.UnitHit, bool, error) {
	hits, ok, err := db.ukw.Best(ctx, kinds, termWords(terms), spanFilter(q), limit)
	if err != nil || !ok {
		return nil, false, err
	}
	out, err := db.unitHitsFromMemory(ctx, hits)
	return out, err == nil, err
}

// spanFilter keeps the docs (units, scenes: a start and an end) of q's
// namespace that overlap [q.From, q.To), as the FTS5 searches filter them.
func spanFilter(q engram.TextQuery) kwindex.Filter {
	return kwindex.Filter{Namespace: q.Namespace, From: nanosOrZero(q.From), To: nanosOrZero(q.To), Spans: true}
}

// searchLayer is a search of a layer's keyword index, what (its name in
// errors) for q: the in-memory index's (fromMemory), or, where that has not
// loaded, FTS5's (fallback), each given q's terms and its limit.
func searchLayer[T any](q engram.TextQuery, what string,
	fromMemory func(terms []term, limit int) ([]T, bool, error), fallback func(terms []term, limit int) ([]T, error)) ([]T, error) {
	terms, err := kwindex.QueryTerms(q.Text)
	if err != nil || len(terms) == 0 {
		return nil, err
	}
	limit := min(max(q.Limit, 1), MaxSearchLimit)
	hits, ok, err := fromMemory(terms, limit)
	switch {
	case err != nil:
		return nil, fmt.Errorf("palace: %s: %w", what, err)
	case ok:
		return hits, nil
	}
	return fallback(terms, limit)
}

// searchFromMemory ranks the one kind of u (the scenes', the memories')
// for terms: the best limit docs that f passes, read by query (the keys
// as its argument) and scan, passed to add with their scores, best first;
// a row gone meanwhile is left out. ok is false when the index cannot
// answer.
func searchFromMemory[T any](ctx context.Context, db *DB, u *kwindex.SeqCache, terms []term, f kwindex.Filter, limit int,
	query string, scan func(*sql.Rows, func(int64, T)) error, add func(v T, score float64)) (bool, error) {
	hits, ok, err := u.Best(ctx, nil, termWords(terms), f, limit)
	if err != nil || !ok {
		return false, err
	}
	if err := hitRows(ctx, db, query, hits, scan, add); err != nil {
		return false, err
	}
	return true, nil
}

// searchScenesFromMemory is SearchScenes from the index; ok false when the
// index cannot answer.
func (db *DB) searchScenesFromMemory(ctx context.Context, q engram.TextQuery, terms []term, limit int) ([]engram.SceneHit, bool, error) {
	var out []engram.SceneHit
	ok, err := searchFromMemory(ctx, db, db.skw, terms, spanFilter(q), limit,
		// The row number comes where a search's rank would (scanRanked
		// reads it as a float64, exact for any row number).
		`SELECT `+sceneColumns+`, s.n FROM scenes s WHERE s.n IN (SELECT value FROM json_each(?))`,
		func(rows *sql.Rows, add func(int64, engram.Scene)) error {
			return scanScenes(rows, func(s engram.Scene, n float64) { add(int64(n), s) })
		},
		func(s engram.Scene, score float64) { out = append(out, engram.SceneHit{Scene: s, Score: score}) })
	if err != nil || !ok {
		return nil, false, err
	}
	return out, true, nil
}

// searchMemoriesFromMemory is SearchMemories from the index; ok false when
// the index cannot answer.
func (db *DB) searchMemoriesFromMemory(ctx context.Context, q engram.TextQuery, terms []term, limit int) ([]engram.MemoryHit, bool, error) {
	var out []engram.MemoryHit
	ok, err := searchFromMemory(ctx, db, db.mkw, terms, kwindex.Filter{Namespace: q.Namespace, From: nanosOrZero(q.From), To: nanosOrZero(q.To)}, limit,
		`SELECT `+memoryColumns+` FROM memories m WHERE m.n IN (SELECT value FROM json_each(?))`,
		func(rows *sql.Rows, add func(int64, engram.Memory)) error {
			return scanMemories(rows, func(n int64, m engram.Memory, _ float64) { add(n, m) })
		},
		func(m engram.Memory, score float64) {
			// Superseded or marked wrong since it was ranked: left out,
			// as FTS5 would have.
			if m.SupersededBy == "" && !m.Wrong {
				out = append(out, engram.MemoryHit{Memory: m, Score: score})
			}
		})
	if err != nil || !ok {
		return nil, false, err
	}
	return out, true, nil
}
