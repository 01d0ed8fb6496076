package pgpalace

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/kwindex"
	"github.com/engram-dev/engram/internal/sqlrow"
)

// Retrieval units, as package palace keeps them (palace/units.go): a
// session is cut into parts of at most engram.UnitMaxTurns turns and
// engram.UnitMaxBytes of text, in arrival order, each part's id made from
// its first turn (engram.UnitID), so that both palaces cut a session into
// the same parts with the same ids. The parts are written by
// IndexSecondary, after the acknowledgement; a forget or a redaction
// counts their turns again. A unit's change number (seq) takes the next
// one whenever it is made or changes, and each server's keyword index of
// the units follows it, one index a kind. Scene units come with the
// scenes.

// keyUnitsDeleted is the palace_meta key counting the deletions of units.
const keyUnitsDeleted = "units_deleted"

// unitColumns are the columns scanUnit reads, in order.
const unitColumns = `u.id, u.kind, u.namespace, u.session, u.start_ts, u.end_ts, u.turns, u.seq`

// openUnit is the session part a turn would join.
type openUnit struct {
	n, turns, bytes int64
	start, end      int64 // Unix nanoseconds, 0 for none
	changed         bool
}

// addSessionTurns puts each of turns (newly stored, in seq order) into the
// open part of its session, starting a new part when that one is full, in
// tx (under the write lock, which orders the units' change numbers).
func addSessionTurns(ctx context.Context, tx pgx.Tx, turns []engram.Turn) error {
	if len(turns) == 0 {
		return nil
	}
	var seq int64
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM palace_units`).Scan(&seq); err != nil {
		return err
	}
	open := map[engram.SessionKey]*openUnit{}
	var touched []*openUnit
	var unitNs, turnSeqs []int64
	for _, t := range turns {
		key := engram.SessionKey{Namespace: t.Namespace, Session: t.Session}
		u, ok := open[key]
		if !ok {
			u = new(openUnit)
			err := tx.QueryRow(ctx, `SELECT n, turns, bytes, coalesce(start_ts, 0), coalesce(end_ts, 0) FROM palace_units
				WHERE namespace = $1 AND session = $2 AND kind = 'session' ORDER BY n DESC LIMIT 1`, t.Namespace, t.Session).
				Scan(&u.n, &u.turns, &u.bytes, &u.start, &u.end)
			switch {
			case errors.Is(err, pgx.ErrNoRows):
				u = nil
			case err != nil:
				return err
			}
		}
		size := int64(engram.UnitTurnSize(t.Speaker, t.Content))
		if u == nil || u.turns >= engram.UnitMaxTurns || (u.turns > 0 && u.bytes+size > engram.UnitMaxBytes) {
			seq++
			u = new(openUnit)
			found := false
			for _, id := range engram.SessionPartIDs(t.Namespace, t.Session, t.ID, t.Seq) {
				err := tx.QueryRow(ctx, `INSERT INTO palace_units (id, kind, namespace, session, turns, bytes, seq)
					VALUES ($1, 'session', $2, $3, 0, 0, $4) ON CONFLICT (id) DO NOTHING RETURNING n`,
					id, t.Namespace, t.Session, seq).Scan(&u.n)
				if found = err == nil; found {
					break
				}
				if !errors.Is(err, pgx.ErrNoRows) {
					return err
				}
			}
			if !found {
				return fmt.Errorf("session unit of turn %d: both its ids are taken", t.Seq)
			}
		}
		open[key] = u
		if !u.changed {
			u.changed = true
			touched = append(touched, u)
		}
		unitNs, turnSeqs = append(unitNs, u.n), append(turnSeqs, t.Seq)
		u.turns++
		u.bytes += size
		if !t.TS.IsZero() {
			ts := t.TS.UnixNano()
			if u.start == 0 || ts < u.start {
				u.start = ts
			}
			if u.end == 0 || ts > u.end {
				u.end = ts
			}
		}
	}
	if _, err := tx.Exec(ctx, `INSERT INTO palace_unit_turns (unit_n, turn_seq)
		SELECT * FROM unnest($1::bigint[], $2::bigint[]) ON CONFLICT DO NOTHING`, unitNs, turnSeqs); err != nil {
		return err
	}
	for _, u := range touched {
		seq++
		if _, err := tx.Exec(ctx, `UPDATE palace_units SET turns = $1, bytes = $2, start_ts = nullif($3::bigint, 0), end_ts = nullif($4::bigint, 0), seq = $5
			WHERE n = $6`, u.turns, u.bytes, u.start, u.end, seq, u.n); err != nil {
			return err
		}
	}
	return nil
}

// unitsOf returns the units holding the turns of seqs, in their order.
func unitsOf(ctx context.Context, tx pgx.Tx, seqs []int64) ([]int64, error) {
	rows, err := tx.Query(ctx, `SELECT DISTINCT unit_n FROM palace_unit_turns WHERE turn_seq = ANY($1) ORDER BY unit_n`, seqs)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// fixUnits counts the turns of units ns again after a forget or a
// redaction changed them (their turns and text), as package palace's
// forget does: a unit left without a turn is deleted, the others take a
// new change number (their text is read again) and their counts and
// times from the turns they hold. It adds each to res (Units, Removed:
// its vector goes, made again from the text left).
func fixUnits(ctx context.Context, tx pgx.Tx, ns []int64, units *int, removed *[]string) error {
	for _, n := range ns {
		var (
			id   string
			left int64
		)
		err := tx.QueryRow(ctx, `SELECT id, (SELECT count(*) FROM palace_unit_turns WHERE unit_n = $1) FROM palace_units WHERE n = $1`, n).
			Scan(&id, &left)
		if errors.Is(err, pgx.ErrNoRows) {
			continue
		}
		if err != nil {
			return err
		}
		*units++
		*removed = append(*removed, id)
		if left == 0 {
			if _, err := tx.Exec(ctx, `DELETE FROM palace_units WHERE n = $1`, n); err != nil {
				return err
			}
			if err := countDeletion(ctx, tx, keyUnitsDeleted); err != nil {
				return err
			}
			continue
		}
		// bytes as package palace counts them: the speaker in characters,
		// the content in bytes up to engram.UnitTurnBytes.
		if _, err := tx.Exec(ctx, `UPDATE palace_units SET `+unitCounts+`,
			start_ts = (SELECT min(t.ts) FROM palace_unit_turns ut JOIN palace_turns t ON t.seq = ut.turn_seq WHERE ut.unit_n = $1),
			end_ts = (SELECT max(t.ts) FROM palace_unit_turns ut JOIN palace_turns t ON t.seq = ut.turn_seq WHERE ut.unit_n = $1),
			seq = (SELECT max(seq) + 1 FROM palace_units)
			WHERE n = $1`, n, engram.UnitTurnBytes); err != nil {
			return err
		}
	}
	return nil
}

// unitCounts sets the turns and bytes of unit $1 from the turns it holds,
// as package palace counts them: the speaker in characters, the content
// in bytes up to $2 (engram.UnitTurnBytes).
const unitCounts = `turns = (SELECT count(*) FROM palace_unit_turns WHERE unit_n = $1),
	bytes = coalesce((SELECT sum(char_length(t.speaker) + 3 + least(octet_length(t.content), $2))
		FROM palace_unit_turns ut JOIN palace_turns t ON t.seq = ut.turn_seq WHERE ut.unit_n = $1), 0)`

// unitTexts returns the text of each unit of ns: "speaker: content" per
// turn in arrival order (engram.UnitLine).
func unitTexts(ctx context.Context, q pgxQuerier, ns []int64) (map[int64]string, error) {
	rows, err := q.Query(ctx, `SELECT ut.unit_n, t.speaker, t.role, t.content FROM palace_unit_turns ut
		JOIN palace_turns t ON t.seq = ut.turn_seq WHERE ut.unit_n = ANY($1) ORDER BY ut.unit_n, ut.turn_seq`, ns)
	if err != nil {
		return nil, err
	}
	texts := map[int64]*strings.Builder{}
	var (
		n             int64
		speaker, role string
		content       []byte
	)
	if _, err := pgx.ForEachRow(rows, []any{&n, &speaker, &role, &content}, func() error {
		b := texts[n]
		if b == nil {
			b = new(strings.Builder)
			texts[n] = b
		}
		b.WriteString(engram.UnitLine(speaker, role, string(content)))
		return nil
	}); err != nil {
		return nil, err
	}
	out := make(map[int64]string, len(texts))
	for n, b := range texts {
		out[n] = b.String()
	}
	return out, nil
}

// unitChanges reads the units changed after a change number for the
// units' keyword index, with their text.
func unitChanges(ctx context.Context, tx pgx.Tx, after int64, limit int) ([]kwindex.Row, error) {
	q, err := tx.Query(ctx, `SELECT n, seq, id, kind, namespace, start_ts, end_ts FROM palace_units WHERE seq > $1 ORDER BY seq LIMIT $2`, after, limit)
	if err != nil {
		return nil, err
	}
	rows, err := pgx.CollectRows(q, func(r pgx.CollectableRow) (kwindex.Row, error) {
		var (
			row        kwindex.Row
			start, end *int64
		)
		err := r.Scan(&row.Doc.Key, &row.Change, &row.ID, &row.Kind, &row.Doc.Namespace, &start, &end)
		spanDoc(&row.Doc, start, end)
		return row, err
	})
	if err != nil {
		return nil, err
	}
	ns := make([]int64, len(rows))
	for i, r := range rows {
		ns[i] = r.Doc.Key
	}
	texts, err := unitTexts(ctx, tx, ns)
	if err != nil {
		return nil, err
	}
	for i := range rows {
		if rows[i].Doc.Text, err = kwindex.IndexText(texts[rows[i].Doc.Key]); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// SearchUnits ranks the units of kind (engram.UnitSession, UnitScene, or ""
// for both) that hold a word of q.Text and overlap [q.From, q.To) by BM25
// over their full text, best first, at most q.Limit of each kind, as
// package palace's does. Errors: EINVALID for an unknown kind.
func (db *DB) SearchUnits(ctx context.Context, q engram.TextQuery, kind string) ([]engram.UnitHit, error) {
	kinds, err := engram.UnitKinds(kind)
	if err != nil {
		return nil, err
	}
	terms, err := kwindex.QueryTerms(q.Text)
	if err != nil || len(terms) == 0 {
		return nil, err
	}
	limit := min(max(q.Limit, 1), maxSearchLimit)
	f := kwindex.Filter{Namespace: q.Namespace, From: nanosOrZero(q.From), To: nanosOrZero(q.To), Spans: true}
	words := queryWords(termWords(terms))
	var hits []kwindex.Hit
	err = fromIndex(ctx, db.ukw, func() (ok bool, err error) {
		hits, ok, err = db.ukw.Best(ctx, kinds, words, f, limit)
		return ok, err
	})
	if err != nil || len(hits) == 0 {
		return nil, wrap("search units", err)
	}
	units, err := db.unitsByN(ctx, kwindex.Keys(hits))
	if err != nil {
		return nil, wrap("search units", err)
	}
	var out []engram.UnitHit
	for _, h := range hits {
		if u, ok := units[h.Key]; ok { // a unit gone meanwhile is left out
			out = append(out, engram.UnitHit{Unit: u, Score: h.Score})
		}
	}
	return out, nil
}

// ScoreUnits returns the BM25 of q.Text over the full text of each unit of
// ids (of kind, "" for both) that holds a word of it, from the keyword
// index alone, as package palace's does.
func (db *DB) ScoreUnits(ctx context.Context, q engram.TextQuery, ids []string, kind string) ([]engram.UnitScore, error) {
	kinds, err := engram.UnitKinds(kind)
	if err != nil {
		return nil, err
	}
	terms, err := kwindex.QueryTerms(q.Text)
	if err != nil || len(terms) == 0 || len(ids) == 0 {
		return nil, err
	}
	words := queryWords(termWords(terms))
	var hits []kwindex.IDHit
	err = fromIndex(ctx, db.ukw, func() (ok bool, err error) {
		hits, ok, err = db.ukw.Score(ctx, kinds, words, ids)
		return ok, err
	})
	if err != nil {
		return nil, wrap("score units", err)
	}
	out := make([]engram.UnitScore, len(hits))
	for i, h := range hits {
		out[i] = engram.UnitScore{ID: h.ID, Kind: h.Kind, Score: h.Score}
	}
	return out, nil
}

// unitsByN reads the units of ns, by n.
func (db *DB) unitsByN(ctx context.Context, ns []int64) (map[int64]engram.Unit, error) {
	rows, err := db.pool.Query(ctx, `SELECT u.n, `+unitColumns+` FROM palace_units u WHERE u.n = ANY($1)`, ns)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]engram.Unit, len(ns))
	_, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (struct{}, error) {
		var n int64
		u, err := scanUnit(r, &n)
		out[n] = u
		return struct{}{}, err
	})
	return out, err
}

// scanUnit reads a row of extra, then unitColumns.
func scanUnit(r pgx.CollectableRow, extra ...any) (engram.Unit, error) {
	var u engram.Unit
	err := r.Scan(append(extra, &u.ID, &u.Kind, &u.Namespace, &u.Session, sqlrow.Time(&u.Start), sqlrow.Time(&u.End), &u.Turns, &u.Seq)...)
	return u, err
}

// TurnUnits returns the ids of the units holding each of the turns.
func (db *DB) TurnUnits(ctx context.Context, seqs []int64) (map[int64][]string, error) {
	out := make(map[int64][]string, len(seqs))
	if len(seqs) == 0 {
		return out, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT ut.turn_seq, u.id FROM palace_unit_turns ut JOIN palace_units u ON u.n = ut.unit_n
		WHERE ut.turn_seq = ANY($1) ORDER BY ut.turn_seq, u.n`, seqs)
	if err != nil {
		return nil, wrap("turn units", err)
	}
	var (
		seq int64
		id  string
	)
	_, err = pgx.ForEachRow(rows, []any{&seq, &id}, func() error { out[seq] = append(out[seq], id); return nil })
	return out, wrap("turn units", err)
}

