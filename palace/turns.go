package palace

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/kwindex"
	"github.com/engram-dev/engram/internal/sqlrow"
	"github.com/engram-dev/engram/internal/vecrow"
)

// keyIndexedSeq is the palace_meta key of the indexer's watermark.
const keyIndexedSeq = "indexed_seq"

// turnColumns are the columns queryTurns reads, in order.
const turnColumns = `t.seq, t.id, t.namespace, t.session, t.role, t.speaker, t.content, t.ts, t.meta, t.received_at`

// row is a turn prepared for insertion: everything that costs CPU
// (normalisation, word segmentation) is done before the write lock is taken.
type row struct {
	t       engram.Turn
	text    string // content for turns_fts
	speaker string // speaker for turns_fts
	raw     string // NFKC content for turns_trigram
	grams   string // CJK characters and pairs for turns_cjk, "" if none
	ts, rx  any    // Unix nanoseconds or nil
	skip    string // why the turn cannot be stored ("" if it can)
	tomb    bool   // a tombstone: its id goes to table forgotten
}

// PutTurns stores turns: the turns and their keyword indexes in one
// transaction (PutTurnsSearchable), then their session units and
// substring rows (IndexSecondary). A turn whose Seq is stored already is
// left as it is, so replaying a range of the archive is harmless. The
// watermark (IndexedSeq) advances to the highest Seq of the batch.
//
// One bad archived turn never stops indexing: a turn whose ID is stored
// under another Seq is a duplicate, whatever its archive line holds (the
// re-send of a turn whose archive line was damaged, which the archive did
// not know), and a turn with a time outside what an int64 of nanoseconds
// holds (outsideRange; a line edited by hand) cannot be stored. Neither is
// stored; each is recorded in turn_skips with the reason (TurnSkips reads
// them), and the rest of the batch is stored.
//
// It returns EINVALID if a turn has no ID or namespace or a Seq below 1,
// which no archive line has. A batch with such a turn stores nothing.
func (db *DB) PutTurns(ctx context.Context, turns []engram.Turn) error {
	if err := db.PutTurnsSearchable(ctx, turns); err != nil {
		return err
	}
	var maxSeq int64
	for _, t := range turns {
		maxSeq = max(maxSeq, t.Seq)
	}
	for {
		done, err := db.IndexSecondary(ctx, maxSeq, backfillBatch, nil)
		if err != nil || done {
			return err
		}
	}
}

