package palace

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/kgchain"
	"github.com/engram-dev/engram/internal/kwindex"
	"github.com/engram-dev/engram/internal/memrule"
	"github.com/engram-dev/engram/internal/neardup"
	"github.com/engram-dev/engram/internal/sqlrow"
)

// Near-duplicate merging: a memory whose content words overlap an active
// memory's of the same namespace, type and subject by at least
// nearDupJaccard (intersection over union) is the same memory said again.
const nearDupJaccard = memrule.NearJaccard

// PutMemories stores L1 memories from a worker's batch and advances the
// worker's watermark to throughSeq, in one transaction.
//
// For each memory, in order: a memory whose ID is stored gains the sources
// it lacks (so replaying a batch changes nothing); one that near-duplicates
// an active memory (same namespace, type and subject, and the same content
// words or a Jaccard overlap of at least 0.8) is merged into it: its sources
// are added and the higher importance kept; otherwise it is inserted. An
// inserted memory with a relation of a single-valued predicate (engram.
// SingleValued) supersedes the active memories of the same subject and
// predicate with another object, and "likes X" and "dislikes X" supersede
// each other; of two contradicting memories the one with the later
// ValidFrom (TS when unset) stays active. Superseded memories are kept with
// superseded_by set.
//
// Errors: EINVALID naming the field for a memory without id, namespace,
// type or text, or with text over 4,000 bytes.
func (db *DB) PutMemories(ctx context.Context, worker string, mems []engram.Memory, throughSeq int64) (engram.MemoryResult, error) {
	var res engram.MemoryResult
	for i, m := range mems {
		if err := memrule.Check(m, i, func(t time.Time) error { _, err := nanos(t); return err }); err != nil {
			return res, err
		}
	}
	// A POST waits for one memory, not a batch (updateYielding). A crash
	// between two transactions leaves the watermark before the batch: it
	// is extracted again, and the memories stored before are found by id
	// (replayed), not stored twice.
	err := db.updateYielding(ctx, len(mems), func(tx *sql.Tx, from int, yield func(i int) bool) (int, error) {
		seq, err := nextSeq(ctx, tx, "memories")
		if err != nil {
			return 0, err
		}
		for i := from; i < len(mems); i++ {
			if yield(i) {
				return i, nil
			}
			m := mems[i]
			what, err := db.putMemory(ctx, tx, m, &seq)
			if err != nil {
				return 0, fmt.Errorf("memory %s: %w", m.ID, err)
			}
			switch what {
			case memInserted:
				res.Inserted++
			case memMerged:
				res.Merged++
			case memSuperseding:
				res.Inserted++
				res.Superseded++
			}
		}
		return len(mems), setWorkerSeq(ctx, tx, worker, throughSeq)
	})
	if err != nil {
		return engram.MemoryResult{}, fmt.Errorf("palace: put memories: %w", err)
	}
	return res, nil
}

// updateYielding applies the n items of a layer job's batch in one write
// transaction, unless a write that an acknowledgement waits for (the turn
// index) queues for the writer meanwhile: then what was applied so far
// commits, that write goes, and the rest follows in another transaction,
// and so on. Each transaction calls apply with its first item and yield,
// which reports whether it should end before item i (never before its
// first); apply returns the item it ended before, n when it applied the
// last, and then moves the worker's watermark in the same transaction.
func (db *DB) updateYielding(ctx context.Context, n int, apply func(tx *sql.Tx, from int, yield func(i int) bool) (int, error)) error {
	for next := 0; ; {
		var stop int
		err := db.Update(ctx, func(tx *sql.Tx) (err error) {
			stop, err = apply(tx, next, func(i int) bool { return i > next && db.yieldWriter() })
			return err
		})
		if err != nil {
			return err
		}
		if next = stop; next >= n {
			return nil
		}
	}
}

type putOutcome int

const (
	memKnown putOutcome = iota
	memInserted
	memMerged
	memSuperseding
)

// storedMemory is the part of a stored memory that merging needs.
type storedMemory struct {
	n          int64
	id         string
	sources    []string
	importance float64
}