// UnitTurnIDs returns the ids of the turns of each unit, in arrival order;
// unknown units are absent.
func (db *DB) UnitTurnIDs(ctx context.Context, unitIDs []string) (map[string][]string, error) {
	out := make(map[string][]string, len(unitIDs))
	if len(unitIDs) == 0 {
		return out, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT u.id, t.id FROM palace_units u JOIN palace_unit_turns ut ON ut.unit_n = u.n
		JOIN palace_turns t ON t.seq = ut.turn_seq WHERE u.id = ANY($1) ORDER BY u.n, ut.turn_seq`, unitIDs)
	if err != nil {
		return nil, wrap("unit turns", err)
	}
	var uid, tid string
	_, err = pgx.ForEachRow(rows, []any{&uid, &tid}, func() error { out[uid] = append(out[uid], tid); return nil })
	return out, wrap("unit turns", err)
}

// UnitsSince returns up to limit units whose change number is above
// after, in change-number order, each with its text.
func (db *DB) UnitsSince(ctx context.Context, after int64, limit int) ([]engram.UnitDoc, error) {
	var out []engram.UnitDoc
	err := pgx.BeginTxFunc(ctx, db.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT u.n, `+unitColumns+` FROM palace_units u WHERE u.seq > $1 ORDER BY u.seq LIMIT $2`, after, max(limit, 1))
		if err != nil {
			return err
		}
		var ns []int64
		out, err = pgx.AppendRows([]engram.UnitDoc(nil), rows, func(r pgx.CollectableRow) (engram.UnitDoc, error) {
			var n int64
			u, err := scanUnit(r, &n)
			ns = append(ns, n)
			return engram.UnitDoc{Unit: u}, err
		})
		if err != nil {
			return err
		}
		texts, err := unitTexts(ctx, tx, ns)
		for i := range out {
			out[i].Text = texts[ns[i]]
		}
		return err
	})
	return out, wrap("units since", err)
}

