package pgpalace

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/kgchain"
	"github.com/engram-dev/engram/internal/kwindex"
	"github.com/engram-dev/engram/internal/memrule"
	"github.com/engram-dev/engram/internal/neardup"
	"github.com/engram-dev/engram/internal/redacttext"
	"github.com/engram-dev/engram/internal/sqlrow"
)

// The L1 memories, as package palace keeps them (palace/memories.go), the
// rules in internal/memrule: a repeat (same id, or a near-duplicate of an
// active memory) merges into the stored one, a contradiction supersedes
// the older, and a memory's last correction wins over what extraction
// gives it. Each server's keyword index of the memories follows their
// change numbers; a superseded or wrong memory stays in it (its
// statistics count it, as FTS5's do) but is not found.

// keyMemoriesDeleted is the palace_meta key counting the deletions of
// memories.
const keyMemoriesDeleted = "memories_deleted"

// nearDupScan bounds the memories a near-duplicate lookup reads under
// each key, as package palace's.
const nearDupScan = 128

// memoryColumns are the columns scanMemory reads, in order.
const memoryColumns = `m.n, m.id, m.namespace, m.type, m.subject, m.text, m.rationale, m.entities, m.importance,
	m.ts, m.valid_from, m.sources, m.rel_subject, m.rel_predicate, m.rel_object, m.superseded_by, m.seq,
	m.wrong, m.corrected, m.extracted`

// memories is a transaction's work on the memories, under their lock
// (and the graph's: a correction may rebuild chains).
type memories struct {
	ctx context.Context
	tx  pgx.Tx
	seq int64 // the last change number taken
}

// begin reads the memories' last change number.
func (w *memories) begin() error {
	return w.tx.QueryRow(w.ctx, `SELECT coalesce(max(seq), 0) FROM palace_memories`).Scan(&w.seq)
}

// next is the next change number.
func (w *memories) next() int64 {
	w.seq++
	return w.seq
}

// PutMemories stores L1 memories from a worker's batch and advances the
// worker's watermark to throughSeq, in one transaction, as package
// palace's does: for each memory, in order, one whose id is stored (or
// was merged) gains the sources it lacks; one that near-duplicates an
// active memory is merged into it; otherwise it is inserted, superseding
// the active memories it contradicts (or superseded by a newer one), and
// takes the state its last correction gives it.
//
// Errors: EINVALID naming the field (memrule.Check).
func (db *DB) PutMemories(ctx context.Context, worker string, mems []engram.Memory, throughSeq int64) (engram.MemoryResult, error) {
	for i, m := range mems {
		if err := memrule.Check(m, i, func(t time.Time) error { _, err := nanos(t); return err }); err != nil {
			return engram.MemoryResult{}, err
		}
	}
	var res engram.MemoryResult
	err := db.update(ctx, "put memories", func(tx pgx.Tx) error {
		res = engram.MemoryResult{}
		if err := lock(ctx, tx, graphLockKey, memoryLockKey); err != nil {
			return err
		}
		w := &memories{ctx: ctx, tx: tx}
		if err := w.begin(); err != nil {
			return err
		}
		for _, m := range mems {
			inserted, merged, superseding, err := w.put(m)
			if err != nil {
				return errors.Join(errors.New("memory "+m.ID), err)
			}
			if inserted {
				res.Inserted++
			}
			if merged {
				res.Merged++
			}
			if superseding {
				res.Superseded++
			}
		}
		return setMeta(ctx, tx, workerKey(worker), throughSeq)
	})
	if err != nil {
		return engram.MemoryResult{}, err
	}
	return res, nil
}

// stored is the part of a stored memory that merging needs.
type stored struct {
	n          int64
	id         string
	sources    []string
	importance float64
}

