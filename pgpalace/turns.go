package pgpalace

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/redacttext"
	"github.com/engram-dev/engram/internal/sqlrow"
	"github.com/engram-dev/engram/internal/vecrow"
	"github.com/engram-dev/engram/pgpalace/pgvectors"
)

// keyIndexedSeq is the palace_meta key of the indexer's watermark.
const keyIndexedSeq = "indexed_seq"

// turnColumns are the columns scanTurn reads, in order.
const turnColumns = `t.seq, t.id, t.namespace, t.session, t.role, t.speaker, t.content, t.ts, t.meta, t.received_at`

// PutTurns stores turns, as package palace's PutTurns does: the turns
// (PutTurnsSearchable), then what the fallback searches read of them
// (IndexSecondary). A turn whose seq is stored already is left as it is
// (replaying a range of the archive, or another server storing the same
// turns, is harmless); a turn whose id is stored under another seq, or
// whose time is outside what an int64 of nanoseconds holds, is not stored
// but recorded in palace_turn_skips (TurnSkips); a tombstone records its
// id as forgotten, so that a turn read before its forget is not stored
// again, while one archived again after it is. The watermark (IndexedSeq)
// rises to the highest seq of the batch, in the same transaction.
//
// It returns EINVALID if a turn has no id or namespace or a seq below 1,
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
		done, err := db.IndexSecondary(ctx, maxSeq, 0, nil)
		if err != nil || done {
			return err
		}
	}
}

// PutTurnsSearchable is the first transaction of PutTurns, which an
// acknowledgement waits for: the turns' rows (searchable by keyword from
// then on: each server's index follows them) and the watermark. Their
// rows of palace_turn_text follow in IndexSecondary's transactions, under
// a watermark of their own (SecondarySeq), as package palace's session
// units and substring rows do; a turn stored behind that watermark (a seq
// lower than one stored before) gets its row here.
func (db *DB) PutTurnsSearchable(ctx context.Context, turns []engram.Turn) error {
	if len(turns) == 0 {
		return nil
	}
	rows, maxSeq, err := prepareTurns(turns)
	if err != nil {
		return err
	}
	return db.update(ctx, "put turns", func(tx pgx.Tx) error {
		if err := lockWrites(ctx, tx); err != nil {
			return err
		}
		if err := db.putRows(ctx, tx, rows); err != nil {
			return err
		}
		return setMeta(ctx, tx, keyIndexedSeq, maxSeq)
	})
}

// keySecondarySeq is the palace_meta key of the watermark of
// palace_turn_text.
const keySecondarySeq = "secondary_seq"

// SecondaryBatch is the most turns one IndexSecondary transaction takes by
// default.
const SecondaryBatch = 500

// IndexSecondary writes, in one transaction, the session parts and the
// rows of palace_turn_text of at most limit turns (SecondaryBatch if limit <= 0) stored after its
// watermark and through seq, and moves the watermark past them; done when
// none is left. stop is not asked: a step is one statement.
func (db *DB) IndexSecondary(ctx context.Context, seq int64, limit int, stop func() bool) (done bool, err error) {
	if limit <= 0 {
		limit = SecondaryBatch
	}
	err = db.update(ctx, "index secondary", func(tx pgx.Tx) error {
		// Under the write lock, as PutTurnsSearchable's write-behind
		// reads the watermark: no turn commits behind a watermark that
		// moved past it without its row.
		if err := lockWrites(ctx, tx); err != nil {
			return err
		}
		from, err := metaIn(ctx, tx, keySecondarySeq)
		if err != nil || from >= seq {
			done = true
			return err
		}
		turns, err := queryTurns(ctx, tx, `SELECT `+turnColumns+` FROM palace_turns t
			WHERE t.seq > $1 AND t.seq <= $2 ORDER BY t.seq LIMIT $3`, from, seq, limit)
		if err != nil {
			return err
		}
		through := seq
		if len(turns) == limit {
			through = turns[len(turns)-1].Seq
		}
		done = through == seq
		if err := writeSecondary(ctx, tx, turns); err != nil {
			return err
		}
		return setMeta(ctx, tx, keySecondarySeq, through)
	})
	return done, err
}