// PutTurnsSearchable is the first transaction of PutTurns: it stores the
// turns and what makes them searchable by keyword (turns_fts, the
// in-memory keyword index, turns_cjk) and moves the watermark, which is
// what an acknowledgement waits for. Their session units and their rows
// of the substring index (turns_trigram) follow in IndexSecondary's
// transactions, under their own watermarks (keyUnitsSeq, keyTrigramSeq):
// about two thirds of the work at 100,000 turns (BenchmarkPutTurns:
// re-indexing the text of each session part the turns extend, and the
// trigrams), done while the client sends its next request, and in short
// transactions, so that the next turn index waits for little of it. A
// crash before they are written leaves them to the indexer's next round
// or to Open (backfillSecondary); a forget or a redaction before then
// leaves the substring rows of such turns to them, and they read the
// turns as they then are. A turn stored behind those watermarks (a seq
// lower than one stored before) gets its rows here.
func (db *DB) PutTurnsSearchable(ctx context.Context, turns []engram.Turn) error {
	if len(turns) == 0 {
		return nil
	}
	rows, maxSeq, err := prepareTurns(turns)
	if err != nil {
		return err
	}

	// Urgent: an acknowledgement waits for it (see writeGate).
	kw := db.kw.Begin()
	err = db.update(ctx, true, func(tx *sql.Tx) error {
		kw.Reset()
		st := db.writerStmts(ctx, tx) // compiled once, when the palace opened
		var stmts [5]*sql.Stmt
		for i, q := range []string{qInsertTurn, qInsertTurnFTS, qInsertTurnCJK, qAnyForgotten, qSetMeta} {
			var err error
			if stmts[i], err = st(q); err != nil {
				return fmt.Errorf("palace: put turns: %w", err)
			}
		}
		ins, fts, cjk, forgotten, meta := stmts[0], stmts[1], stmts[2], stmts[3], stmts[4]

		// Forgotten ids: a tombstone records its id; a turn read before
		// its forget (a stream that began earlier) is not stored again,
		// and one archived again after it (resurrected) is.
		var anyForgotten bool
		if err := forgotten.QueryRowContext(ctx).Scan(&anyForgotten); err != nil {
			return fmt.Errorf("palace: put turns: %w", err)
		}
		var stored []engram.Turn // newly stored
		unitsFrom, trigramFrom, err := secondaryWatermarks(ctx, tx)
		if err != nil {
			return fmt.Errorf("palace: put turns: %w", err)
		}
		var index []row // their rows, for the full-text indexes
		for _, r := range rows {
			t := r.t
			if r.tomb {
				if _, err := tx.ExecContext(ctx, `INSERT INTO forgotten (id, seq, at) VALUES (?, ?, ?)
					ON CONFLICT (id) DO UPDATE SET seq = max(seq, excluded.seq)`, t.ID, t.Seq, t.Forgotten.At.UnixNano()); err != nil {
					return fmt.Errorf("palace: put tombstone %d: %w", t.Seq, err)
				}
				anyForgotten = true
				continue
			}
			if anyForgotten {
				if gone, err := forgottenSince(ctx, tx, t); err != nil {
					return fmt.Errorf("palace: put turn %d: %w", t.Seq, err)
				} else if gone {
					continue // forgotten since it was read
				}
			}
			if r.skip != "" {
				if err := recordSkip(ctx, tx, t, r.skip, nil, db.now()); err != nil {
					return fmt.Errorf("palace: put turn %d: %w", t.Seq, err)
				}
				continue
			}
			var meta any
			if len(t.Meta) > 0 {
				meta = string(t.Meta)
			}
			res, err := ins.ExecContext(ctx, t.Seq, t.ID, t.Namespace, t.Session, string(t.Role), t.Speaker, t.Content, r.ts, meta, r.rx)
			if err != nil {
				return fmt.Errorf("palace: put turn %d: %w", t.Seq, err)
			}
			if n, err := res.RowsAffected(); err != nil {
				return fmt.Errorf("palace: put turn %d: %w", t.Seq, err)
			} else if n == 0 {
				// Stored before (a replayed range), or its id is stored
				// under another seq.
				if err := skipDuplicate(ctx, tx, t, db.now()); err != nil {
					return fmt.Errorf("palace: put turn %d: %w", t.Seq, err)
				}
				continue
			}
			stored = append(stored, t)
			index = append(index, r)
		}
		// The full-text rows go last: SQLite opens a statement savepoint
		// for a statement that may abort halfway (an upsert, an insert
		// with RETURNING), and FTS5 writes its pending terms to disk as a
		// new segment at every savepoint, so one such statement after each
		// indexed turn made a segment a turn (and merges of them).
		if _, err := meta.ExecContext(ctx, keyIndexedSeq, maxSeq); err != nil {
			return fmt.Errorf("palace: advance watermark: %w", err)
		}
		for _, r := range index {
			t := r.t
			if _, err := fts.ExecContext(ctx, t.Seq, r.text, r.speaker); err != nil {
				return fmt.Errorf("palace: index turn %d: %w", t.Seq, err)
			}
			kw.Add(turnDoc(t.Seq, t.Namespace, r.ts, r.text, r.speaker))
			if r.grams != "" {
				if _, err := cjk.ExecContext(ctx, t.Seq, r.grams); err != nil {
					return fmt.Errorf("palace: index turn %d: %w", t.Seq, err)
				}
			}
		}
		if err := db.writeBehind(ctx, tx, stored, unitsFrom, trigramFrom); err != nil {
			return fmt.Errorf("palace: put turns: %w", err)
		}
		if err := countKeywordChange(ctx, tx, kw); err != nil {
			return fmt.Errorf("palace: put turns: %w", err)
		}
		return nil
	})
	db.kw.End(kw, err)
	return err
}

