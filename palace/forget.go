package palace

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"time"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/facetline"
	"github.com/engram-dev/engram/internal/kwindex"
	"github.com/engram-dev/engram/internal/sqlrow"
)

// ForgetTurns removes the given turns from the palace in one transaction:
// their rows and every keyword index (turns_fts, trigram, CJK), their
// vectors of every model, the session and scene units they were in
// (re-indexed from the other turns, or deleted), the memories that stood
// only on them (deleted; memories with other sources keep those), the
// scenes holding them (deleted, open drafts too; with remake, made again
// of their other turns), the persona facets and
// graph statements whose evidence they were (the others kept; a chain's
// triples rebuilt, entities no statement names any more deleted), and the
// turn_skips rows. Each id is recorded in table forgotten, so that
// PutTurns never stores it again under a seq up to the tombstone's.
// Already forgotten or unknown ids cost nothing. The in-memory matrix of a
// loaded vector index is not touched: call VectorStore.Delete with Removed.
func (db *DB) ForgetTurns(ctx context.Context, turns []engram.ForgetTurn, at time.Time, remake engram.SceneRemaker) (engram.ForgetResult, error) {
	var res engram.ForgetResult
	if len(turns) == 0 {
		return res, nil
	}
	committed, err := db.erase(ctx, "forget turns", func(f *forgetter) error {
		res = engram.ForgetResult{}
		f.res, f.remake = &res, remake
		return f.run(turns, at)
	})
	if !committed {
		return engram.ForgetResult{}, err
	}
	return res, err
}

// erase runs fn, a forget or a redaction, in one write transaction that
// may change the turns' keyword index, then scrubs the files. committed is
// false when the transaction failed (nothing changed); an error with
// committed set is the scrub's.
func (db *DB) erase(ctx context.Context, op string, fn func(f *forgetter) error) (committed bool, err error) {
	kw := db.kw.Begin()
	err = db.Update(ctx, func(tx *sql.Tx) error {
		kw.Reset()
		trigramSeq, err := metaIn(ctx, tx, keyTrigramSeq)
		if err != nil {
			return err
		}
		if err := fn(&forgetter{ctx: ctx, tx: tx, res: &engram.ForgetResult{}, gone: map[string]bool{}, kw: kw, st: txStmts(ctx, tx), trigramSeq: trigramSeq}); err != nil {
			return err
		}
		return countKeywordChange(ctx, tx, kw)
	})
	db.kw.End(kw, err)
	if err != nil {
		return false, fmt.Errorf("palace: %s: %w", op, err)
	}
	if err := db.scrub(ctx); err != nil {
		return true, fmt.Errorf("palace: %s: %w", op, err)
	}
	return true, nil
}

// ftsTables are the palace's full-text indexes.
var ftsTables = []string{"turns_fts", "turns_trigram", "turns_cjk", "memories_fts", "scenes_fts",
	"unit_sessions_fts", "unit_scenes_fts", "kg_fts"}