// The statements of storing a memory, prepared once (writeStatements).
const (
	qInsertMemory = `INSERT INTO memories
		(id, namespace, type, subject, text, rationale, entities, importance, ts, valid_from, sources,
		 rel_subject, rel_predicate, rel_object, rel_subj_norm, rel_obj_norm, dedup_key, seq)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	qInsertMemoryFTS = `INSERT INTO memories_fts (rowid, text) VALUES (?, ?)`
	// qNearDuplicates reads the group's memories under the key ?2 with ?3
	// to ?4 words, newest first, walking the key's rows in the table's
	// order; the group's hash ?1 is checked against the row's namespace,
	// type and subject.
	qNearDuplicates = `SELECT m.n, m.dedup_key FROM memory_nearkeys k CROSS JOIN memories m
		WHERE k.grp = ?1 AND k.tok = ?2 AND k.size BETWEEN ?3 AND ?4
			AND m.n = k.n AND m.superseded_by IS NULL AND m.namespace = ?5 AND m.type = ?6 AND m.subject = ?7
		ORDER BY k.n DESC LIMIT ?8`
	qLoadMemory   = `SELECT n, id, sources, importance FROM memories `
	whereMemoryID = `WHERE id = ?`
	whereMergedID = `WHERE id = (SELECT memory FROM memory_merges WHERE id = ?)`
	whereDedupKey = `WHERE namespace = ? AND dedup_key = ? AND superseded_by IS NULL ORDER BY n LIMIT 1`
	whereMemoryN  = `WHERE n = ?`
)

// writeStatements are the writes prepared when the palace opens: those
// of storing memories, the most frequent statements of the layer jobs
// (compiling them was a sixth of the jobs' CPU).
var writeStatements = []string{qInsertMemory, qInsertMemoryFTS, qNearDuplicates, qInsertNearKeys,
	qLoadMemory + whereMemoryID, qLoadMemory + whereMergedID, qLoadMemory + whereDedupKey, qLoadMemory + whereMemoryN,
	qInsertTurn, qInsertTurnFTS, qInsertTurnTrigram, qInsertTurnCJK, qAnyForgotten, qSetMeta,
	qOpenSessionUnit, qNewSessionUnit, qAddUnitTurn, qUpdateSessionUnit, qNextUnitSeq, qUnitText,
	qDeleteText("unit_sessions_fts"), qInsertText("unit_sessions_fts"), qStale, qUnstale, qStaleUnits}

// nearDuplicateIn is the near-duplicate of m among the active memories,
// inside tx.
func (db *DB) nearDuplicateIn(ctx context.Context, tx *sql.Tx, m engram.Memory, words []string) (*storedMemory, error) {
	q, err := db.writeStmt(ctx, tx, qNearDuplicates)
	if err != nil {
		return nil, err
	}
	hit, err := nearDuplicate(ctx, q, m, words)
	if err != nil || hit.n == 0 {
		return nil, err
	}
	return db.loadMemory(ctx, tx, whereMemoryN, hit.n)
}

func (db *DB) putMemory(ctx context.Context, tx *sql.Tx, m engram.Memory, seq *int64) (putOutcome, error) {
	// Replayed: the same memory from the same batch, stored or merged.
	for _, q := range []string{whereMemoryID, whereMergedID} {
		if old, err := db.loadMemory(ctx, tx, q, m.ID); err != nil {
			return 0, err
		} else if old != nil {
			return memKnown, mergeInto(ctx, tx, old, m, seq)
		}
	}
	words := memrule.ContentWords(m.Text)
	key := memrule.DedupKey(m, words)
	old, err := db.loadMemory(ctx, tx, whereDedupKey, m.Namespace, key)
	if err != nil {
		return 0, err
	}
	if old == nil {
		if old, err = db.nearDuplicateIn(ctx, tx, m, words); err != nil {
			return 0, err
		}
	}
	if old != nil {
		if _, err := tx.ExecContext(ctx, `INSERT INTO memory_merges (id, memory) VALUES (?, ?) ON CONFLICT DO NOTHING`, m.ID, old.id); err != nil {
			return 0, err
		}
		return memMerged, mergeInto(ctx, tx, old, m, seq)
	}

	text, err := kwindex.IndexText(m.SearchText())
	if err != nil {
		return 0, err
	}
	ents, _ := json.Marshal(nonNil(m.Entities))
	srcs, _ := json.Marshal(memrule.CapSources(nonNil(m.Sources)))
	ts, _ := nanos(m.TS)
	vf, _ := nanos(m.ValidFrom)
	var rs, rp, ro, rsn, ron any
	if r := m.Relation; r != nil && r.Subject != "" && r.Predicate != "" && r.Object != "" {
		rs, rp, ro, rsn, ron = r.Subject, r.Predicate, r.Object, kgchain.NormName(r.Subject), kgchain.NormName(r.Object)
	}
	*seq++
	ins, err := db.writeStmt(ctx, tx, qInsertMemory)
	if err != nil {
		return 0, err
	}
	out, err := ins.ExecContext(ctx,
		m.ID, m.Namespace, m.Type, m.Subject, m.Text, m.Rationale, string(ents), memrule.Importance(m.Importance), ts, vf,
		string(srcs), rs, rp, ro, rsn, ron, key, *seq)
	if err != nil {
		return 0, err
	}
	n, err := out.LastInsertId()
	if err != nil {
		return 0, err
	}
	fts, err := db.writeStmt(ctx, tx, qInsertMemoryFTS)
	if err != nil {
		return 0, err
	}
	if _, err := fts.ExecContext(ctx, n, text); err != nil {
		return 0, err
	}
	keys, err := db.writeStmt(ctx, tx, qInsertNearKeys)
	if err != nil {
		return 0, err
	}
	if _, err := keys.ExecContext(ctx, n); err != nil {
		return 0, err
	}
	if _, err := settleMemory(ctx, tx, n, seq); err != nil {
		return 0, err
	}
	if rp == nil {
		return memInserted, nil
	}
	superseded, err := supersede(ctx, tx, m, n, seq)
	if err != nil || !superseded {
		return memInserted, err
	}
	return memSuperseding, nil
}

// supersede settles the contradictions of the memory just inserted as row n:
// it marks the older contradicting memories superseded by it, or itself
// superseded when a contradicting memory is newer.
func supersede(ctx context.Context, tx *sql.Tx, m engram.Memory, n int64, seq *int64) (bool, error) {
	pred, same, ok := memrule.Rivals(m)
	if !ok {
		return false, nil
	}
	q := `rel_predicate = ? AND rel_obj_norm <> ?`
	if same {
		q = `rel_predicate = ? AND rel_obj_norm = ?`
	}
	rows, err := tx.QueryContext(ctx, `SELECT n, id, coalesce(valid_from, ts, 0) FROM memories
		WHERE namespace = ? AND rel_subj_norm = ? AND superseded_by IS NULL AND n <> ? AND `+q,
		m.Namespace, kgchain.NormName(m.Relation.Subject), n, pred, memrule.NormObject(m))
	if err != nil {
		return false, err
	}
	type other struct {
		n    int64
		id   string
		when int64
	}
	others, err := sqlrow.All(rows, func(o *other) []any { return []any{&o.n, &o.id, &o.when} })
	if err != nil {
		return false, err
	}
	mine := memrule.When(m)
	did := false
	for _, o := range others {
		loser, winner := o.n, m.ID
		if o.when > mine {
			loser, winner = n, o.id // the stored one is newer: the new memory is the stale one
		}
		*seq++
		if _, err := tx.ExecContext(ctx, `UPDATE memories SET superseded_by = ?, seq = ? WHERE n = ?`, winner, *seq, loser); err != nil {
			return false, err
		}
		if loser == n {
			return false, nil
		}
		did = true
	}
	return did, nil
}

// mergeInto adds m's sources to old and keeps the higher importance. It
// writes (and takes a change number) only when something changed.
func mergeInto(ctx context.Context, tx *sql.Tx, old *storedMemory, m engram.Memory, seq *int64) error {
	srcs, imp, changed := memrule.Merge(old.sources, old.importance, m)
	if !changed {
		return nil
	}
	raw, _ := json.Marshal(srcs)
	*seq++
	_, err := tx.ExecContext(ctx, `UPDATE memories SET sources = ?, importance = ?, seq = ? WHERE n = ?`, string(raw), imp, *seq, old.n)
	return err
}

// nearHit is a near-duplicate found: its row, and its overlap.
type nearHit struct {
	n     int64
	score float64
}

// nearDuplicate finds an active memory of m's namespace, type and subject
// whose content words (words) overlap m's by nearDupJaccard or more: the
// best overlap and of equals the newest, among the newest nearDupScan
// memories under each of m's near-duplicate keys (package neardup: no
// memory that overlaps m so much lacks one). q is qNearDuplicates.
func nearDuplicate(ctx context.Context, q *sql.Stmt, m engram.Memory, words []string) (nearHit, error) {
	if len(words) == 0 {
		return nearHit{}, nil
	}
	lo, hi := neardup.Sizes(len(words))
	group := neardup.Group(m.Namespace, m.Type, m.Subject)
	var best nearHit
	for _, key := range neardup.Keys(memrule.DedupKey(m, words)) {
		rows, err := q.QueryContext(ctx, group, key, lo, hi, m.Namespace, m.Type, m.Subject, nearDupScan)
		if err != nil {
			return nearHit{}, err
		}
		for rows.Next() {
			var (
				n   int64
				dk  string
				hit nearHit
			)
			if err := rows.Scan(&n, &dk); err != nil {
				rows.Close()
				return nearHit{}, err
			}
			hit = nearHit{n, neardup.Jaccard(words, neardup.KeyWords(dk))}
			if hit.score >= nearDupJaccard && (hit.score > best.score || hit.score == best.score && hit.n > best.n) {
				best = hit
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nearHit{}, err
		}
	}
	return best, nil
}

// nearDupScan bounds the memories a near-duplicate lookup reads under
// each key.
const nearDupScan = 128

// The statements that keep a memory's near-duplicate keys (the table
// memory_nearkeys) what its row makes them, run after the row is written
// and before it changes or goes.
const (
	qInsertNearKeys = `INSERT OR IGNORE INTO memory_nearkeys (grp, tok, size, n)
		SELECT engram_near_group(m.namespace, m.type, m.subject), k.value, engram_near_size(m.dedup_key), m.n
		FROM memories m, json_each(engram_near_keys(m.dedup_key)) k WHERE m.n = ?`
	qDeleteNearKeys = `DELETE FROM memory_nearkeys WHERE (grp, tok, size, n) IN
		(SELECT engram_near_group(m.namespace, m.type, m.subject), k.value, engram_near_size(m.dedup_key), m.n
		FROM memories m, json_each(engram_near_keys(m.dedup_key)) k WHERE m.n = ?)`
)

func (db *DB) loadMemory(ctx context.Context, tx *sql.Tx, where string, args ...any) (*storedMemory, error) {
	q, err := db.writeStmt(ctx, tx, qLoadMemory+where)
	if err != nil {
		return nil, err
	}
	var s storedMemory
	found, err := sqlrow.One(q.QueryRowContext(ctx, args...), &s.n, &s.id, sqlrow.JSON(&s.sources), &s.importance)
	if err != nil || !found {
		return nil, err
	}
	return &s, nil
}

// reindexMemory replaces memory row n's entry in memories_fts with m's
// text.
func reindexMemory(ctx context.Context, tx *sql.Tx, n int64, m engram.Memory) error {
	text, err := kwindex.IndexText(m.SearchText())
	if err != nil {
		return err
	}
	return reindexText(ctx, tx, "memories_fts", n, text)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// nextSeq returns the highest change number of table (memories or scenes).
func nextSeq(ctx context.Context, tx *sql.Tx, table string) (int64, error) {
	var seq int64
	err := tx.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM `+table).Scan(&seq)
	return seq, err
}