// writeBehind writes the secondary rows of the stored turns at or before
// a secondary watermark (unitsFrom, trigramFrom), which its next step
// would not reach.
func (db *DB) writeBehind(ctx context.Context, tx *sql.Tx, stored []engram.Turn, unitsFrom, trigramFrom int64) error {
	var unitsBehind, trigramBehind []engram.Turn
	slices.SortFunc(stored, func(a, b engram.Turn) int { return cmp.Compare(a.Seq, b.Seq) }) // units take turns in seq order
	for _, t := range stored {
		if t.Seq <= unitsFrom {
			unitsBehind = append(unitsBehind, t)
		}
		if t.Seq <= trigramFrom {
			trigramBehind = append(trigramBehind, t)
		}
	}
	if len(unitsBehind) == 0 && len(trigramBehind) == 0 {
		return nil
	}
	return db.writeSecondary(ctx, tx, unitsBehind, trigramBehind)
}

// prepareTurns checks turns and computes, outside the transaction, the
// text of each as the keyword indexes hold it; maxSeq is the highest seq.
func prepareTurns(turns []engram.Turn) (rows []row, maxSeq int64, err error) {
	rows = make([]row, len(turns))
	for i, t := range turns {
		field := "turns[" + strconv.Itoa(i) + "]."
		if t.ID == "" {
			return nil, 0, engram.FieldError(field+"id", "id is required")
		}
		if t.IsTombstone() {
			if t.Seq < 1 {
				return nil, 0, engram.FieldError(field+"seq", "seq %d is not positive", t.Seq)
			}
			rows[i] = row{t: t, tomb: true}
			maxSeq = max(maxSeq, t.Seq)
			continue
		}
		if t.Namespace == "" {
			return nil, 0, engram.FieldError(field+"namespace", "namespace is required")
		}
		if t.Seq < 1 {
			return nil, 0, engram.FieldError(field+"seq", "seq %d is not positive", t.Seq)
		}
		r := row{t: t}
		maxSeq = max(maxSeq, t.Seq)
		var err error
		if r.ts, err = nanos(t.TS); err != nil {
			r.skip = "ts: " + err.Error()
		} else if r.rx, err = nanos(t.ReceivedAt); err != nil {
			r.skip = "received_at: " + err.Error()
		}
		if r.skip != "" {
			rows[i] = r
			continue
		}
		r.raw = kwindex.NFKC(t.Content)
		if r.text, err = kwindex.SegmentText(r.raw); err != nil {
			return nil, 0, err
		}
		speaker := kwindex.NFKC(t.Speaker)
		if r.speaker, err = kwindex.SegmentText(speaker); err != nil {
			return nil, 0, err
		}
		r.grams = strings.TrimSpace(kwindex.CJKGrams(r.raw) + " " + kwindex.CJKGrams(speaker))
		rows[i] = r
	}
	return rows, maxSeq, nil
}

// forgottenSince reports whether t was forgotten since it was read (its
// tombstone's seq is not below its own); a tombstone older than t (t
// archived again after its forget) is dropped.
func forgottenSince(ctx context.Context, tx *sql.Tx, t engram.Turn) (bool, error) {
	var fseq int64
	found, err := sqlrow.One(tx.QueryRowContext(ctx, `SELECT seq FROM forgotten WHERE id = ?`, t.ID), &fseq)
	switch {
	case err != nil || !found:
		return false, err
	case fseq >= t.Seq:
		return true, nil
	}
	_, err = tx.ExecContext(ctx, `DELETE FROM forgotten WHERE id = ?`, t.ID)
	return false, err
}