// SessionStarts returns when each session began (the earliest start of its
// parts); sessions without a dated turn are absent.
func (db *DB) SessionStarts(ctx context.Context, keys []engram.SessionKey) (map[engram.SessionKey]time.Time, error) {
	out := make(map[engram.SessionKey]time.Time, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	nss, sessions := make([]string, len(keys)), make([]string, len(keys))
	for i, k := range keys {
		nss[i], sessions[i] = k.Namespace, k.Session
	}
	rows, err := db.pool.Query(ctx, `SELECT u.namespace, u.session, min(u.start_ts) FROM palace_units u
		JOIN unnest($1::text[], $2::text[]) AS k(namespace, session) ON k.namespace = u.namespace AND k.session = u.session
		WHERE u.kind = 'session' GROUP BY u.namespace, u.session`, nss, sessions)
	if err != nil {
		return nil, wrap("session starts", err)
	}
	var (
		k  engram.SessionKey
		ts time.Time
	)
	_, err = pgx.ForEachRow(rows, []any{&k.Namespace, &k.Session, sqlrow.Time(&ts)}, func() error {
		if !ts.IsZero() {
			out[k] = ts
		}
		return nil
	})
	return out, wrap("session starts", err)
}

var _ engram.UnitIndex = (*DB)(nil)