// --- reading ---

const memoryColumns = `m.n, m.id, m.namespace, m.type, m.subject, m.text, m.rationale, m.entities, m.importance,
	m.ts, m.valid_from, m.sources, m.rel_subject, m.rel_predicate, m.rel_object, m.superseded_by, m.seq,
	m.wrong, m.corrected, m.extracted`

func scanMemories(rows *sql.Rows, fn func(n int64, m engram.Memory, extra float64)) error {
	return sqlrow.EachRanked(rows, func(r *sqlrow.Ranked) error {
		var (
			m              engram.Memory
			n              int64
			rs, rp, ro     sql.NullString
			sup, corr, ext sql.NullString
		)
		rank, err := r.Scan(&n, &m.ID, &m.Namespace, &m.Type, &m.Subject, &m.Text, &m.Rationale, sqlrow.JSON(&m.Entities), &m.Importance,
			sqlrow.Time(&m.TS), sqlrow.Time(&m.ValidFrom), sqlrow.JSON(&m.Sources), &rs, &rp, &ro, &sup, &m.Seq, &m.Wrong, &corr, &ext)
		if err != nil {
			return err
		}
		if rp.Valid {
			m.Relation = &engram.Relation{Subject: rs.String, Predicate: rp.String, Object: ro.String}
		}
		m.SupersededBy, m.Corrected, m.Extracted = sup.String, corr.String, ext.String
		fn(n, m, rank)
		return nil
	})
}