// The statements of PutTurns.
const (
	qInsertTurn = `INSERT INTO turns
		(seq, id, namespace, session, role, speaker, content, ts, meta, received_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`
	qInsertTurnFTS     = `INSERT INTO turns_fts (rowid, text, speaker) VALUES (?, ?, ?)`
	qInsertTurnTrigram = `INSERT INTO turns_trigram (rowid, content) VALUES (?, ?)`
	qInsertTurnCJK     = `INSERT INTO turns_cjk (rowid, grams) VALUES (?, ?)`
	qAnyForgotten      = `SELECT EXISTS (SELECT 1 FROM forgotten)`
)

// skipDuplicate records t in turn_skips when the palace holds its id under
// another seq. A seq that holds t's id, or another turn (a palace and an
// archive that disagree: the doctor's index check finds it), is left as is.
func skipDuplicate(ctx context.Context, tx *sql.Tx, t engram.Turn, now time.Time) error {
	var stored int64
	found, err := sqlrow.One(tx.QueryRowContext(ctx, `SELECT seq FROM turns WHERE id = ?`, t.ID), &stored)
	if err != nil || !found || stored == t.Seq {
		return err
	}
	return recordSkip(ctx, tx, t, fmt.Sprintf("id %q is stored under seq %d", t.ID, stored), stored, now)
}

// recordSkip records that t is not stored, and why; stored is the seq its
// id is stored under, or nil.
func recordSkip(ctx context.Context, tx *sql.Tx, t engram.Turn, reason string, stored any, now time.Time) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO turn_skips (seq, id, reason, stored_seq, at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (seq) DO NOTHING`, t.Seq, t.ID, reason, stored, now.UnixNano())
	return err
}

// TurnSkips returns how many archived turns PutTurns skipped, and the
// latest of them, at most limit.
func (db *DB) TurnSkips(ctx context.Context, limit int) (engram.TurnSkips, error) {
	var out engram.TurnSkips
	err := db.View(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT count(*), count(*) FILTER (WHERE stored_seq IS NULL) FROM turn_skips`).Scan(&out.Count, &out.Lost); err != nil || out.Count == 0 {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT seq, id, reason, coalesce(stored_seq, 0), at FROM turn_skips ORDER BY seq DESC LIMIT ?`, limit)
		if err != nil {
			return err
		}
		out.Latest, err = sqlrow.All(rows, func(s *engram.TurnSkip) []any {
			return []any{&s.Seq, &s.ID, &s.Reason, &s.StoredSeq, sqlrow.Time(&s.At)}
		})
		return err
	})
	if err != nil {
		return engram.TurnSkips{}, fmt.Errorf("palace: turn skips: %w", err)
	}
	return out, nil
}

// TurnAt returns the stored turn of seq, and false when there is none.
func (db *DB) TurnAt(ctx context.Context, seq int64) (engram.Turn, bool, error) {
	var out engram.Turn
	found := false
	err := db.View(ctx, func(tx *sql.Tx) error {
		return queryTurns(ctx, tx, `SELECT `+turnColumns+` FROM turns t WHERE t.seq = ?`, []any{seq}, func(t engram.Turn, _ float64) {
			out, found = t, true
		})
	})
	if err != nil {
		return engram.Turn{}, false, fmt.Errorf("palace: turn at %d: %w", seq, err)
	}
	return out, found, nil
}

// TurnSeqs returns the seq of each of ids the palace stores a turn for.
func (db *DB) TurnSeqs(ctx context.Context, ids []string) (map[string]int64, error) {
	out := make(map[string]int64)
	if len(ids) == 0 {
		return out, nil
	}
	err := db.View(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT id, seq FROM turns WHERE id IN (SELECT value FROM json_each(?))`, sqlrow.JSONList(ids))
		if err != nil {
			return err
		}
		return sqlrow.Scanner(func(t *engram.Turn) []any { return []any{&t.ID, &t.Seq} })(rows, func(t engram.Turn) { out[t.ID] = t.Seq })
	})
	if err != nil {
		return nil, fmt.Errorf("palace: turn seqs: %w", err)
	}
	return out, nil
}