// load reads the stored memory where selects (on palace_memories m, with
// args); nil when none.
func (w *memories) load(where string, args ...any) (*stored, error) {
	var s stored
	err := w.tx.QueryRow(w.ctx, `SELECT m.n, m.id, m.sources, m.importance FROM palace_memories m WHERE `+where, args...).
		Scan(&s.n, &s.id, &s.sources, &s.importance)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	return &s, err
}

// put stores one memory of a batch.
func (w *memories) put(m engram.Memory) (inserted, merged, superseding bool, err error) {
	// Replayed: the same memory from the same batch, stored or merged.
	for _, where := range []string{`m.id = $1`, `m.id = (SELECT memory FROM palace_memory_merges WHERE id = $1)`} {
		old, err := w.load(where, m.ID)
		if err != nil || old != nil {
			return false, false, false, errors.Join(err, w.mergeInto(old, m))
		}
	}
	words := memrule.ContentWords(m.Text)
	key := memrule.DedupKey(m, words)
	old, err := w.load(`m.namespace = $1 AND m.dedup_key = $2 AND m.superseded_by IS NULL ORDER BY m.n LIMIT 1`, m.Namespace, key)
	if err != nil {
		return false, false, false, err
	}
	if old == nil {
		if old, err = w.nearDuplicate(m, words, key); err != nil {
			return false, false, false, err
		}
	}
	if old != nil {
		if _, err := w.tx.Exec(w.ctx, `INSERT INTO palace_memory_merges (id, memory) VALUES ($1, $2) ON CONFLICT DO NOTHING`, m.ID, old.id); err != nil {
			return false, false, false, err
		}
		return false, true, false, w.mergeInto(old, m)
	}
	n, err := w.insert(m, key)
	if err != nil {
		return false, false, false, err
	}
	if _, err := w.settle(n); err != nil {
		return false, false, false, err
	}
	superseding, err = w.supersede(m, n)
	return true, false, superseding, err
}

// insert inserts m, whose near-duplicate key is key, with its keys, and
// returns its row.
func (w *memories) insert(m engram.Memory, key string) (int64, error) {
	ents, _ := json.Marshal(nonNil(m.Entities))
	ts, _ := nanos(m.TS)
	vf, _ := nanos(m.ValidFrom)
	var rs, rp, ro, rsn, ron *string
	if memrule.HasRelation(m) {
		r := m.Relation
		subj, obj := kgchain.NormName(r.Subject), kgchain.NormName(r.Object)
		rs, rp, ro, rsn, ron = &r.Subject, &r.Predicate, &r.Object, &subj, &obj
	}
	var n int64
	err := w.tx.QueryRow(w.ctx, `INSERT INTO palace_memories
		(id, namespace, type, subject, text, rationale, entities, importance, ts, valid_from, sources,
		 rel_subject, rel_predicate, rel_object, rel_subj_norm, rel_obj_norm, dedup_key, seq)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18) RETURNING n`,
		m.ID, m.Namespace, m.Type, m.Subject, []byte(m.Text), []byte(m.Rationale), string(ents), memrule.Importance(m.Importance), ts, vf,
		memrule.CapSources(nonNil(m.Sources)), rs, rp, ro, rsn, ron, key, w.next()).Scan(&n)
	if err != nil {
		return 0, err
	}
	return n, w.putKeys(n, m.Namespace, m.Type, m.Subject, key)
}

// putKeys writes the near-duplicate keys of memory n, of the group of
// namespace, type and subject, whose dedup key is key.
func (w *memories) putKeys(n int64, ns, typ, subject, key string) error {
	_, err := w.tx.Exec(w.ctx, `INSERT INTO palace_memory_nearkeys (grp, tok, size, n)
		SELECT $1, tok, $3, $4 FROM unnest($2::bigint[]) AS tok ON CONFLICT DO NOTHING`,
		neardup.Group(ns, typ, subject), neardup.Keys(key), len(neardup.KeyWords(key)), n)
	return err
}