// readMemories passes each memory of rows to add.
func readMemories(rows *sql.Rows, add func(engram.Memory)) error {
	return scanMemories(rows, func(_ int64, m engram.Memory, _ float64) { add(m) })
}

// MemoriesSince returns up to limit memories whose change number is above
// after, in change-number order: what a worker reading memories has not
// seen yet (superseded ones included).
func (db *DB) MemoriesSince(ctx context.Context, after int64, limit int) ([]engram.Memory, error) {
	return viewList(ctx, db, fmt.Sprintf("memories since %d", after), readMemories,
		`SELECT `+memoryColumns+` FROM memories m WHERE m.seq > ? ORDER BY m.seq LIMIT ?`, after, limit)
}

// MemorySeq returns the highest change number of the memories.
func (db *DB) MemorySeq(ctx context.Context) (int64, error) {
	var seq int64
	err := db.View(ctx, func(tx *sql.Tx) (err error) {
		seq, err = nextSeq(ctx, tx, "memories")
		return err
	})
	return seq, err
}

// Memories lists the memories matching q: newest first, or best first when
// q.Text asks for a keyword search. Superseded memories only when asked.
func (db *DB) Memories(ctx context.Context, q engram.MemoryQuery) ([]engram.Memory, error) {
	var l listQuery
	l.addText("m.namespace = ?", q.Namespace)
	l.addText("m.type = ?", q.Type)
	l.addText("lower(m.subject) = lower(?)", q.Subject)
	if !q.Superseded {
		l.where = append(l.where, "m.superseded_by IS NULL", "m.wrong = 0")
	}
	l.addTime("m.ts >= ?", q.From)
	l.addTime("m.ts < ?", q.To)
	query, args, ok, err := l.build(memoryColumns, "memories", "m", q.Text, "m.ts DESC, m.n DESC", searchLimit(q.Limit))
	if err != nil || !ok {
		return nil, err
	}
	return viewList(ctx, db, "memories", readMemories, query, args...)
}