// SecondarySeq returns the seq through which palace_turn_text is written.
func (db *DB) SecondarySeq(ctx context.Context) (int64, error) {
	seq, err := metaIn(ctx, db.pool, keySecondarySeq)
	return seq, wrap("secondary seq", err)
}

// writeSecondary puts turns (in seq order) into their session parts and
// writes their rows of palace_turn_text.
func writeSecondary(ctx context.Context, tx pgx.Tx, turns []engram.Turn) error {
	if len(turns) == 0 {
		return nil
	}
	if err := addSessionTurns(ctx, tx, turns); err != nil {
		return err
	}
	seqs, folds, gramLists := make([]int64, len(turns)), make([]string, len(turns)), make([]string, len(turns))
	for i, t := range turns {
		seqs[i], folds[i], gramLists[i] = t.Seq, folded(t.Content), strings.Join(grams(t.Content, t.Speaker), " ")
	}
	return writeText(ctx, tx, seqs, folds, gramLists)
}

// writeText writes the rows of palace_turn_text of the turns of seqs.
func writeText(ctx context.Context, tx pgx.Tx, seqs []int64, folds, gramLists []string) error {
	_, err := tx.Exec(ctx, `INSERT INTO palace_turn_text (seq, folded, grams)
		SELECT u.seq, u.folded, string_to_array(u.grams, ' ') FROM unnest($1::bigint[], $2::text[], $3::text[]) AS u(seq, folded, grams)
		ON CONFLICT (seq) DO NOTHING`, seqs, folds, gramLists)
	return err
}

// row is a turn checked for storing.
type row struct {
	t      engram.Turn
	ts, rx *int64 // Unix nanoseconds or nil
	skip   string // why the turn cannot be stored ("" if it can)
}

// prepareTurns checks turns; maxSeq is the highest seq.
func prepareTurns(turns []engram.Turn) (rows []row, maxSeq int64, err error) {
	rows = make([]row, len(turns))
	for i, t := range turns {
		field := "turns[" + strconv.Itoa(i) + "]."
		switch {
		case t.ID == "":
			return nil, 0, engram.FieldError(field+"id", "id is required")
		case t.Namespace == "" && !t.IsTombstone():
			return nil, 0, engram.FieldError(field+"namespace", "namespace is required")
		case t.Seq < 1:
			return nil, 0, engram.FieldError(field+"seq", "seq %d is not positive", t.Seq)
		}
		maxSeq = max(maxSeq, t.Seq)
		r := row{t: t}
		if !t.IsTombstone() {
			if r.ts, err = nanos(t.TS); err != nil {
				r.skip = "ts: " + err.Error()
			} else if r.rx, err = nanos(t.ReceivedAt); err != nil {
				r.skip = "received_at: " + err.Error()
			}
		}
		rows[i] = r
	}
	return rows, maxSeq, nil
}

// nanos returns t as Unix nanoseconds, or nil for the zero time. A time
// outside what an int64 of nanoseconds holds is an error that says so.
func nanos(t time.Time) (*int64, error) {
	v, ok := sqlrow.Nanos(t)
	if !ok {
		return nil, errors.New(vecrow.OutsideRange(t, "the palace's times"))
	}
	if v == nil {
		return nil, nil
	}
	n := v.(int64)
	return &n, nil
}