// nearDuplicate finds an active memory of m's namespace, type and subject
// whose content words (words) overlap m's by memrule.NearJaccard or
// more, as package palace's does: the best overlap, and of equals the
// newest, among the newest nearDupScan memories under each of m's keys.
func (w *memories) nearDuplicate(m engram.Memory, words []string, key string) (*stored, error) {
	if len(words) == 0 {
		return nil, nil
	}
	lo, hi := neardup.Sizes(len(words))
	rows, err := w.tx.Query(w.ctx, `SELECT c.n, c.dedup_key FROM unnest($2::bigint[]) AS key(tok),
		LATERAL (SELECT m.n, m.dedup_key FROM palace_memory_nearkeys k JOIN palace_memories m ON m.n = k.n
			WHERE k.grp = $1 AND k.tok = key.tok AND k.size BETWEEN $3 AND $4
				AND m.superseded_by IS NULL AND m.namespace = $5 AND m.type = $6 AND m.subject = $7
			ORDER BY k.n DESC LIMIT $8) c`,
		neardup.Group(m.Namespace, m.Type, m.Subject), neardup.Keys(key), lo, hi, m.Namespace, m.Type, m.Subject, nearDupScan)
	if err != nil {
		return nil, err
	}
	var (
		best      int64
		bestScore float64
		n         int64
		dk        string
	)
	_, err = pgx.ForEachRow(rows, []any{&n, &dk}, func() error {
		score := neardup.Jaccard(words, neardup.KeyWords(dk))
		if score >= memrule.NearJaccard && (score > bestScore || score == bestScore && n > best) {
			best, bestScore = n, score
		}
		return nil
	})
	if err != nil || best == 0 {
		return nil, err
	}
	return w.load(`m.n = $1`, best)
}

// mergeInto adds m's sources to old and keeps the higher importance,
// writing (under a new change number) only when something changed.
func (w *memories) mergeInto(old *stored, m engram.Memory) error {
	if old == nil {
		return nil
	}
	srcs, imp, changed := memrule.Merge(old.sources, old.importance, m)
	if !changed {
		return nil
	}
	_, err := w.tx.Exec(w.ctx, `UPDATE palace_memories SET sources = $1, importance = $2, seq = $3 WHERE n = $4`, srcs, imp, w.next(), old.n)
	return err
}

// supersede settles the contradictions of m, just inserted as row n: it
// marks the older contradicting memories superseded by it, or itself
// superseded when a contradicting memory is newer.
func (w *memories) supersede(m engram.Memory, n int64) (bool, error) {
	pred, same, ok := memrule.Rivals(m)
	if !ok {
		return false, nil
	}
	cmpObj := `<>`
	if same {
		cmpObj = `=`
	}
	rows, err := w.tx.Query(w.ctx, `SELECT n, id, coalesce(valid_from, ts, 0) FROM palace_memories
		WHERE namespace = $1 AND rel_subj_norm = $2 AND superseded_by IS NULL AND n <> $3 AND rel_predicate = $4 AND rel_obj_norm `+cmpObj+` $5
		ORDER BY n`, m.Namespace, kgchain.NormName(m.Relation.Subject), n, pred, memrule.NormObject(m))
	if err != nil {
		return false, err
	}
	type other struct {
		n    int64
		id   string
		when int64
	}
	others, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (other, error) {
		var o other
		return o, r.Scan(&o.n, &o.id, &o.when)
	})
	if err != nil {
		return false, err
	}
	mine, did := memrule.When(m), false
	for _, o := range others {
		loser, winner := o.n, m.ID
		if o.when > mine {
			loser, winner = n, o.id // the stored one is newer: the new memory is the stale one
		}
		if _, err := w.tx.Exec(w.ctx, `UPDATE palace_memories SET superseded_by = $1, seq = $2 WHERE n = $3`, winner, w.next(), loser); err != nil {
			return false, err
		}
		if loser == n {
			return false, nil
		}
		did = true
	}
	return did, nil
}