// SearchMemories ranks the active memories holding any word of q.Text by
// BM25 (higher is better), filtered like SearchTurns.
func (db *DB) SearchMemories(ctx context.Context, q engram.TextQuery) ([]engram.MemoryHit, error) {
	return searchLayer(q, "search memories", func(terms []term, limit int) ([]engram.MemoryHit, bool, error) {
		return db.searchMemoriesFromMemory(ctx, q, terms, limit)
	}, func(terms []term, limit int) ([]engram.MemoryHit, error) {
		return viewList(ctx, db, "search memories", func(rows *sql.Rows, add func(engram.MemoryHit)) error {
			return scanMemories(rows, func(_ int64, m engram.Memory, rank float64) { add(engram.MemoryHit{Memory: m, Score: -rank}) })
		}, `SELECT `+memoryColumns+`, f.rank FROM memories_fts f JOIN memories m ON m.n = f.rowid
			WHERE memories_fts MATCH ?1 AND (?2 = '' OR m.namespace = ?2) AND m.superseded_by IS NULL AND m.wrong = 0
			AND (?4 = 0 OR m.ts >= ?4) AND (?5 = 0 OR m.ts < ?5)
			ORDER BY f.rank LIMIT ?3`, matchExpr(terms), q.Namespace, limit, nanosOrZero(q.From), nanosOrZero(q.To))
	})
}

// GetMemories returns the memories with the given ids, in the order of ids;
// unknown ids are skipped.
func (db *DB) GetMemories(ctx context.Context, ids []string) ([]engram.Memory, error) {
	return getByIDs(ctx, db, "memories", `SELECT `+memoryColumns+` FROM memories m WHERE m.id IN `, ids,
		readMemories, func(m engram.Memory) string { return m.ID })
}

// listQuery builds the listing queries of a layer table: conditions with
// their arguments, and an optional keyword search through the table's FTS
// index.
type listQuery struct {
	where []string
	args  []any
}

func (l *listQuery) add(cond string, v any) {
	l.where = append(l.where, cond)
	l.args = append(l.args, v)
}

// addText adds cond with s, a filter the query asks for unless s is "".
func (l *listQuery) addText(cond, s string) {
	if s != "" {
		l.add(cond, s)
	}
}

// addTime adds cond with t in Unix nanoseconds, a bound the query asks for
// unless t is zero.
func (l *listQuery) addTime(cond string, t time.Time) {
	if !t.IsZero() {
		l.add(cond, t.UnixNano())
	}
}

// build returns the query over table (aliased alias, its FTS index
// table_fts joined on n) ordered by order, or by BM25 when text is set; ok
// is false when text has no searchable term (nothing can match).
func (l *listQuery) build(columns, table, alias, text, order string, limit int) (query string, args []any, ok bool, err error) {
	from, where, args := table+" "+alias, append([]string{"1"}, l.where...), l.args
	if strings.TrimSpace(text) != "" {
		terms, err := kwindex.QueryTerms(text)
		if err != nil || len(terms) == 0 {
			return "", nil, false, err
		}
		from = table + "_fts f JOIN " + table + " " + alias + " ON " + alias + ".n = f.rowid"
		order = "f.rank"
		where = append([]string{table + "_fts MATCH ?"}, where...)
		args = append([]any{matchExpr(terms)}, args...)
	}
	return `SELECT ` + columns + ` FROM ` + from + ` WHERE ` + strings.Join(where, " AND ") + ` ORDER BY ` + order + ` LIMIT ?`,
		append(args, limit), true, nil
}