// nanos returns t as Unix nanoseconds, or nil for the zero time. A time
// outside what an int64 of nanoseconds holds is an error that says so.
func nanos(t time.Time) (any, error) {
	v, ok := sqlrow.Nanos(t)
	if !ok {
		return nil, errors.New(vecrow.OutsideRange(t, "the palace's times"))
	}
	return v, nil
}

// IndexedSeq returns the watermark: the highest Seq passed to PutTurns, 0
// for an empty palace.
func (db *DB) IndexedSeq(ctx context.Context) (int64, error) {
	var seq int64
	err := db.View(ctx, func(tx *sql.Tx) error {
		var err error
		seq, err = metaIn(ctx, tx, keyIndexedSeq)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("palace: indexed seq: %w", err)
	}
	return seq, nil
}

// GetTurns returns the stored turns with the given ids, in the order of ids.
// Ids that are not stored are skipped, so the result may be shorter.
func (db *DB) GetTurns(ctx context.Context, ids []string) ([]engram.Turn, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var got []engram.Turn
	err := db.View(ctx, func(tx *sql.Tx) error {
		rows, err := db.readQuery(ctx, tx, `SELECT `+turnColumns+` FROM turns t WHERE t.id IN (SELECT value FROM json_each(?))`, sqlrow.JSONList(ids))
		if err != nil {
			return err
		}
		return scanTurns(rows, func(t engram.Turn, _ float64) { got = append(got, t) })
	})
	if err != nil {
		return nil, fmt.Errorf("palace: get turns: %w", err)
	}
	return sqlrow.InOrder(ids, got, func(t engram.Turn) string { return t.ID }), nil
}

// CountTurns returns the number of stored turns in namespace, or in all
// namespaces if namespace is "".
func (db *DB) CountTurns(ctx context.Context, namespace string) (int64, error) {
	var n int64
	err := db.View(ctx, func(tx *sql.Tx) error {
		if namespace == "" {
			return tx.QueryRowContext(ctx, `SELECT count(*) FROM turns`).Scan(&n)
		}
		return tx.QueryRowContext(ctx, `SELECT count(*) FROM turns WHERE namespace = ?`, namespace).Scan(&n)
	})
	if err != nil {
		return 0, fmt.Errorf("palace: count turns: %w", err)
	}
	return n, nil
}

// Stats counts what is stored per namespace: Layers[namespace][layer] for
// the layers "turns", "memories" (active ones), "scenes" and "facts"
// (knowledge-graph triples).
func (db *DB) Stats(ctx context.Context) (engram.Stats, error) {
	st := engram.Stats{Layers: make(map[string]map[string]int64)}
	err := db.View(ctx, func(tx *sql.Tx) error {
		for _, l := range []struct{ name, q string }{
			{"turns", `SELECT namespace, count(*) FROM turns GROUP BY namespace`},
			{"memories", `SELECT namespace, count(*) FROM memories WHERE superseded_by IS NULL AND wrong = 0 GROUP BY namespace`},
			{"scenes", `SELECT namespace, count(*) FROM scenes GROUP BY namespace`},
			{"facts", `SELECT namespace, count(*) FROM kg_triples GROUP BY namespace`},
		} {
			if err := countBy(ctx, tx, l.q, func(ns string, n int64) {
				if st.Layers[ns] == nil {
					st.Layers[ns] = map[string]int64{}
				}
				st.Layers[ns][l.name] = n
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return engram.Stats{}, fmt.Errorf("palace: stats: %w", err)
	}
	return st, nil
}

// countBy runs q, which counts rows by a text key, and calls fn with each
// key and count.
func countBy(ctx context.Context, tx *sql.Tx, q string, fn func(string, int64), args ...any) error {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	type count struct {
		key string
		n   int64
	}
	return sqlrow.Scanner(func(c *count) []any { return []any{&c.key, &c.n} })(rows, func(c count) { fn(c.key, c.n) })
}

// queryTurns runs q, whose first columns are turnColumns, optionally followed
// by one numeric column (a rank), and calls fn for each row.
func queryTurns(ctx context.Context, tx *sql.Tx, q string, args []any, fn func(engram.Turn, float64)) error {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	return scanTurns(rows, fn)
}

// scanTurns reads rows of turnColumns, optionally followed by a rank, and
// closes them.
func scanTurns(rows *sql.Rows, fn func(engram.Turn, float64)) error {
	return scanTurnsWhile(rows, func(t engram.Turn, rank float64) bool {
		fn(t, rank)
		return true
	})
}

// errEnoughRows ends a scanTurnsWhile early.
var errEnoughRows = errors.New("palace: enough rows")

// scanTurnsWhile is scanTurns that stops reading once fn returns false.
func scanTurnsWhile(rows *sql.Rows, fn func(engram.Turn, float64) bool) error {
	err := sqlrow.EachRanked(rows, func(r *sqlrow.Ranked) error {
		var (
			t    engram.Turn
			meta sql.NullString
		)
		rank, err := r.Scan(&t.Seq, &t.ID, &t.Namespace, &t.Session, &t.Role, &t.Speaker, &t.Content, sqlrow.Time(&t.TS), &meta,
			sqlrow.Time(&t.ReceivedAt))
		if err != nil {
			return err
		}
		if meta.Valid && meta.String != "" {
			t.Meta = json.RawMessage(meta.String)
		}
		if !fn(t, rank) {
			return errEnoughRows
		}
		return nil
	})
	if errors.Is(err, errEnoughRows) {
		return nil
	}
	return err
}

// TurnsAround returns, for each turn of ts, up to n turns of its namespace
// and session on each side of it, in time order (ties broken by seq): the
// conversation around hits. One read transaction serves every turn: deep
// recall asks for the context of some thirty candidates at once. Errors:
// EINVALID for n < 0.
func (db *DB) TurnsAround(ctx context.Context, ts []engram.Turn, n int) ([]engram.Around, error) {
	if n < 0 {
		return nil, engram.Errorf(engram.EINVALID, "palace: turns around: n must not be negative, got %d", n)
	}
	out := make([]engram.Around, len(ts))
	if n == 0 || len(ts) == 0 {
		return out, nil
	}
	const (
		qb = `SELECT ` + turnColumns + ` FROM turns t
			WHERE t.namespace = ?1 AND t.session = ?2 AND (t.ts < ?3 OR (t.ts = ?3 AND t.seq < ?4))
			ORDER BY t.ts DESC, t.seq DESC LIMIT ?5`
		qa = `SELECT ` + turnColumns + ` FROM turns t
			WHERE t.namespace = ?1 AND t.session = ?2 AND (t.ts > ?3 OR (t.ts = ?3 AND t.seq > ?4))
			ORDER BY t.ts, t.seq LIMIT ?5`
	)
	err := db.View(ctx, func(tx *sql.Tx) error {
		for i, t := range ts {
			at := nanosOrZero(t.TS)
			for _, side := range []struct {
				q   string
				add func(engram.Turn)
			}{
				{qb, func(b engram.Turn) { out[i].Before = append(out[i].Before, b) }},
				{qa, func(a engram.Turn) { out[i].After = append(out[i].After, a) }},
			} {
				rows, err := db.readQuery(ctx, tx, side.q, t.Namespace, t.Session, at, t.Seq, n)
				if err != nil {
					return err
				}
				if err := scanTurns(rows, func(x engram.Turn, _ float64) { side.add(x) }); err != nil {
					return err
				}
			}
			slices.Reverse(out[i].Before)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("palace: turns around: %w", err)
	}
	return out, nil
}