// settle gives memory row n the state its last correction says (none: as
// extracted), rebuilding the graph chains of its statements when whether
// it is wrong changes. It reports whether the row changed.
func (w *memories) settle(n int64) (bool, error) {
	var (
		id, ns, typ     string
		text, extracted []byte
		wrong           bool
		corrected       *string
	)
	if err := w.tx.QueryRow(w.ctx, `SELECT id, namespace, type, text, wrong, corrected, extracted FROM palace_memories WHERE n = $1`, n).
		Scan(&id, &ns, &typ, &text, &wrong, &corrected, &extracted); err != nil {
		return false, err
	}
	orig := string(text)
	if extracted != nil {
		orig = string(extracted)
	}
	c, err := lastCorrection(w.ctx, w.tx, engram.CorrectMemory, id, memrule.Alt(ns, typ, orig))
	if err != nil {
		return false, err
	}
	want := memrule.Settle(orig, c)
	if want.Text == string(text) && want.Wrong == wrong && deref(corrected) == want.Corrected {
		return false, nil
	}
	var wantCorrected *string
	var wantExtracted []byte
	if want.Corrected != "" {
		wantCorrected, wantExtracted = &want.Corrected, []byte(want.Extracted)
	}
	if _, err := w.tx.Exec(w.ctx, `UPDATE palace_memories SET text = $1, wrong = $2, corrected = $3, extracted = $4, seq = $5 WHERE n = $6`,
		[]byte(want.Text), want.Wrong, wantCorrected, wantExtracted, w.next(), n); err != nil {
		return false, err
	}
	if want.Wrong != wrong {
		if _, err := (graph{w.ctx, w.tx}).rebuildWhere(`memory = $1`, id); err != nil {
			return false, err
		}
	}
	return true, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// scanMemory reads a row of memoryColumns.
func scanMemory(r pgx.CollectableRow) (int64, engram.Memory, error) {
	var (
		n                   int64
		m                   engram.Memory
		text, rat, ext      []byte
		ents                string
		rs, rp, ro, sup, co *string
	)
	err := r.Scan(&n, &m.ID, &m.Namespace, &m.Type, &m.Subject, &text, &rat, &ents, &m.Importance,
		sqlrow.Time(&m.TS), sqlrow.Time(&m.ValidFrom), &m.Sources, &rs, &rp, &ro, &sup, &m.Seq, &m.Wrong, &co, &ext)
	if err != nil {
		return 0, m, err
	}
	if err := json.Unmarshal([]byte(ents), &m.Entities); err != nil {
		return 0, m, err
	}
	m.Text, m.Rationale, m.Extracted = string(text), string(rat), string(ext)
	if rp != nil {
		m.Relation = &engram.Relation{Subject: deref(rs), Predicate: *rp, Object: deref(ro)}
	}
	m.SupersededBy, m.Corrected = deref(sup), deref(co)
	return n, m, nil
}

// queryMemories runs q, whose columns are memoryColumns, and returns its
// memories by row too.
func queryMemories(ctx context.Context, qr pgxQuerier, q string, args ...any) ([]engram.Memory, []int64, error) {
	rows, err := qr.Query(ctx, q, args...)
	if err != nil {
		return nil, nil, err
	}
	var (
		out []engram.Memory
		ns  []int64
	)
	_, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (struct{}, error) {
		n, m, err := scanMemory(r)
		out, ns = append(out, m), append(ns, n)
		return struct{}{}, err
	})
	return out, ns, err
}