// putRows stores the turns of one PutTurns in tx, in a few statements
// for the whole batch (a statement a turn made this palace four times
// slower than the SQLite one). What package palace decides turn by turn,
// in order, is decided here in the same order, in memory: whether a turn
// was forgotten since it was read (a tombstone at or after it, in the
// table or earlier in the batch) or archived again after its forget.
func (db *DB) putRows(ctx context.Context, tx pgx.Tx, rows []row) error {
	now := db.now().UnixNano()
	var live []string
	for _, r := range rows {
		live = append(live, r.t.ID)
	}
	gone := map[string]int64{} // the forgotten ids of the batch, and their tombstones' seqs
	q, err := tx.Query(ctx, `SELECT id, seq FROM palace_forgotten WHERE id = ANY($1)`, live)
	if err != nil {
		return err
	}
	var (
		id  string
		seq int64
	)
	if _, err := pgx.ForEachRow(q, []any{&id, &seq}, func() error { gone[id] = seq; return nil }); err != nil {
		return err
	}
	// touched: the ids whose record the batch changes, with the time of
	// the first tombstone recorded (0: none yet); cleared: those archived
	// again in the batch, whose record before it goes.
	touched, cleared := map[string]int64{}, map[string]bool{}
	var ins, skips []row
	for _, r := range rows {
		t := r.t
		if t.IsTombstone() {
			gone[t.ID] = max(gone[t.ID], t.Seq)
			if touched[t.ID] == 0 {
				touched[t.ID] = t.Forgotten.At.UnixNano()
			}
			continue
		}
		if fseq, ok := gone[t.ID]; ok {
			if fseq >= t.Seq {
				continue // forgotten since it was read
			}
			delete(gone, t.ID) // archived again after its forget
			touched[t.ID], cleared[t.ID] = 0, true
		}
		if r.skip != "" {
			skips = append(skips, r)
		} else {
			ins = append(ins, r)
		}
	}
	if err := writeTombstones(ctx, tx, gone, touched, cleared); err != nil {
		return err
	}
	for _, r := range skips {
		if err := recordSkip(ctx, tx, r.t, r.skip, nil, now); err != nil {
			return err
		}
	}
	return db.insertTurns(ctx, tx, ins, now)
}

// writeTombstones brings palace_forgotten to what the batch left of the
// ids it touched: the record of an id archived again goes, and a
// tombstone's seq is recorded (the highest; the time of the first recorded
// kept), as package palace's statement a turn leaves them.
func writeTombstones(ctx context.Context, tx pgx.Tx, gone, touched map[string]int64, cleared map[string]bool) error {
	for id, at := range touched {
		if cleared[id] {
			if _, err := tx.Exec(ctx, `DELETE FROM palace_forgotten WHERE id = $1`, id); err != nil {
				return err
			}
		}
		if seq, ok := gone[id]; ok {
			if _, err := tx.Exec(ctx, `INSERT INTO palace_forgotten (id, seq, at) VALUES ($1, $2, $3)
				ON CONFLICT (id) DO UPDATE SET seq = greatest(palace_forgotten.seq, excluded.seq)`, id, seq, at); err != nil {
				return err
			}
		}
	}
	return nil
}

