package palace

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/kwindex"
)

// ForgetTurn names a forgotten turn: its id and the archive's seq of its
// tombstone.
type ForgetTurn struct {
	ID  string
	Seq int64
}

// ForgetResult says what ForgetTurns removed from the palace.
type ForgetResult struct {
	Turns        int // turn rows deleted
	Memories     int // memories deleted: every source was forgotten
	MemoriesKept int // memories that lost some sources and kept others
	Scenes       int // scenes deleted
	ScenesRemade int // scenes made again of the deleted scenes' other turns
	Facts        int // knowledge-graph statements deleted or changed
	Facets       int // persona facets deleted or changed
	Units        int // retrieval units deleted or re-indexed
	// Removed are the ids of every item deleted whose vectors (of any
	// model) went with it, for an external index to delete too: the turns,
	// memories, scenes, units and triples.
	Removed []string
}

// SceneRemaker groups the turns left of a scene that a forget deleted
// into scenes again (pipeline.SceneConfig.Regroup), in seq order; open says
// that the deleted scene was its session's open one, whose draft the last
// write must carry for the scene job to go on with it.
type SceneRemaker func(turns []engram.Turn, open bool) ([]engram.SceneWrite, error)

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
func (db *DB) ForgetTurns(ctx context.Context, turns []ForgetTurn, at time.Time, remake SceneRemaker) (ForgetResult, error) {
	var res ForgetResult
	if len(turns) == 0 {
		return res, nil
	}
	committed, err := db.erase(ctx, "forget turns", func(f *forgetter) error {
		res = ForgetResult{}
		f.res, f.remake = &res, remake
		return f.run(turns, at)
	})
	if !committed {
		return ForgetResult{}, err
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
		if err := fn(&forgetter{ctx: ctx, tx: tx, res: &ForgetResult{}, gone: map[string]bool{}, kw: kw, st: txStmts(ctx, tx), trigramSeq: trigramSeq}); err != nil {
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
	res  *ForgetResult
	gone map[string]bool // the forgotten turn ids
	kw   *kwindex.Change // the change of turns_fts
	// remake, when set, makes the deleted scenes again of their other turns.
	remake SceneRemaker
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

func (f *forgetter) run(turns []ForgetTurn, at time.Time) error {
	var ids []string
	for _, t := range turns {
		f.gone[t.ID] = true
		ids = append(ids, t.ID)
		if err := f.exec(`INSERT INTO forgotten (id, seq, at) VALUES (?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET seq = max(seq, excluded.seq), at = excluded.at`, t.ID, t.Seq, at.UnixNano()); err != nil {
			return err
		}
	}
	seqs, err := f.turnSeqs(ids)
	if err != nil {
		return err
	}
	if err := f.turnRows(seqs); err != nil {
		return fmt.Errorf("turns: %w", err)
	}
	if err := f.memories(ids); err != nil {
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
	for _, id := range ids {
		if err := f.exec(`DELETE FROM turn_skips WHERE id = ?`, id); err != nil {
			return err
		}
	}
	f.res.Removed = append(f.res.Removed, ids...)
	return f.vectors(f.res.Removed)
}

// turnSeqs maps the stored ones among ids to their palace seqs.
func (f *forgetter) turnSeqs(ids []string) ([]int64, error) {
	var seqs []int64
	for _, id := range ids {
		var seq int64
		err := f.tx.QueryRowContext(f.ctx, `SELECT seq FROM turns WHERE id = ?`, id).Scan(&seq)
		if err == sql.ErrNoRows {
			continue
		}
		if err != nil {
			return nil, err
		}
		seqs = append(seqs, seq)
	}
	return seqs, nil
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
	ns, err := scanInts(rows)
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
		err := f.tx.QueryRowContext(f.ctx, `SELECT id, kind, (SELECT count(*) FROM unit_turns WHERE unit_n = ?1) FROM units WHERE n = ?1`, n).
			Scan(&id, &kind, &left)
		if err == sql.ErrNoRows {
			continue
		}
		if err != nil {
			return err
		}
		f.res.Units++
		if err := f.exec(`DELETE FROM `+unitFTS[kind]+` WHERE rowid = ?`, n); err != nil {
			return err
		}
		if left == 0 {
			if err := f.exec(`DELETE FROM units WHERE n = ?`, n); err != nil {
				return err
			}
			if err := countDeletion(f.ctx, f.tx, keyUnitsDeleted); err != nil {
				return err
			}
			f.res.Removed = append(f.res.Removed, id)
			continue
		}
		seq, err := nextSeq(f.ctx, f.tx, "units")
		if err != nil {
			return err
		}
		if err := f.exec(`UPDATE units SET
			turns = (SELECT count(*) FROM unit_turns WHERE unit_n = ?1),
			bytes = coalesce((SELECT sum(length(t.speaker) + 3 + min(length(CAST(t.content AS BLOB)), ?2))
				FROM unit_turns ut JOIN turns t ON t.seq = ut.turn_seq WHERE ut.unit_n = ?1), 0),
			start_ts = (SELECT min(t.ts) FROM unit_turns ut JOIN turns t ON t.seq = ut.turn_seq WHERE ut.unit_n = ?1),
			end_ts = (SELECT max(t.ts) FROM unit_turns ut JOIN turns t ON t.seq = ut.turn_seq WHERE ut.unit_n = ?1),
			seq = ?3
			WHERE n = ?1`, n, UnitTurnBytes, seq+1); err != nil {
			return err
		}
		if err := indexUnit(f.ctx, f.st, kind, n); err != nil {
			return err
		}
		// Its vector holds the forgotten words' meaning: it goes now and
		// is made again from the text left.
		f.res.Removed = append(f.res.Removed, id)
	}
	return nil
}

// sourcesOf decodes a JSON array of turn ids and splits it into those
// kept and whether any was forgotten.
func (f *forgetter) split(raw string) (kept []string, hit bool, err error) {
	var all []string
	if err := json.Unmarshal([]byte(raw), &all); err != nil {
		return nil, false, err
	}
	for _, s := range all {
		if f.gone[s] {
			hit = true
		} else {
			kept = append(kept, s)
		}
	}
	return kept, hit, nil
}

// memories deletes the memories that stood only on forgotten turns and
// takes the forgotten turns out of the others' sources.
func (f *forgetter) memories(ids []string) error {
	q := `SELECT n, id, sources FROM memories WHERE EXISTS (SELECT 1 FROM json_each(memories.sources) WHERE value IN (?` +
		strings.Repeat(",?", len(ids)-1) + `))`
	type mem struct {
		n       int64
		id, raw string
	}
	hits, err := queryRows(f.ctx, f.tx, q, anys(ids), func(r *sql.Rows, m *mem) error { return r.Scan(&m.n, &m.id, &m.raw) })
	if err != nil {
		return err
	}
	for _, m := range hits {
		kept, _, err := f.split(m.raw)
		if err != nil {
			return err
		}
		seq, err := nextSeq(f.ctx, f.tx, "memories")
		if err != nil {
			return err
		}
		if len(kept) > 0 {
			raw, _ := json.Marshal(kept)
			if err := f.exec(`UPDATE memories SET sources = ?, seq = ? WHERE n = ?`, string(raw), seq+1, m.n); err != nil {
				return err
			}
			f.res.MemoriesKept++
			continue
		}
		for _, q := range []string{
			`DELETE FROM memories_fts WHERE rowid = ?1`,
			`DELETE FROM memories WHERE n = ?1`,
		} {
			if err := f.exec(q, m.n); err != nil {
				return err
			}
		}
		if err := f.exec(`DELETE FROM memory_merges WHERE memory = ?`, m.id); err != nil {
			return err
		}
		if err := countDeletion(f.ctx, f.tx, keyMemoriesDeleted); err != nil {
			return err
		}
		// What it superseded stands again, each with a change number of
		// its own.
		for {
			var n int64
			err := f.tx.QueryRowContext(f.ctx, `SELECT n FROM memories WHERE superseded_by = ? LIMIT 1`, m.id).Scan(&n)
			if err == sql.ErrNoRows {
				break
			}
			if err != nil {
				return err
			}
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
	ids := f.goneIDs()
	q := `SELECT n, id, namespace, session, turns, draft IS NOT NULL FROM scenes WHERE EXISTS (SELECT 1 FROM json_each(scenes.turns) WHERE value IN (?` +
		strings.Repeat(",?", len(ids)-1) + `)) ORDER BY n`
	type scene struct {
		n                      int64
		id, ns, session, turns string
		open                   bool
	}
	hits, err := queryRows(f.ctx, f.tx, q, anys(ids), func(r *sql.Rows, s *scene) error {
		return r.Scan(&s.n, &s.id, &s.ns, &s.session, &s.turns, &s.open)
	})
	if err != nil {
		return err
	}
	for _, s := range hits {
		if err := f.exec(`DELETE FROM scenes_fts WHERE rowid = ?`, s.n); err != nil {
			return err
		}
		if err := f.exec(`DELETE FROM scenes WHERE n = ?`, s.n); err != nil {
			return err
		}
		if err := countDeletion(f.ctx, f.tx, keyScenesDeleted); err != nil {
			return err
		}
		f.res.Scenes++
		f.res.Removed = append(f.res.Removed, s.id)
		uid := unitID(engram.UnitScene, s.ns, s.session, s.id)
		var n int64
		err := f.tx.QueryRowContext(f.ctx, `SELECT n FROM units WHERE id = ?`, uid).Scan(&n)
		if err == sql.ErrNoRows {
			continue
		}
		if err != nil {
			return err
		}
		for _, q := range []string{`DELETE FROM unit_turns WHERE unit_n = ?1`, `DELETE FROM unit_scenes_fts WHERE rowid = ?1`, `DELETE FROM units WHERE n = ?1`} {
			if err := f.exec(q, n); err != nil {
				return err
			}
		}
		if err := countDeletion(f.ctx, f.tx, keyUnitsDeleted); err != nil {
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
	type facet struct {
		ns, speaker, facet, key, value, evid, hist string
		since                                      sql.NullInt64
	}
	all, err := queryRows(f.ctx, f.tx, `SELECT namespace, speaker, facet, key, value, since, evidence, history FROM persona_facets`, nil,
		func(r *sql.Rows, x *facet) error {
			return r.Scan(&x.ns, &x.speaker, &x.facet, &x.key, &x.value, &x.since, &x.evid, &x.hist)
		})
	if err != nil {
		return err
	}
	for _, x := range all {
		if only != nil && !only(x.speaker, x.key) {
			continue
		}
		var past []engram.FacetChange
		if err := json.Unmarshal([]byte(x.hist), &past); err != nil {
			return err
		}
		var line []observation
		for _, p := range past {
			line = append(line, observation{p.Value, p.From, p.Evidence})
		}
		cur := observation{Value: x.value, From: fromNanos(x.since)}
		if err := json.Unmarshal([]byte(x.evid), &cur.Evidence); err != nil {
			return err
		}
		line = append(line, cur)
		changed := false
		var kept []observation
		for _, o := range line {
			var ev []string
			for _, e := range o.Evidence {
				if f.gone[e] {
					changed = true
				} else {
					ev = append(ev, e)
				}
			}
			if len(ev) > 0 {
				o.Evidence = ev
				kept = append(kept, o)
			}
		}
		if !changed {
			continue
		}
		f.res.Facets++
		if err := f.exec(`DELETE FROM persona_facets WHERE namespace = ? AND speaker = ? AND facet = ? AND key = ?`,
			x.ns, x.speaker, x.facet, x.key); err != nil {
			return err
		}
		if len(kept) == 0 {
			continue
		}
		c := kept[len(kept)-1]
		hist := make([]engram.FacetChange, 0, len(kept)-1)
		for i, o := range kept[:len(kept)-1] {
			hist = append(hist, engram.FacetChange{Value: o.Value, From: o.From, To: kept[i+1].From, Evidence: o.Evidence})
		}
		rawHist, _ := json.Marshal(hist)
		rawEvid, _ := json.Marshal(c.Evidence)
		if err := f.exec(`INSERT INTO persona_facets (namespace, speaker, facet, key, value, since, evidence, history, updated)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, x.ns, x.speaker, x.facet, x.key, c.Value, c.From.UnixNano(),
			string(rawEvid), string(rawHist), c.From.UnixNano()); err != nil {
			return err
		}
	}
	return nil
}

// statements takes forgotten turns out of the graph's statements, deletes
// those left without a source, rebuilds the chains that changed and
// deletes the entities nothing names any more.
func (f *forgetter) statements() error {
	ids := f.goneIDs()
	q := `SELECT namespace, chain, at, predicate, object, sources FROM kg_statements
		WHERE EXISTS (SELECT 1 FROM json_each(kg_statements.sources) WHERE value IN (?` + strings.Repeat(",?", len(ids)-1) + `))`
	type st struct {
		ns, chain, pred, raw string
		at, obj              int64
	}
	hits, err := queryRows(f.ctx, f.tx, q, anys(ids), func(r *sql.Rows, s *st) error {
		return r.Scan(&s.ns, &s.chain, &s.at, &s.pred, &s.obj, &s.raw)
	})
	if err != nil {
		return err
	}
	chains := map[chainKey]bool{}
	var order []chainKey
	for _, s := range hits {
		kept, _, err := f.split(s.raw)
		if err != nil {
			return err
		}
		f.res.Facts++
		where := `WHERE namespace = ? AND chain = ? AND at = ? AND predicate = ? AND object = ?`
		if len(kept) == 0 {
			err = f.exec(`DELETE FROM kg_statements `+where, s.ns, s.chain, s.at, s.pred, s.obj)
		} else {
			raw, _ := json.Marshal(kept)
			err = f.exec(`UPDATE kg_statements SET sources = ? `+where, string(raw), s.ns, s.chain, s.at, s.pred, s.obj)
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
		before, err := f.tripleIDs(k)
		if err != nil {
			return err
		}
		if err := rebuildChain(f.ctx, f.tx, k.ns, k.chain, k.single); err != nil {
			return err
		}
		after, err := f.tripleIDs(k)
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

// goneIDs are the forgotten (or redacted) turn ids.
func (f *forgetter) goneIDs() []string {
	ids := make([]string, 0, len(f.gone))
	for id := range f.gone {
		ids = append(ids, id)
	}
	return ids
}

func (f *forgetter) tripleIDs(k chainKey) ([]string, error) {
	return queryStrings(f.ctx, f.tx, `SELECT id FROM kg_triples WHERE namespace = ? AND chain = ?`, k.ns, k.chain)
}

// vectors deletes the vectors of every model of the removed items.
func (f *forgetter) vectors(ids []string) error {
	for _, id := range ids {
		if err := f.exec(`DELETE FROM vectors WHERE id = ?`, id); err != nil {
			return err
		}
	}
	return nil
}

// ForgottenIDs returns which of ids the palace records as forgotten.
func (db *DB) ForgottenIDs(ctx context.Context, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	err := db.View(ctx, func(tx *sql.Tx) error {
		for _, id := range ids {
			var one int
			err := tx.QueryRowContext(ctx, `SELECT 1 FROM forgotten WHERE id = ?`, id).Scan(&one)
			if err == sql.ErrNoRows {
				continue
			}
			if err != nil {
				return err
			}
			out[id] = true
		}
		return nil
	})
	return out, err
}

// ForgottenLeft returns the forgotten ids that some index of the palace
// still holds (a turn row, a vector, a memory's or statement's source, a
// scene, a facet's evidence), with where: what the doctor checks. It
// returns at most limit of them.
func (db *DB) ForgottenLeft(ctx context.Context, limit int) ([]string, error) {
	var out []string
	err := db.View(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = queryStrings(ctx, tx, `SELECT id || ': ' || what FROM (SELECT f.id, CASE
			WHEN EXISTS (SELECT 1 FROM turns t WHERE t.id = f.id AND t.seq <= f.seq) THEN 'a turn row'
			WHEN EXISTS (SELECT 1 FROM vectors v WHERE v.id = f.id AND NOT EXISTS (SELECT 1 FROM turns t WHERE t.id = f.id)) THEN 'a vector'
			WHEN EXISTS (SELECT 1 FROM memories m, json_each(m.sources) j WHERE j.value = f.id) THEN 'a memory''s sources'
			WHEN EXISTS (SELECT 1 FROM scenes s, json_each(s.turns) j WHERE j.value = f.id) THEN 'a scene'
			WHEN EXISTS (SELECT 1 FROM kg_statements s, json_each(s.sources) j WHERE j.value = f.id) THEN 'a graph statement'
			WHEN EXISTS (SELECT 1 FROM kg_triples s, json_each(s.sources) j WHERE j.value = f.id) THEN 'a graph triple'
			WHEN EXISTS (SELECT 1 FROM persona_facets p, json_each(p.evidence) j WHERE j.value = f.id) THEN 'a persona facet'
			ELSE '' END AS what FROM forgotten f) WHERE what != '' LIMIT ?`, limit)
		return err
	})
	return out, err
}

// TurnIDs returns the ids of the stored turns of namespace (every
// namespace when ""), of session only when it is set, in seq order.
func (db *DB) TurnIDs(ctx context.Context, namespace, session string) ([]string, error) {
	var ids []string
	err := db.View(ctx, func(tx *sql.Tx) error {
		var err error
		ids, err = queryStrings(ctx, tx, `SELECT id FROM turns WHERE (?1 = '' OR namespace = ?1) AND (?2 = '' OR session = ?2) ORDER BY seq`,
			namespace, session)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("palace: turn ids: %w", err)
	}
	return ids, nil
}