// memoryChanges reads the memories written after a change number for the
// memories' keyword index, with their text (Memory.SearchText); a
// superseded or wrong one is hidden.
func memoryChanges(ctx context.Context, tx pgx.Tx, after int64, limit int) ([]kwindex.Row, error) {
	ms, ns, err := queryMemories(ctx, tx, `SELECT `+memoryColumns+` FROM palace_memories m WHERE m.seq > $1 ORDER BY m.seq LIMIT $2`, after, limit)
	if err != nil {
		return nil, err
	}
	rows := make([]kwindex.Row, len(ms))
	for i, m := range ms {
		r := kwindex.Row{ID: m.ID, Change: m.Seq, Doc: kwindex.Doc{Key: ns[i], Namespace: m.Namespace, Hidden: !m.Active()}}
		if !m.TS.IsZero() {
			r.Doc.TS, r.Doc.HasTS = m.TS.UnixNano(), true
		}
		if r.Doc.Text, err = kwindex.IndexText(m.SearchText()); err != nil {
			return nil, err
		}
		rows[i] = r
	}
	return rows, nil
}

// MemoriesSince returns up to limit memories whose change number is above
// after, in change-number order, superseded ones included.
func (db *DB) MemoriesSince(ctx context.Context, after int64, limit int) ([]engram.Memory, error) {
	ms, _, err := queryMemories(ctx, db.pool, `SELECT `+memoryColumns+` FROM palace_memories m WHERE m.seq > $1 ORDER BY m.seq LIMIT $2`, after, max(limit, 0))
	return ms, wrap("memories since", err)
}