// insertTurns inserts the turns of rows in one statement; a turn whose seq
// is stored already is left as it is (a replayed range, another server),
// and one whose id is stored under another seq is recorded as a skip.
func (db *DB) insertTurns(ctx context.Context, tx pgx.Tx, rows []row, now int64) error {
	if len(rows) == 0 {
		return nil
	}
	n := len(rows)
	var (
		seqs                                = make([]int64, n)
		ids, nss, sessions, roles, speakers = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		contents                            = make([][]byte, n)
		tss, rxs                            = make([]*int64, n), make([]*int64, n)
		metas                               = make([]*string, n)
	)
	for i, r := range rows {
		t := r.t
		seqs[i], ids[i], nss[i], sessions[i], roles[i], speakers[i] = t.Seq, t.ID, t.Namespace, t.Session, string(t.Role), t.Speaker
		contents[i], tss[i], rxs[i] = []byte(t.Content), r.ts, r.rx
		if len(t.Meta) > 0 {
			m := string(t.Meta)
			metas[i] = &m
		}
	}
	// ON CONFLICT DO NOTHING: a turn of the batch whose seq or id an earlier
	// one of the same statement took is left out, as a later statement
	// would leave it.
	q, err := tx.Query(ctx, `INSERT INTO palace_turns (seq, id, namespace, session, role, speaker, content, ts, meta, received_at)
		SELECT u.seq, u.id, u.ns, u.session, u.role, u.speaker, u.content, u.ts, u.meta, u.rx
		FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bytea[], $8::bigint[], $9::text[],
			$10::bigint[]) WITH ORDINALITY
			AS u(seq, id, ns, session, role, speaker, content, ts, meta, rx, n)
		ORDER BY u.n
		ON CONFLICT DO NOTHING RETURNING seq`,
		seqs, ids, nss, sessions, roles, speakers, contents, tss, metas, rxs)
	if err != nil {
		return err
	}
	stored, err := pgx.CollectRows(q, pgx.RowTo[int64])
	if err != nil {
		return err
	}
	if err := writeBehind(ctx, tx, rows, stored); err != nil {
		return err
	}
	if len(stored) == n {
		return nil
	}
	inserted := make(map[int64]bool, len(stored))
	for _, seq := range stored {
		inserted[seq] = true
	}
	var left []row
	var leftIDs []string
	for _, r := range rows {
		if !inserted[r.t.Seq] {
			left, leftIDs = append(left, r), append(leftIDs, r.t.ID)
		}
	}
	// Stored before, or a duplicate: whatever its line holds, a turn whose
	// id is stored under another seq is not stored again.
	seqOf, err := idSeqs(ctx, tx, leftIDs)
	if err != nil {
		return err
	}
	for _, r := range left {
		if s, ok := seqOf[r.t.ID]; ok && s != r.t.Seq {
			if err := recordSkip(ctx, tx, r.t, fmt.Sprintf("id %q is stored under seq %d", r.t.ID, s), s, now); err != nil {
				return err
			}
		}
		// Not found: another turn holds the seq (a palace and an archive
		// that disagree), which the doctor's index check finds.
	}
	return nil
}

// writeBehind writes the session parts and the rows of palace_turn_text
// of the stored turns at or before their watermark, which
// IndexSecondary's next step would not reach.
func writeBehind(ctx context.Context, tx pgx.Tx, rows []row, stored []int64) error {
	if len(stored) == 0 {
		return nil
	}
	mark, err := metaIn(ctx, tx, keySecondarySeq)
	if err != nil || mark < slices.Min(stored) {
		return err
	}
	behind := map[int64]bool{}
	for _, seq := range stored {
		behind[seq] = seq <= mark
	}
	var turns []engram.Turn
	for _, r := range rows {
		if behind[r.t.Seq] {
			behind[r.t.Seq] = false // the first of a seq is the stored one
			turns = append(turns, r.t)
		}
	}
	slices.SortFunc(turns, func(a, b engram.Turn) int { return cmp.Compare(a.Seq, b.Seq) }) // parts take turns in seq order
	return writeSecondary(ctx, tx, turns)
}

// idSeqs returns the seq each of ids is stored under.
func idSeqs(ctx context.Context, q pgxQuerier, ids []string) (map[string]int64, error) {
	out := make(map[string]int64, len(ids))
	rows, err := q.Query(ctx, `SELECT id, seq FROM palace_turns WHERE id = ANY($1)`, ids)
	if err != nil {
		return nil, err
	}
	var (
		id  string
		seq int64
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &seq}, func() error { out[id] = seq; return nil })
	return out, err
}

// recordSkip records that t is not stored, and why; stored is the seq its
// id is stored under, or nil.
func recordSkip(ctx context.Context, tx pgx.Tx, t engram.Turn, reason string, stored any, now int64) error {
	_, err := tx.Exec(ctx, `INSERT INTO palace_turn_skips (seq, id, reason, stored_seq, at) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (seq) DO NOTHING`, t.Seq, t.ID, reason, stored, now)
	return err
}