// scrub leaves no trace of deleted rows in the files: a contentless FTS5
// index keeps a deleted row's terms until its segments merge, so each is
// merged ('optimize'); secure_delete zeroes the pages freed; and the WAL,
// which still holds the old pages, is checkpointed and truncated.
func (db *DB) scrub(ctx context.Context) error {
	err := db.Update(ctx, func(tx *sql.Tx) error {
		for _, t := range ftsTables {
			if _, err := tx.ExecContext(ctx, `INSERT INTO `+t+` (`+t+`) VALUES ('optimize')`); err != nil {
				return fmt.Errorf("optimize %s: %w", t, err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return db.checkpointTruncate(ctx)
}

// checkpointTruncate copies the WAL into the database and truncates it to
// nothing; readers in the way make it retry a few times, then give up
// quietly (the next checkpoint overwrites the frames).
func (db *DB) checkpointTruncate(ctx context.Context) error {
	for range 20 {
		var busy, logFrames, done int
		if err := db.w.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logFrames, &done); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
		if busy == 0 {
			return nil
		}
	}
	return nil
}

// forgetter is one ForgetTurns transaction.
type forgetter struct {
	ctx  context.Context
	tx   *sql.Tx
	res  *engram.ForgetResult
	gone map[string]bool // the forgotten turn ids
	kw   *kwindex.Change // the change of turns_fts
	// remake, when set, makes the deleted scenes again of their other turns.
	remake engram.SceneRemaker
	st     stmtFunc // the statements of re-indexing units, prepared once
	// trigramSeq is the substring index's watermark: a turn past it has
	// no row yet, and gets the one of its content as it then is
	// (secondaryThrough), so nothing deletes or writes one for it here.
	trigramSeq int64
}

func (f *forgetter) exec(q string, args ...any) error {
	_, err := f.tx.ExecContext(f.ctx, q, args...)
	return err
}

func (f *forgetter) run(turns []engram.ForgetTurn, at time.Time) error {
	var ids []string
	for _, t := range turns {
		f.gone[t.ID] = true
		ids = append(ids, t.ID)
		if err := f.exec(`INSERT INTO forgotten (id, seq, at) VALUES (?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET seq = max(seq, excluded.seq), at = excluded.at`, t.ID, t.Seq, at.UnixNano()); err != nil {
			return err
		}
	}
	rows, err := f.tx.QueryContext(f.ctx, `SELECT seq FROM turns WHERE id IN (SELECT value FROM json_each(?))`, sqlrow.JSONList(ids))
	if err != nil {
		return err
	}
	seqs, err := sqlrow.Ints(rows)
	if err != nil {
		return err
	}
	if err := f.turnRows(seqs); err != nil {
		return fmt.Errorf("turns: %w", err)
	}
	if err := f.memories(); err != nil {
		return fmt.Errorf("memories: %w", err)
	}
	if err := f.scenes(); err != nil {
		return fmt.Errorf("scenes: %w", err)
	}
	if err := f.facets(nil); err != nil {
		return fmt.Errorf("persona: %w", err)
	}
	if err := f.statements(); err != nil {
		return fmt.Errorf("graph: %w", err)
	}
	if err := f.exec(`DELETE FROM turn_skips WHERE id IN (SELECT value FROM json_each(?))`, sqlrow.JSONList(ids)); err != nil {
		return err
	}
	f.res.Removed = append(f.res.Removed, ids...)
	return f.vectors(f.res.Removed)
}

// turnRows deletes the turns' rows and index entries, and fixes the units
// they were in.
func (f *forgetter) turnRows(seqs []int64) error {
	units := map[int64]bool{}
	for _, seq := range seqs {
		if err := f.unindexTurn(seq); err != nil {
			return err
		}
		if err := f.exec(`DELETE FROM turns WHERE seq = ?`, seq); err != nil {
			return err
		}
		f.res.Turns++
		if err := f.unitsOf(seq, units); err != nil {
			return err
		}
		if err := f.exec(`DELETE FROM unit_turns WHERE turn_seq = ?`, seq); err != nil {
			return err
		}
	}
	return f.fixUnits(units)
}

// unindexTurn takes the turn of seq out of every keyword index.
func (f *forgetter) unindexTurn(seq int64) error {
	for _, table := range []string{"turns_fts", "turns_trigram", "turns_cjk"} {
		if table == "turns_trigram" && seq > f.trigramSeq {
			continue
		}
		if err := f.exec(`DELETE FROM `+table+` WHERE rowid = ?`, seq); err != nil {
			return err
		}
	}
	f.kw.Remove(seq)
	return nil
}

// unitsOf adds the units holding the turn of seq to units.
func (f *forgetter) unitsOf(seq int64, units map[int64]bool) error {
	rows, err := f.tx.QueryContext(f.ctx, `SELECT unit_n FROM unit_turns WHERE turn_seq = ?`, seq)
	if err != nil {
		return err
	}
	ns, err := sqlrow.Ints(rows)
	for _, n := range ns {
		units[n] = true
	}
	return err
}

// fixUnits re-indexes units from the turns they still hold, with a new
// change number (so that their vectors are made again), and deletes those
// left empty, in the order of their numbers.
func (f *forgetter) fixUnits(units map[int64]bool) error {
	ns := make([]int64, 0, len(units))
	for n := range units {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	for _, n := range ns {
		var id, kind string
		var left int64
		found, err := sqlrow.One(f.tx.QueryRowContext(f.ctx, `SELECT id, kind, (SELECT count(*) FROM unit_turns WHERE unit_n = ?1) FROM units WHERE n = ?1`, n),
			&id, &kind, &left)
		if err != nil {
			return err
		}
		if !found {
			continue
		}
		f.res.Units++
		// Deleted, or its vector, which holds the forgotten words' meaning,
		// goes now and is made again from the text left.
		f.res.Removed = append(f.res.Removed, id)
		if left == 0 {
			if err := f.deleteRow("units", unitFTS[kind], keyUnitsDeleted, n); err != nil {
				return err
			}
			continue
		}
		seq, err := nextSeq(f.ctx, f.tx, "units")
		if err != nil {
			return err
		}
		if err := f.exec(`UPDATE units SET `+unitCounts+`,
			start_ts = (SELECT min(t.ts) FROM unit_turns ut JOIN turns t ON t.seq = ut.turn_seq WHERE ut.unit_n = ?1),
			end_ts = (SELECT max(t.ts) FROM unit_turns ut JOIN turns t ON t.seq = ut.turn_seq WHERE ut.unit_n = ?1),
			seq = ?3
			WHERE n = ?1`, n, UnitTurnBytes, seq+1); err != nil {
			return err
		}
		if err := indexUnit(f.ctx, f.st, kind, n); err != nil {
			return err
		}
	}
	return nil
}

// deleteRow deletes row n of table (memories, scenes or units) with its
// entry in the full-text table fts, and counts the deletion (deletedKey)
// for the table's keyword index.
func (f *forgetter) deleteRow(table, fts, deletedKey string, n int64) error {
	if err := f.exec(`DELETE FROM `+fts+` WHERE rowid = ?`, n); err != nil {
		return err
	}
	if table == "memories" {
		if err := f.exec(qDeleteNearKeys, n); err != nil {
			return err
		}
	}
	if err := f.exec(`DELETE FROM `+table+` WHERE n = ?`, n); err != nil {
		return err
	}
	return countDeletion(f.ctx, f.tx, deletedKey)
}

// kept is ids less the forgotten ones.
func (f *forgetter) kept(ids []string) []string {
	return slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return f.gone[id] })
}

// citing is the condition that the JSON array column of table holds one
// of the forgotten turns; its argument is goneIDs.
func citing(table, column string) string {
	return `EXISTS (SELECT 1 FROM json_each(` + table + `.` + column + `) WHERE value IN (SELECT value FROM json_each(?)))`
}

// memories deletes the memories that stood only on forgotten turns and
// takes the forgotten turns out of the others' sources.
func (f *forgetter) memories() error {
	type mem struct {
		n       int64
		id      string
		sources []string
	}
	hits, err := sqlrow.Query(f.ctx, f.tx, `SELECT n, id, sources FROM memories WHERE `+citing("memories", "sources"), []any{f.goneIDs()},
		func(r *sql.Rows, m *mem) error { return r.Scan(&m.n, &m.id, sqlrow.JSON(&m.sources)) })
	if err != nil {
		return err
	}
	for _, m := range hits {
		seq, err := nextSeq(f.ctx, f.tx, "memories")
		if err != nil {
			return err
		}
		if kept := f.kept(m.sources); len(kept) > 0 {
			if err := f.exec(`UPDATE memories SET sources = ?, seq = ? WHERE n = ?`, sqlrow.JSONList(kept), seq+1, m.n); err != nil {
				return err
			}
			f.res.MemoriesKept++
			continue
		}
		if err := f.deleteRow("memories", "memories_fts", keyMemoriesDeleted, m.n); err != nil {
			return err
		}
		if err := f.exec(`DELETE FROM memory_merges WHERE memory = ?`, m.id); err != nil {
			return err
		}
		// What it superseded stands again, each with a change number of
		// its own.
		rows, err := f.tx.QueryContext(f.ctx, `SELECT n FROM memories WHERE superseded_by = ?`, m.id)
		if err != nil {
			return err
		}
		superseded, err := sqlrow.Ints(rows)
		if err != nil {
			return err
		}
		for _, n := range superseded {
			seq++
			if err := f.exec(`UPDATE memories SET superseded_by = NULL, seq = ? WHERE n = ?`, seq, n); err != nil {
				return err
			}
		}
		f.res.Memories++
		f.res.Removed = append(f.res.Removed, m.id)
	}
	return nil
}

// scenes deletes every scene that holds a forgotten turn, with its unit:
// its title and summary were made from the turn's words. With f.remake,
// the scenes' other turns are grouped into scenes again.
func (f *forgetter) scenes() error {
	type scene struct {
		n                      int64
		id, ns, session, turns string
		open                   bool
	}
	hits, err := sqlrow.Query(f.ctx, f.tx, `SELECT n, id, namespace, session, turns, draft IS NOT NULL FROM scenes
		WHERE `+citing("scenes", "turns")+` ORDER BY n`, []any{f.goneIDs()}, func(r *sql.Rows, s *scene) error {
		return r.Scan(&s.n, &s.id, &s.ns, &s.session, &s.turns, &s.open)
	})
	if err != nil {
		return err
	}
	for _, s := range hits {
		if err := f.deleteRow("scenes", "scenes_fts", keyScenesDeleted, s.n); err != nil {
			return err
		}
		f.res.Scenes++
		f.res.Removed = append(f.res.Removed, s.id)
		uid := unitID(engram.UnitScene, s.ns, s.session, s.id)
		var n int64
		if found, err := sqlrow.One(f.tx.QueryRowContext(f.ctx, `SELECT n FROM units WHERE id = ?`, uid), &n); err != nil || !found {
			if err != nil {
				return err
			}
			continue
		}
		if err := f.exec(`DELETE FROM unit_turns WHERE unit_n = ?`, n); err != nil {
			return err
		}
		if err := f.deleteRow("units", "unit_scenes_fts", keyUnitsDeleted, n); err != nil {
			return err
		}
		f.res.Units++
		f.res.Removed = append(f.res.Removed, uid)
	}
	if f.remake == nil || len(hits) == 0 {
		return nil
	}
	var writes []engram.SceneWrite
	for _, s := range hits {
		var left []engram.Turn
		err := queryTurns(f.ctx, f.tx, `SELECT `+turnColumns+` FROM turns t WHERE t.id IN (SELECT value FROM json_each(?)) ORDER BY t.seq`,
			[]any{s.turns}, func(t engram.Turn, _ float64) { left = append(left, t) })
		if err != nil {
			return err
		}
		if len(left) == 0 {
			continue
		}
		w, err := f.remake(left, s.open)
		if err != nil {
			return fmt.Errorf("make scene %s again: %w", s.id, err)
		}
		writes = append(writes, w...)
	}
	rows, err := prepareScenes(writes)
	if err != nil {
		return err
	}
	texts, err := insertScenes(f.ctx, f.tx, rows)
	if err != nil {
		return err
	}
	f.res.ScenesRemade = len(writes)
	return texts.index(f.ctx, f.tx)
}

// facets takes forgotten turns out of each facet's evidence, current value
// and history alike; a value left without evidence goes, and a facet left
// with none is deleted. only, when set, picks the facets (by speaker and
// key) to change; the others stay as they are.
func (f *forgetter) facets(only func(speaker, key string) bool) error {
	all, err := sqlrow.Query(f.ctx, f.tx, `SELECT `+facetColumns+` FROM persona_facets`, nil,
		func(r *sql.Rows, x *facet) error { return scanFacet(r.Scan, x) })
	if err != nil {
		return err
	}
	for _, x := range all {
		if only != nil && !only(x.speaker, x.key) {
			continue
		}
		kept, changed := facetline.Keep(x.line, f.kept)
		if !changed {
			continue
		}
		f.res.Facets++
		if len(kept) == 0 {
			err = f.exec(`DELETE FROM persona_facets WHERE namespace = ? AND speaker = ? AND facet = ? AND key = ?`,
				x.ns, x.speaker, x.facet, x.key)
		} else {
			x.line = kept
			err = putFacet(f.ctx, f.tx, x)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// statements takes forgotten turns out of the graph's statements, deletes
// those left without a source, rebuilds the chains that changed and
// deletes the entities nothing names any more.
func (f *forgetter) statements() error {
	type st struct {
		ns, chain, pred string
		at, obj         int64
		sources         []string
	}
	hits, err := sqlrow.Query(f.ctx, f.tx, `SELECT namespace, chain, at, predicate, object, sources FROM kg_statements
		WHERE `+citing("kg_statements", "sources"), []any{f.goneIDs()}, func(r *sql.Rows, s *st) error {
		return r.Scan(&s.ns, &s.chain, &s.at, &s.pred, &s.obj, sqlrow.JSON(&s.sources))
	})
	if err != nil {
		return err
	}
	chains := map[chainKey]bool{}
	var order []chainKey
	for _, s := range hits {
		f.res.Facts++
		where := `WHERE namespace = ? AND chain = ? AND at = ? AND predicate = ? AND object = ?`
		if kept := f.kept(s.sources); len(kept) == 0 {
			err = f.exec(`DELETE FROM kg_statements `+where, s.ns, s.chain, s.at, s.pred, s.obj)
		} else {
			err = f.exec(`UPDATE kg_statements SET sources = ? `+where, sqlrow.JSONList(kept), s.ns, s.chain, s.at, s.pred, s.obj)
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
		before, err := chainTripleIDs(f.ctx, f.tx, k)
		if err != nil {
			return err
		}
		if err := rebuildChain(f.ctx, f.tx, k.ns, k.chain, k.single); err != nil {
			return err
		}
		after, err := chainTripleIDs(f.ctx, f.tx, k)
		if err != nil {
			return err
		}
		for _, id := range before {
			if !slices.Contains(after, id) {
				f.res.Removed = append(f.res.Removed, id)
			}
		}
	}
	if len(order) == 0 {
		return nil
	}
	// Entities no statement names: their names were the forgotten words.
	_, err = f.deleteUnnamed(`1`)
	return err
}

// unnamed selects the entities no statement or triple names.
const unnamed = `NOT EXISTS (SELECT 1 FROM kg_statements s WHERE s.subject = e.n OR s.object = e.n)
	AND NOT EXISTS (SELECT 1 FROM kg_triples t WHERE t.subject = e.n OR t.object = e.n)`

// deleteUnnamed deletes the entities that cond (a condition on
// kg_entities e, with args) selects and nothing names, with their
// aliases, and returns how many.
func (f *forgetter) deleteUnnamed(cond string, args ...any) (int, error) {
	orphans := `SELECT n FROM kg_entities e WHERE ` + unnamed + ` AND (` + cond + `)`
	if err := f.exec(`DELETE FROM kg_aliases WHERE entity IN (`+orphans+`)`, args...); err != nil {
		return 0, err
	}
	res, err := f.tx.ExecContext(f.ctx, `DELETE FROM kg_entities WHERE n IN (`+orphans+`)`, args...)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// goneIDs are the forgotten (or redacted) turn ids, as one JSON array.
func (f *forgetter) goneIDs() string {
	return sqlrow.JSONList(slices.Collect(maps.Keys(f.gone)))
}

// vectors deletes the vectors of every model of the removed items.
func (f *forgetter) vectors(ids []string) error {
	return f.exec(`DELETE FROM vectors WHERE id IN (SELECT value FROM json_each(?))`, sqlrow.JSONList(ids))
}

// ForgottenIDs returns which of ids the palace records as forgotten.
func (db *DB) ForgottenIDs(ctx context.Context, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	err := db.View(ctx, func(tx *sql.Tx) error {
		found, err := forgottenAmong(ctx, tx, ids)
		for _, id := range found {
			out[id] = true
		}
		return err
	})
	return out, err
}

// forgottenAmong returns which of ids table forgotten holds.
func forgottenAmong(ctx context.Context, tx *sql.Tx, ids []string) ([]string, error) {
	return sqlrow.Strings(ctx, tx, `SELECT id FROM forgotten WHERE id IN (SELECT value FROM json_each(?))`, sqlrow.JSONList(ids))
}

// ForgottenLeft returns the forgotten ids that some index of the palace
// still holds (a turn row, a vector, a memory's or statement's source, a
// scene, a facet's evidence), with where: what the doctor checks. It
// returns at most limit of them.
func (db *DB) ForgottenLeft(ctx context.Context, limit int) ([]string, error) {
	return viewList(ctx, db, "forgotten left", readStrings, `SELECT id || ': ' || what FROM (SELECT f.id, CASE
			WHEN EXISTS (SELECT 1 FROM turns t WHERE t.id = f.id AND t.seq <= f.seq) THEN 'a turn row'
			WHEN EXISTS (SELECT 1 FROM vectors v WHERE v.id = f.id AND NOT EXISTS (SELECT 1 FROM turns t WHERE t.id = f.id)) THEN 'a vector'
			WHEN EXISTS (SELECT 1 FROM memories m, json_each(m.sources) j WHERE j.value = f.id) THEN 'a memory''s sources'
			WHEN EXISTS (SELECT 1 FROM scenes s, json_each(s.turns) j WHERE j.value = f.id) THEN 'a scene'
			WHEN EXISTS (SELECT 1 FROM kg_statements s, json_each(s.sources) j WHERE j.value = f.id) THEN 'a graph statement'
			WHEN EXISTS (SELECT 1 FROM kg_triples s, json_each(s.sources) j WHERE j.value = f.id) THEN 'a graph triple'
			WHEN EXISTS (SELECT 1 FROM persona_facets p, json_each(p.evidence) j WHERE j.value = f.id) THEN 'a persona facet'
			ELSE '' END AS what FROM forgotten f) WHERE what != '' LIMIT ?`, limit)
}

// TurnIDs returns the ids of the stored turns of namespace (every
// namespace when ""), of session only when it is set, in seq order.
func (db *DB) TurnIDs(ctx context.Context, namespace, session string) ([]string, error) {
	return viewList(ctx, db, "turn ids", readStrings,
		`SELECT id FROM turns WHERE (?1 = '' OR namespace = ?1) AND (?2 = '' OR session = ?2) ORDER BY seq`, namespace, session)
}