// MemorySeq returns the highest change number of the memories.
func (db *DB) MemorySeq(ctx context.Context) (int64, error) {
	var seq int64
	err := db.pool.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM palace_memories`).Scan(&seq)
	return seq, wrap("memory seq", err)
}

// GetMemories returns the memories with the given ids, in the order of
// ids; unknown ids are skipped.
func (db *DB) GetMemories(ctx context.Context, ids []string) ([]engram.Memory, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	got, _, err := queryMemories(ctx, db.pool, `SELECT `+memoryColumns+` FROM palace_memories m WHERE m.id = ANY($1)`, ids)
	if err != nil {
		return nil, wrap("get memories", err)
	}
	return sqlrow.InOrder(ids, got, func(m engram.Memory) string { return m.ID }), nil
}

// SearchMemories ranks the active memories of q.Namespace dated within
// [q.From, q.To) holding any word of q.Text by BM25 (higher is better),
// as package palace's does.
func (db *DB) SearchMemories(ctx context.Context, q engram.TextQuery) ([]engram.MemoryHit, error) {
	words, err := textWords(q.Text)
	if err != nil || len(words) == 0 {
		return nil, err
	}
	f := kwindex.Filter{Namespace: q.Namespace, From: nanosOrZero(q.From), To: nanosOrZero(q.To)}
	var hits []kwindex.Hit
	err = fromIndex(ctx, db.mkw, func() (ok bool, err error) {
		hits, ok, err = db.mkw.Best(ctx, nil, words, f, min(max(q.Limit, 1), maxSearchLimit))
		return ok, err
	})
	if err != nil || len(hits) == 0 {
		return nil, wrap("search memories", err)
	}
	ms, ns, err := queryMemories(ctx, db.pool, `SELECT `+memoryColumns+` FROM palace_memories m WHERE m.n = ANY($1)`, kwindex.Keys(hits))
	if err != nil {
		return nil, wrap("search memories", err)
	}
	byN := make(map[int64]engram.Memory, len(ms))
	for i, m := range ms {
		byN[ns[i]] = m
	}
	var out []engram.MemoryHit
	for _, h := range hits {
		// Gone, superseded or marked wrong since it was ranked: left out.
		if m, ok := byN[h.Key]; ok && m.Active() {
			out = append(out, engram.MemoryHit{Memory: m, Score: h.Score})
		}
	}
	return out, nil
}

// Memories lists the memories matching q: newest first, or best first
// when q.Text asks for a keyword search (BM25, as SearchMemories ranks
// them). Superseded and wrong memories only when asked.
func (db *DB) Memories(ctx context.Context, q engram.MemoryQuery) ([]engram.Memory, error) {
	filter := `($1 = '' OR m.namespace = $1) AND ($2 = '' OR m.type = $2) AND ($3 = '' OR ` + asciiLower("m.subject") + ` = ` + asciiLower("$3") + `)
		AND ($4 OR (m.superseded_by IS NULL AND NOT m.wrong)) AND ($5::bigint = 0 OR m.ts >= $5) AND ($6::bigint = 0 OR m.ts < $6)`
	args := []any{q.Namespace, q.Type, q.Subject, q.Superseded, nanosOrZero(q.From), nanosOrZero(q.To)}
	limit := searchLimit(q.Limit)
	if q.Text == "" {
		ms, _, err := queryMemories(ctx, db.pool, `SELECT `+memoryColumns+` FROM palace_memories m WHERE `+filter+`
			ORDER BY m.ts DESC NULLS LAST, m.n DESC LIMIT $7`, append(args, limit)...)
		return ms, wrap("memories", err)
	}
	words, err := textWords(q.Text)
	if err != nil || len(words) == 0 {
		return nil, err
	}
	rows, err := db.pool.Query(ctx, `SELECT m.id FROM palace_memories m WHERE `+filter, args...)
	if err != nil {
		return nil, wrap("memories", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(ids) == 0 {
		return nil, wrap("memories", err)
	}
	var hits []kwindex.IDHit
	err = fromIndex(ctx, db.mkw, func() (ok bool, err error) {
		hits, ok, err = db.mkw.Score(ctx, nil, words, ids)
		return ok, err
	})
	if err != nil {
		return nil, wrap("memories", err)
	}
	slices.SortStableFunc(hits, func(a, b kwindex.IDHit) int { return cmp.Compare(b.Score, a.Score) })
	ids = ids[:0]
	for _, h := range hits[:min(len(hits), limit)] {
		ids = append(ids, h.ID)
	}
	return db.GetMemories(ctx, ids)
}

// forget deletes the memories that stood only on turns gone and takes
// those turns out of the others' sources, as package palace's forget
// does: what a deleted memory superseded stands again, and the repeats
// merged into it are forgotten with it.
func (w *memories) forget(gone []string, res *engram.ForgetResult) error {
	rows, err := w.tx.Query(w.ctx, `SELECT n, id, sources FROM palace_memories WHERE sources && $1::text[] ORDER BY n`, gone)
	if err != nil {
		return err
	}
	type mem struct {
		n       int64
		id      string
		sources []string
	}
	hits, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (mem, error) {
		var m mem
		return m, r.Scan(&m.n, &m.id, &m.sources)
	})
	if err != nil {
		return err
	}
	for _, m := range hits {
		kept := slices.DeleteFunc(slices.Clone(m.sources), func(id string) bool { return slices.Contains(gone, id) })
		if len(kept) > 0 {
			if _, err := w.tx.Exec(w.ctx, `UPDATE palace_memories SET sources = $1, seq = $2 WHERE n = $3`, kept, w.next(), m.n); err != nil {
				return err
			}
			res.MemoriesKept++
			continue
		}
		if _, err := w.tx.Exec(w.ctx, `DELETE FROM palace_memory_nearkeys WHERE n = $1`, m.n); err != nil {
			return err
		}
		if _, err := w.tx.Exec(w.ctx, `DELETE FROM palace_memories WHERE n = $1`, m.n); err != nil {
			return err
		}
		if err := countDeletion(w.ctx, w.tx, keyMemoriesDeleted); err != nil {
			return err
		}
		if _, err := w.tx.Exec(w.ctx, `DELETE FROM palace_memory_merges WHERE memory = $1`, m.id); err != nil {
			return err
		}
		// What it superseded stands again, each with a change number of
		// its own.
		rows, err := w.tx.Query(w.ctx, `SELECT n FROM palace_memories WHERE superseded_by = $1 ORDER BY n`, m.id)
		if err != nil {
			return err
		}
		superseded, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return err
		}
		for _, n := range superseded {
			if _, err := w.tx.Exec(w.ctx, `UPDATE palace_memories SET superseded_by = NULL, seq = $1 WHERE n = $2`, w.next(), n); err != nil {
				return err
			}
		}
		res.Memories++
		res.Removed = append(res.Removed, m.id)
	}
	return nil
}

// redact redacts the memories citing the turn turnID, as package palace's
// redaction does: each takes a new change number (so that the graph and
// persona jobs read it again), its relation's names are redacted, and
// its text, rationale, subject, entities and text as extracted, with its
// near-duplicate keys made again. It returns how many memories' words
// changed.
func (w *memories) redact(turnID string, txt *redacttext.Text) (int, error) {
	rows, err := w.tx.Query(w.ctx, `SELECT n, type, text, rationale, subject, entities, extracted, rel_subject, rel_object, namespace
		FROM palace_memories WHERE sources @> ARRAY[$1::text] ORDER BY n`, turnID)
	if err != nil {
		return 0, err
	}
	type mem struct {
		n               int64
		m               engram.Memory
		text, rat, ext  []byte
		ents            string
		relSubj, relObj *string
	}
	found, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (mem, error) {
		var x mem
		return x, r.Scan(&x.n, &x.m.Type, &x.text, &x.rat, &x.m.Subject, &x.ents, &x.ext, &x.relSubj, &x.relObj, &x.m.Namespace)
	})
	if err != nil {
		return 0, err
	}
	changed := 0
	for _, x := range found {
		m := x.m
		if err := json.Unmarshal([]byte(x.ents), &m.Entities); err != nil {
			return 0, err
		}
		m.Text, m.Rationale = string(x.text), string(x.rat)
		seq := w.next()
		if x.relSubj != nil && x.relObj != nil {
			rs, ro := txt.Red(*x.relSubj), txt.Red(*x.relObj)
			if _, err := w.tx.Exec(w.ctx, `UPDATE palace_memories SET rel_subject = $1, rel_object = $2, rel_subj_norm = $3, rel_obj_norm = $4,
				seq = $5 WHERE n = $6`, rs, ro, kgchain.NormName(rs), kgchain.NormName(ro), seq, x.n); err != nil {
				return 0, err
			}
		} else if _, err := w.tx.Exec(w.ctx, `UPDATE palace_memories SET seq = $1 WHERE n = $2`, seq, x.n); err != nil {
			return 0, err
		}
		red := m
		red.Text, red.Rationale, red.Subject = txt.Red(m.Text), txt.Red(m.Rationale), txt.Red(m.Subject)
		red.Entities = make([]string, len(m.Entities))
		for i, e := range m.Entities {
			red.Entities[i] = txt.Red(e)
		}
		var ext []byte
		if x.ext != nil {
			ext = []byte(txt.Red(string(x.ext)))
		}
		if red.Text == m.Text && red.Rationale == m.Rationale && red.Subject == m.Subject && slices.Equal(red.Entities, m.Entities) &&
			string(ext) == string(x.ext) {
			continue
		}
		key := memrule.DedupKey(red, memrule.ContentWords(red.Text))
		ents, _ := json.Marshal(nonNil(red.Entities))
		if _, err := w.tx.Exec(w.ctx, `DELETE FROM palace_memory_nearkeys WHERE n = $1`, x.n); err != nil {
			return 0, err
		}
		if _, err := w.tx.Exec(w.ctx, `UPDATE palace_memories SET text = $1, rationale = $2, subject = $3, entities = $4, extracted = $5,
			dedup_key = $6, seq = $7 WHERE n = $8`, []byte(red.Text), []byte(red.Rationale), red.Subject, string(ents), ext, key, seq, x.n); err != nil {
			return 0, err
		}
		if err := w.putKeys(x.n, red.Namespace, red.Type, red.Subject, key); err != nil {
			return 0, err
		}
		changed++
	}
	return changed, nil
}