// IndexedSeq returns the watermark: the highest seq passed to PutTurns, 0
// for an empty palace.
func (db *DB) IndexedSeq(ctx context.Context) (int64, error) {
	seq, err := metaIn(ctx, db.pool, keyIndexedSeq)
	return seq, wrap("indexed seq", err)
}

// TurnSkips returns how many archived turns PutTurns skipped, and the
// latest of them, at most limit (every one when limit < 0).
func (db *DB) TurnSkips(ctx context.Context, limit int) (engram.TurnSkips, error) {
	var out engram.TurnSkips
	err := db.pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE stored_seq IS NULL) FROM palace_turn_skips`).Scan(&out.Count, &out.Lost)
	if err != nil || out.Count == 0 || limit == 0 {
		return out, wrap("turn skips", err)
	}
	rows, err := db.pool.Query(ctx, `SELECT seq, id, reason, coalesce(stored_seq, 0), at FROM palace_turn_skips
		ORDER BY seq DESC LIMIT $1`, limitOrAll(limit))
	if err != nil {
		return engram.TurnSkips{}, wrap("turn skips", err)
	}
	out.Latest, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (engram.TurnSkip, error) {
		var s engram.TurnSkip
		err := r.Scan(&s.Seq, &s.ID, &s.Reason, &s.StoredSeq, sqlrow.Time(&s.At))
		return s, err
	})
	if err != nil {
		return engram.TurnSkips{}, wrap("turn skips", err)
	}
	return out, nil
}

// limitOrAll is a LIMIT's argument: nil (no limit) for a negative limit.
func limitOrAll(limit int) any {
	if limit < 0 {
		return nil
	}
	return limit
}

// GetTurns returns the stored turns with the given ids, in the order of
// ids; ids not stored are skipped.
func (db *DB) GetTurns(ctx context.Context, ids []string) ([]engram.Turn, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	got, err := db.turns(ctx, `SELECT `+turnColumns+` FROM palace_turns t WHERE t.id = ANY($1)`, ids)
	if err != nil {
		return nil, wrap("get turns", err)
	}
	return sqlrow.InOrder(ids, got, func(t engram.Turn) string { return t.ID }), nil
}

// TurnAt returns the stored turn of seq, and false when there is none.
func (db *DB) TurnAt(ctx context.Context, seq int64) (engram.Turn, bool, error) {
	got, err := db.turns(ctx, `SELECT `+turnColumns+` FROM palace_turns t WHERE t.seq = $1`, seq)
	if err != nil || len(got) == 0 {
		return engram.Turn{}, false, wrap(fmt.Sprintf("turn at %d", seq), err)
	}
	return got[0], true, nil
}

// TurnSeqs returns the seq of each of ids the palace stores a turn for.
func (db *DB) TurnSeqs(ctx context.Context, ids []string) (map[string]int64, error) {
	out := make(map[string]int64)
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT id, seq FROM palace_turns WHERE id = ANY($1)`, ids)
	if err != nil {
		return nil, wrap("turn seqs", err)
	}
	var (
		id  string
		seq int64
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &seq}, func() error {
		out[id] = seq
		return nil
	})
	return out, wrap("turn seqs", err)
}

// TurnIDs returns the ids of the stored turns of namespace (every
// namespace when ""), of session only when it is set, in seq order.
func (db *DB) TurnIDs(ctx context.Context, namespace, session string) ([]string, error) {
	rows, err := db.pool.Query(ctx, `SELECT id FROM palace_turns
		WHERE ($1 = '' OR namespace = $1) AND ($2 = '' OR session = $2) ORDER BY seq`, namespace, session)
	if err != nil {
		return nil, wrap("turn ids", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return ids, wrap("turn ids", err)
}

// TurnIDsHolding returns the ids of the stored turns of namespace and
// session ("" for every one) whose content, speaker or meta holds one of
// texts, in seq order, as package palace's does: in meta a text is looked
// for as JSON writes it; with everywhere, a text in a turn's id,
// namespace or session finds it too.
func (db *DB) TurnIDsHolding(ctx context.Context, namespace, session string, texts []string, everywhere bool) ([]string, error) {
	holder := redacttext.NewHolder(texts, everywhere)
	rows, err := db.pool.Query(ctx, `SELECT id, namespace, session, content, speaker, coalesce(meta, '') FROM palace_turns
		WHERE ($1 = '' OR namespace = $1) AND ($2 = '' OR session = $2) ORDER BY seq`, namespace, session)
	if err != nil {
		return nil, wrap("turn ids holding", err)
	}
	var ids []string
	var id, ns, sess, speaker, meta string
	var content []byte
	_, err = pgx.ForEachRow(rows, []any{&id, &ns, &sess, &content, &speaker, &meta}, func() error {
		if holder.Holds(id, ns, sess, string(content), speaker, meta) {
			ids = append(ids, id)
		}
		return nil
	})
	return ids, wrap("turn ids holding", err)
}

// CountTurns returns the number of stored turns in namespace, or in all
// namespaces if namespace is "".
func (db *DB) CountTurns(ctx context.Context, namespace string) (int64, error) {
	var n int64
	err := db.pool.QueryRow(ctx, `SELECT count(*) FROM palace_turns WHERE $1 = '' OR namespace = $1`, namespace).Scan(&n)
	return n, wrap("count turns", err)
}

// ForgottenIDs returns which of ids the palace records as forgotten.
func (db *DB) ForgottenIDs(ctx context.Context, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	rows, err := db.pool.Query(ctx, `SELECT id FROM palace_forgotten WHERE id = ANY($1)`, ids)
	if err != nil {
		return nil, wrap("forgotten ids", err)
	}
	var id string
	_, err = pgx.ForEachRow(rows, []any{&id}, func() error {
		out[id] = true
		return nil
	})
	return out, wrap("forgotten ids", err)
}

// TurnsAround returns, for each turn of ts, up to n turns of its namespace
// and session on each side of it, in time order (ties broken by seq), all
// read in one transaction of one snapshot. Errors: EINVALID for n < 0.
func (db *DB) TurnsAround(ctx context.Context, ts []engram.Turn, n int) ([]engram.Around, error) {
	if n < 0 {
		return nil, engram.Errorf(engram.EINVALID, "pgpalace: turns around: n must not be negative, got %d", n)
	}
	out := make([]engram.Around, len(ts))
	if n == 0 || len(ts) == 0 {
		return out, nil
	}
	// As in package palace, a turn without a time is no neighbour (NULL
	// compares to nothing), and one asked about reads as time 0.
	const (
		qb = `SELECT ` + turnColumns + ` FROM palace_turns t
			WHERE t.namespace = $1 AND t.session = $2 AND (t.ts < $3 OR (t.ts = $3 AND t.seq < $4))
			ORDER BY t.ts DESC, t.seq DESC LIMIT $5`
		qa = `SELECT ` + turnColumns + ` FROM palace_turns t
			WHERE t.namespace = $1 AND t.session = $2 AND (t.ts > $3 OR (t.ts = $3 AND t.seq > $4))
			ORDER BY t.ts, t.seq LIMIT $5`
	)
	err := pgx.BeginTxFunc(ctx, db.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		for i, t := range ts {
			var at int64
			if !t.TS.IsZero() {
				at = t.TS.UnixNano()
			}
			before, err := queryTurns(ctx, tx, qb, t.Namespace, t.Session, at, t.Seq, n)
			if err != nil {
				return err
			}
			after, err := queryTurns(ctx, tx, qa, t.Namespace, t.Session, at, t.Seq, n)
			if err != nil {
				return err
			}
			slices.Reverse(before)
			out[i] = engram.Around{Before: before, After: after}
		}
		return nil
	})
	if err != nil {
		return nil, wrap("turns around", err)
	}
	return out, nil
}

// turns runs q, whose columns are turnColumns, and returns its turns.
func (db *DB) turns(ctx context.Context, q string, args ...any) ([]engram.Turn, error) {
	return queryTurns(ctx, db.pool, q, args...)
}

// queryTurns runs q, whose columns are turnColumns, on a pool or a
// transaction and returns its turns.
func queryTurns(ctx context.Context, qr pgxQuerier, q string, args ...any) ([]engram.Turn, error) {
	rows, err := qr.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	// AppendRows to nil: none found is a nil slice, as package palace's.
	return pgx.AppendRows([]engram.Turn(nil), rows, func(r pgx.CollectableRow) (engram.Turn, error) {
		var (
			t       engram.Turn
			role    string
			content []byte
			meta    *string
		)
		err := r.Scan(&t.Seq, &t.ID, &t.Namespace, &t.Session, &role, &t.Speaker, &content, sqlrow.Time(&t.TS), &meta,
			sqlrow.Time(&t.ReceivedAt))
		t.Role, t.Content = engram.Role(role), string(content)
		if meta != nil && *meta != "" {
			t.Meta = json.RawMessage(*meta)
		}
		return t, err
	})
}

// Stats counts what the palace holds per namespace, as package palace's
// does: Layers[namespace]["turns"], ["memories"] (the active ones),
// ["scenes"], ["facts"].
func (db *DB) Stats(ctx context.Context) (engram.Stats, error) {
	st := engram.Stats{Layers: make(map[string]map[string]int64)}
	rows, err := db.pool.Query(ctx, `SELECT 'turns', namespace, count(*) FROM palace_turns GROUP BY namespace
		UNION ALL SELECT 'memories', namespace, count(*) FROM palace_memories WHERE superseded_by IS NULL AND NOT wrong GROUP BY namespace
		UNION ALL SELECT 'scenes', namespace, count(*) FROM palace_scenes GROUP BY namespace
		UNION ALL SELECT 'facts', namespace, count(*) FROM palace_kg_triples GROUP BY namespace`)
	if err != nil {
		return engram.Stats{}, wrap("stats", err)
	}
	var (
		layer, ns string
		n         int64
	)
	_, err = pgx.ForEachRow(rows, []any{&layer, &ns, &n}, func() error {
		if st.Layers[ns] == nil {
			st.Layers[ns] = map[string]int64{}
		}
		st.Layers[ns][layer] = n
		return nil
	})
	if err != nil {
		return engram.Stats{}, wrap("stats", err)
	}
	return st, nil
}

var (
	_ engram.TurnIndex      = (*DB)(nil)
	_ engram.TurnLookup     = (*DB)(nil)
	_ engram.WorkerMarks    = (*DB)(nil)
	_ engram.KeywordIndexes = (*DB)(nil)
)

// Optimize merges the entries waiting in the pending lists of the
// palace's GIN indexes into the indexes (each search reads a pending list
// through), prunes the journal of vector deletions, and refreshes the
// planner's statistics of the palace's tables: the compact job's work.
func (db *DB) Optimize(ctx context.Context) error {
	_, err := db.pool.Exec(ctx, `SELECT gin_clean_pending_list(c.oid) FROM pg_class c JOIN pg_am a ON a.oid = c.relam
		WHERE c.relkind = 'i' AND a.amname = 'gin' AND c.relname LIKE 'palace\_%'`)
	if err != nil {
		return wrap("optimize", err)
	}
	err = db.update(ctx, "optimize", func(tx pgx.Tx) error {
		if err := lock(ctx, tx, vectorLockKey); err != nil {
			return err
		}
		return pgvectors.Prune(ctx, tx, db.now())
	})
	if err != nil {
		return err
	}
	var tables string
	if err := db.pool.QueryRow(ctx, `SELECT string_agg(quote_ident(tablename), ', ') FROM pg_tables
		WHERE schemaname = current_schema() AND tablename LIKE 'palace\_%'`).Scan(&tables); err != nil {
		return wrap("optimize", err)
	}
	_, err = db.pool.Exec(ctx, `ANALYZE `+tables)
	return wrap("optimize", err)
}
