package palace

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/kwindex"
	"github.com/engram-dev/engram/internal/sqlrow"
)

// Bounds of retrieval units (see migration 0007; engram.UnitMaxTurns).
const (
	UnitMaxTurns  = engram.UnitMaxTurns
	UnitMaxBytes  = engram.UnitMaxBytes
	UnitTurnBytes = engram.UnitTurnBytes
)

// keyUnitsSeq is the palace_meta key of the seq through which every stored
// turn has its session unit.
const keyUnitsSeq = "units_seq"

// unitFTS is the keyword index of each kind of unit.
var unitFTS = map[string]string{engram.UnitSession: "unit_sessions_fts", engram.UnitScene: "unit_scenes_fts"}

// unitID, unitTurnSize: engram's (the same in every palace).
var (
	unitID       = engram.UnitID
	unitTurnSize = engram.UnitTurnSize
)

// openUnit is the session part a turn would join.
type openUnit struct {
	n, turns, bytes int64
	start, end      int64 // Unix nanoseconds, 0 for none
	changed         bool
}

// addSessionTurns puts each of turns (newly stored, in seq order) into the
// open part of its session, starting a new part when that one is full,
// inside tx, and returns the parts that changed: the caller re-indexes their
// text (indexUnit) after its other writes (see PutTurns).
func addSessionTurns(ctx context.Context, st stmtFunc, turns []engram.Turn) ([]int64, error) {
	if len(turns) == 0 {
		return nil, nil
	}
	var stmts [5]*sql.Stmt
	for i, q := range []string{qNextUnitSeq, qOpenSessionUnit, qNewSessionUnit, qAddUnitTurn, qUpdateSessionUnit} {
		var err error
		if stmts[i], err = st(q); err != nil {
			return nil, err
		}
	}
	next, get, create, add, update := stmts[0], stmts[1], stmts[2], stmts[3], stmts[4]
	var seq int64
	if err := next.QueryRowContext(ctx).Scan(&seq); err != nil {
		return nil, err
	}
	var units []int64
	open := map[engram.SessionKey]*openUnit{}
	var touched []*openUnit
	for _, t := range turns {
		key := engram.SessionKey{Namespace: t.Namespace, Session: t.Session}
		u, ok := open[key]
		if !ok {
			u = new(openUnit)
			found, err := sqlrow.One(get.QueryRowContext(ctx, t.Namespace, t.Session), &u.n, &u.turns, &u.bytes, &u.start, &u.end)
			if err != nil {
				return nil, err
			}
			if !found {
				u = nil
			}
		}
		size := int64(unitTurnSize(t.Speaker, t.Content))
		if u == nil || u.turns >= UnitMaxTurns || (u.turns > 0 && u.bytes+size > UnitMaxBytes) {
			seq++
			u = new(openUnit)
			found := false
			for _, id := range engram.SessionPartIDs(t.Namespace, t.Session, t.ID, t.Seq) {
				var err error
				if found, err = sqlrow.One(create.QueryRowContext(ctx, id, t.Namespace, t.Session, seq), &u.n); err != nil {
					return nil, fmt.Errorf("session unit of turn %d: %w", t.Seq, err)
				} else if found {
					break
				}
			}
			if !found {
				return nil, fmt.Errorf("session unit of turn %d: both its ids are taken", t.Seq)
			}
		}
		open[key] = u
		if !u.changed {
			u.changed = true
			touched = append(touched, u)
		}
		if _, err := add.ExecContext(ctx, u.n, t.Seq); err != nil {
			return nil, err
		}
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
	for _, u := range touched {
		seq++
		if _, err := update.ExecContext(ctx, u.turns, u.bytes, u.start, u.end, seq, u.n); err != nil {
			return nil, err
		}
		units = append(units, u.n)
	}
	return units, nil
}

// The statements of addSessionTurns and unitText.
const (
	qNextUnitSeq     = `SELECT coalesce(max(seq), 0) FROM units`
	qOpenSessionUnit = `SELECT n, turns, bytes, coalesce(start_ts, 0), coalesce(end_ts, 0)
		FROM units WHERE namespace = ? AND session = ? AND kind = 'session' ORDER BY n DESC LIMIT 1`
	qNewSessionUnit = `INSERT INTO units (id, kind, namespace, session, turns, bytes, seq)
		VALUES (?, 'session', ?, ?, 0, 0, ?) ON CONFLICT (id) DO NOTHING RETURNING n`
	qAddUnitTurn       = `INSERT OR IGNORE INTO unit_turns (unit_n, turn_seq) VALUES (?, ?)`
	qUpdateSessionUnit = `UPDATE units SET turns = ?, bytes = ?, start_ts = nullif(?, 0), end_ts = nullif(?, 0), seq = ?
		WHERE n = ?`
	qUnitText = `SELECT t.speaker, t.role, t.content FROM unit_turns ut JOIN turns t ON t.seq = ut.turn_seq
		WHERE ut.unit_n = ? ORDER BY ut.turn_seq`
)

// putSceneUnit writes the unit of scene s (its turns as far as they are
// stored) inside tx and returns its number; the caller re-indexes its text
// (indexUnit) after its other writes (see PutTurns).
func putSceneUnit(ctx context.Context, tx *sql.Tx, s engram.Scene, seq int64) (int64, error) {
	id := unitID(engram.UnitScene, s.Namespace, s.Session, s.ID)
	start, _ := nanos(s.Start)
	end, _ := nanos(s.End)
	var n int64
	err := tx.QueryRowContext(ctx, `INSERT INTO units (id, kind, namespace, session, start_ts, end_ts, turns, bytes, seq)
		VALUES (?, 'scene', ?, ?, ?, ?, 0, 0, ?)
		ON CONFLICT (id) DO UPDATE SET start_ts = excluded.start_ts, end_ts = excluded.end_ts, seq = excluded.seq
		RETURNING n`, id, s.Namespace, s.Session, start, end, seq).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("unit of scene %s: %w", s.ID, err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM unit_turns WHERE unit_n = ?`, n); err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO unit_turns (unit_n, turn_seq)
		SELECT ?, seq FROM turns WHERE id IN (SELECT value FROM json_each(?))`, n, sqlrow.JSONList(s.Turns)); err != nil {
		return 0, err
	}
	if _, err = tx.ExecContext(ctx, `UPDATE units SET `+unitCounts+` WHERE n = ?1`, n, UnitTurnBytes); err != nil {
		return 0, err
	}
	return n, nil
}

// unitCounts sets the turns and bytes of unit ?1 from the turns it holds,
// each turn's content counted up to ?2 bytes, as unitTurnSize counts it.
const unitCounts = `turns = (SELECT count(*) FROM unit_turns WHERE unit_n = ?1),
	bytes = coalesce((SELECT sum(length(t.speaker) + 3 + min(length(CAST(t.content AS BLOB)), ?2))
		FROM unit_turns ut JOIN turns t ON t.seq = ut.turn_seq WHERE ut.unit_n = ?1), 0)`

// unitText is the text of unit n: "speaker: content" per turn in arrival
// order, each turn's content clipped to UnitTurnBytes.
func unitText(ctx context.Context, st stmtFunc, n int64) (string, error) {
	q, err := st(qUnitText)
	if err != nil {
		return "", err
	}
	rows, err := q.QueryContext(ctx, n)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	err = sqlrow.Each(rows, func() error {
		var speaker, role, content string
		if err := rows.Scan(&speaker, &role, &content); err != nil {
			return err
		}
		b.WriteString(engram.UnitLine(speaker, role, content))
		return nil
	})
	return b.String(), err
}

// indexUnit replaces unit n's entry in its keyword index.
func indexUnit(ctx context.Context, st stmtFunc, kind string, n int64) error {
	table := unitFTS[kind]
	text, err := unitText(ctx, st, n)
	if err != nil {
		return err
	}
	if text, err = kwindex.IndexText(text); err != nil {
		return err
	}
	return reindexTextStmt(ctx, st, table, n, text)
}

// backfillSecondary gives every stored turn after keyUnitsSeq its session
// unit, and every one after keyTrigramSeq its row of turns_trigram: the
// palace of an older engram, opened for the first time by one with units,
// or one whose process stopped before IndexSecondary caught up. It runs at
// Open, in batches.
func (db *DB) backfillSecondary(ctx context.Context) error {
	for {
		var done bool
		err := db.Update(ctx, func(tx *sql.Tx) error {
			var err error
			done, err = db.secondaryThrough(ctx, tx, math.MaxInt64, backfillBatch, func() bool { return false })
			return err
		})
		if err != nil {
			return fmt.Errorf("palace: build session units and substring index: %w", err)
		}
		if done {
			return nil
		}
	}
}

// SecondarySeq returns the seq through which every stored turn has its
// session unit and its substring rows: where IndexSecondary goes on from.
func (db *DB) SecondarySeq(ctx context.Context) (seq int64, err error) {
	err = db.View(ctx, func(tx *sql.Tx) error {
		units, trigram, err := secondaryWatermarks(ctx, tx)
		seq = min(units, trigram)
		return err
	})
	return seq, err
}

// backfillBatch is the most turns a transaction of backfillSecondary
// reads.
const backfillBatch = 2000

// SecondaryBatch is the most turns one IndexSecondary transaction takes
// by default. A step that stop ends early is shorter; one that runs to
// the end writes fewer full-text segments the more it takes, and costs
// less in all (BenchmarkPutTurns; 256 costs little more than one step,
// 128 clearly more).
const SecondaryBatch = 256

// stopEvery is how many turns' substring rows IndexSecondary writes
// between two calls of its stop.
const stopEvery = 8

// IndexSecondary writes, in one transaction, the session units and the
// substring rows of at most limit turns (SecondaryBatch if limit <= 0)
// stored after their watermarks and through seq, and then re-indexes the
// text of the session parts they extended; done when none is left. stop,
// if not nil, is asked between the substring rows it writes: once it
// reports true, IndexSecondary commits what it has written (a turn's rows
// are written whole, and some always are). The indexer calls it between
// batches of PutTurnsSearchable, with a stop that reports a newer turn in
// the archive, so that a turn index waits for little of one step.
func (db *DB) IndexSecondary(ctx context.Context, seq int64, limit int, stop func() bool) (done bool, err error) {
	if limit <= 0 {
		limit = SecondaryBatch
	}
	if stop == nil {
		stop = func() bool { return false }
	}
	// Urgent: the indexer's next batch waits for it.
	err = db.update(ctx, true, func(tx *sql.Tx) error {
		var err error
		done, err = db.secondaryThrough(ctx, tx, seq, limit, stop)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("palace: session units and substring index: %w", err)
	}
	return done, nil
}

// keyTrigramSeq is the palace_meta key of the seq through which every
// stored turn has its row of turns_trigram (migration 0018).
const keyTrigramSeq = "trigram_seq"

// secondaryWatermarks reads keyUnitsSeq and keyTrigramSeq inside tx.
func secondaryWatermarks(ctx context.Context, tx *sql.Tx) (units, trigram int64, err error) {
	if units, err = metaIn(ctx, tx, keyUnitsSeq); err != nil {
		return 0, 0, err
	}
	trigram, err = metaIn(ctx, tx, keyTrigramSeq)
	return units, trigram, err
}

// secondaryThrough writes, inside tx, what the turns stored after the
// watermarks keyUnitsSeq and keyTrigramSeq (through seq) lack: their
// session units and their rows of turns_trigram, at most limit turns, and
// moves the watermarks past them; then, once no such turn is left, it
// re-indexes the text of the session parts those turns extended
// (unit_stale, migration 0019), each part once however many steps
// extended it, as far as limit goes. Done when neither is left; its
// substring rows end early once stop reports true (see IndexSecondary).
// It reads the turns as they are: a forget or a redaction since they were
// stored is what it indexes.
func (db *DB) secondaryThrough(ctx context.Context, tx *sql.Tx, seq int64, limit int, stop func() bool) (done bool, err error) {
	unitsFrom, trigramFrom, err := secondaryWatermarks(ctx, tx)
	if err != nil {
		return false, err
	}
	st := db.writerStmts(ctx, tx)
	if from := min(unitsFrom, trigramFrom); from < seq {
		var turns []engram.Turn
		err = queryTurns(ctx, tx, `SELECT `+turnColumns+` FROM turns t WHERE t.seq > ? AND t.seq <= ? ORDER BY t.seq LIMIT ?`,
			[]any{from, seq, limit}, func(t engram.Turn, _ float64) { turns = append(turns, t) })
		if err != nil {
			return false, err
		}
		last := from
		if len(turns) > 0 {
			last = turns[len(turns)-1].Seq
		}
		if len(turns) < limit {
			// Past the last stored turn, through what the indexer has
			// seen: tombstones and skipped turns have no rows.
			indexed, err := metaIn(ctx, tx, keyIndexedSeq)
			if err != nil {
				return false, err
			}
			last = max(last, min(seq, indexed))
		}
		var unitTurns, trigramTurns []engram.Turn
		for _, t := range turns {
			if t.Seq > unitsFrom {
				unitTurns = append(unitTurns, t)
			}
			if t.Seq > trigramFrom {
				trigramTurns = append(trigramTurns, t)
			}
		}
		if err := setMeta(ctx, tx, keyUnitsSeq, last); err != nil {
			return false, err
		}
		if err := addUnitTurns(ctx, st, unitTurns); err != nil {
			return false, err
		}
		// The substring rows last, and as many as stop allows.
		n, err := putTrigrams(ctx, st, trigramTurns, stop)
		if err != nil {
			return false, err
		}
		if n < len(trigramTurns) {
			return false, setMeta(ctx, tx, keyTrigramSeq, trigramTurns[n-1].Seq)
		}
		if err := setMeta(ctx, tx, keyTrigramSeq, last); err != nil {
			return false, err
		}
		if len(turns) >= limit {
			return false, nil
		}
		limit -= len(turns)
	}
	// Not stopped: a stream of single turns, each a round of the indexer
	// with a newer turn waiting, would list the parts of their sessions
	// again in every round, and none would be done (recall's sync and a
	// forget wait for done).
	return reindexStale(ctx, st, limit)
}

// addUnitTurns puts turns (in seq order) into their session units and
// lists the units in unit_stale, for reindexStale, inside tx.
func addUnitTurns(ctx context.Context, st stmtFunc, turns []engram.Turn) error {
	units, err := addSessionTurns(ctx, st, turns)
	if err != nil {
		return err
	}
	stale, err := st(qStale)
	if err != nil {
		return err
	}
	for _, n := range units {
		if _, err := stale.ExecContext(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

// putTrigrams writes the rows of turns in turns_trigram, inside tx, and
// returns how many it wrote: all, or fewer once stop, asked after every
// stopEvery turns, reports true.
func putTrigrams(ctx context.Context, st stmtFunc, turns []engram.Turn, stop func() bool) (int, error) {
	tri, err := st(qInsertTurnTrigram)
	if err != nil {
		return 0, err
	}
	for i, t := range turns {
		if i > 0 && i%stopEvery == 0 && stop() {
			return i, nil
		}
		if _, err := tri.ExecContext(ctx, t.Seq, kwindex.NFKC(t.Content)); err != nil {
			return i, fmt.Errorf("index turn %d: %w", t.Seq, err)
		}
	}
	return len(turns), nil
}

// reindexStale re-indexes the text of the session parts listed in
// unit_stale, in the order they were made, as many as limit turns of them
// (one part at least), inside tx; done when none is left.
func reindexStale(ctx context.Context, st stmtFunc, limit int) (done bool, err error) {
	limit0 := limit
	q, err := st(qStaleUnits)
	if err != nil {
		return false, err
	}
	rows, err := q.QueryContext(ctx, limit+1) // each costs one turn at least
	if err != nil {
		return false, err
	}
	type part struct {
		n, turns int64
		live     bool
	}
	var parts []part
	err = sqlrow.Each(rows, func() error {
		var p part
		if err := rows.Scan(&p.n, &p.turns, &p.live); err != nil {
			return err
		}
		parts = append(parts, p)
		return nil
	})
	if err != nil {
		return false, err
	}
	var indexed []int64
	for _, p := range parts {
		if len(indexed) > 0 && limit <= 0 {
			break
		}
		if p.live { // else forgotten whole since
			if err := indexUnit(ctx, st, engram.UnitSession, p.n); err != nil {
				return false, err
			}
			limit -= int(max(p.turns, 1))
		}
		indexed = append(indexed, p.n)
	}
	// Off the list after the full-text rows (see PutTurnsSearchable).
	del, err := st(qUnstale)
	if err != nil {
		return false, err
	}
	for _, n := range indexed {
		if _, err := del.ExecContext(ctx, n); err != nil {
			return false, err
		}
	}
	return len(indexed) == len(parts) && len(parts) <= limit0, nil
}

// writeSecondary puts unitTurns (in seq order) into their session units,
// re-indexing the units' text, and writes the rows of trigramTurns in
// turns_trigram, inside tx: the rows of turns stored behind the secondary
// watermarks (PutTurnsSearchable), which no IndexSecondary step through
// the batch would look at.
func (db *DB) writeSecondary(ctx context.Context, tx *sql.Tx, unitTurns, trigramTurns []engram.Turn) error {
	st := db.writerStmts(ctx, tx)
	units, err := addSessionTurns(ctx, st, unitTurns)
	if err != nil {
		return err
	}
	if _, err := putTrigrams(ctx, st, trigramTurns, func() bool { return false }); err != nil {
		return err
	}
	for _, n := range units {
		if err := indexUnit(ctx, st, engram.UnitSession, n); err != nil {
			return err
		}
	}
	return nil
}

// The statements of addUnitTurns and reindexStale.
const (
	qStale      = `INSERT OR IGNORE INTO unit_stale (n) VALUES (?)`
	qUnstale    = `DELETE FROM unit_stale WHERE n = ?`
	qStaleUnits = `SELECT s.n, coalesce(u.turns, 0), u.n IS NOT NULL FROM unit_stale s LEFT JOIN units u ON u.n = s.n
		ORDER BY s.n LIMIT ?`
)

// metaIn reads a palace_meta counter inside tx; 0 while it is unset.
func metaIn(ctx context.Context, tx *sql.Tx, key string) (int64, error) {
	var v int64
	_, err := sqlrow.One(tx.QueryRowContext(ctx, `SELECT value FROM palace_meta WHERE key = ?`, key), &v)
	return v, err
}

// setMeta raises a palace_meta counter to v (it never moves back).
func setMeta(ctx context.Context, tx *sql.Tx, key string, v int64) error {
	_, err := tx.ExecContext(ctx, qSetMeta, key, v)
	return err
}

const qSetMeta = `INSERT INTO palace_meta (key, value) VALUES (?, ?)
	ON CONFLICT (key) DO UPDATE SET value = max(value, excluded.value)`

const unitColumns = `u.id, u.kind, u.namespace, u.session, u.start_ts, u.end_ts, u.turns, u.seq`

func scanUnit(rows *sql.Rows, extra ...any) (engram.Unit, error) {
	var u engram.Unit
	err := rows.Scan(append([]any{&u.ID, &u.Kind, &u.Namespace, &u.Session, sqlrow.Time(&u.Start), sqlrow.Time(&u.End), &u.Turns, &u.Seq}, extra...)...)
	return u, err
}

// scanUnitHits reads rows of unitColumns and a rank as hits, scored as
// SearchUnits scores them.
func scanUnitHits(rows *sql.Rows, add func(engram.UnitHit)) error {
	return sqlrow.Each(rows, func() error {
		var rank float64
		u, err := scanUnit(rows, &rank)
		if err != nil {
			return err
		}
		add(engram.UnitHit{Unit: u, Score: max(-rank, 0)})
		return nil
	})
}

// SearchUnits ranks the units of kind (engram.UnitSession, engram.UnitScene,
// or "" for both) that hold a word of q.Text and overlap [q.From, q.To) by
// BM25 over their full text, best first (higher is better; scores of the
// two kinds come from two indexes and compare within a kind only). At most
// q.Limit units of each kind. Errors: EINVALID for an unknown kind.
func (db *DB) SearchUnits(ctx context.Context, q engram.TextQuery, kind string) ([]engram.UnitHit, error) {
	kinds, err := engram.UnitKinds(kind)
	if err != nil {
		return nil, err
	}
	return searchLayer(q, "search units", func(terms []term, limit int) ([]engram.UnitHit, bool, error) {
		return db.searchUnitsFromMemory(ctx, q, terms, kinds, limit)
	}, func(terms []term, limit int) ([]engram.UnitHit, error) {
		// Each kind is its own index: searched at once, on two read
		// connections.
		found, err := inParallel(len(kinds), func(i int) ([]engram.UnitHit, error) {
			return db.searchUnitKind(ctx, q, terms, kinds[i], limit)
		})
		if err != nil {
			return nil, fmt.Errorf("palace: search units: %w", err)
		}
		return slices.Concat(found...), nil
	})
}

// searchUnitKind ranks the units of one kind by BM25.
func (db *DB) searchUnitKind(ctx context.Context, q engram.TextQuery, terms []term, kind string, limit int) ([]engram.UnitHit, error) {
	table := unitFTS[kind]
	var out []engram.UnitHit
	err := db.View(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+unitColumns+`, f.rank FROM `+table+` f JOIN units u ON u.n = f.rowid
			WHERE `+table+` MATCH ?1 AND (?2 = '' OR u.namespace = ?2)
			AND (?4 = 0 OR u.end_ts >= ?4) AND (?5 = 0 OR u.start_ts < ?5)
			ORDER BY f.rank LIMIT ?3`, matchExpr(terms), q.Namespace, limit, nanosOrZero(q.From), nanosOrZero(q.To))
		if err != nil {
			return err
		}
		return scanUnitHits(rows, func(h engram.UnitHit) { out = append(out, h) })
	})
	return out, err
}

// TurnUnits returns the ids of the units holding each turn of seqs.
func (db *DB) TurnUnits(ctx context.Context, seqs []int64) (map[int64][]string, error) {
	return viewGroups[int64, string](ctx, db, "turn units", len(seqs), `SELECT ut.turn_seq, u.id FROM unit_turns ut JOIN units u ON u.n = ut.unit_n
		WHERE ut.turn_seq IN (SELECT value FROM json_each(?))`, sqlrow.JSONList(seqs))
}

// UnitTurnIDs returns the ids of the turns of each unit, in arrival order.
func (db *DB) UnitTurnIDs(ctx context.Context, unitIDs []string) (map[string][]string, error) {
	return viewGroups[string, string](ctx, db, "unit turns", len(unitIDs), `SELECT u.id, t.id FROM units u JOIN unit_turns ut ON ut.unit_n = u.n
		JOIN turns t ON t.seq = ut.turn_seq WHERE u.id IN (SELECT value FROM json_each(?))
		ORDER BY u.n, ut.turn_seq`, sqlrow.JSONList(unitIDs))
}

// viewGroups reads the rows of (key, value) that query selects for the n
// keys of its argument, a JSON list, into each key's values, in the order
// of the rows. An error names the groups: "palace: what: ".
func viewGroups[K comparable, V any](ctx context.Context, db *DB, what string, n int, query string, keys string) (map[K][]V, error) {
	out := make(map[K][]V, n)
	if n == 0 {
		return out, nil
	}
	err := db.View(ctx, func(tx *sql.Tx) error {
		rows, err := db.readQuery(ctx, tx, query, keys)
		if err != nil {
			return err
		}
		return sqlrow.Groups(rows, out)
	})
	if err != nil {
		return nil, fmt.Errorf("palace: %s: %w", what, err)
	}
	return out, nil
}

// UnitsSince returns up to limit units whose change number is above after,
// in change-number order, each with its text (see unitText).
func (db *DB) UnitsSince(ctx context.Context, after int64, limit int) ([]engram.UnitDoc, error) {
	var out []engram.UnitDoc
	err := db.View(ctx, func(tx *sql.Tx) error {
		type unit struct {
			doc engram.UnitDoc
			n   int64
		}
		units, err := sqlrow.Query(ctx, tx, `SELECT `+unitColumns+`, u.n FROM units u WHERE u.seq > ? ORDER BY u.seq LIMIT ?`,
			[]any{after, max(limit, 1)}, func(r *sql.Rows, u *unit) (err error) {
				u.doc.Unit, err = scanUnit(r, &u.n)
				return err
			})
		if err != nil {
			return err
		}
		st := txStmts(ctx, tx)
		for _, u := range units {
			if u.doc.Text, err = unitText(ctx, st, u.n); err != nil {
				return err
			}
			out = append(out, u.doc)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("palace: units since %d: %w", after, err)
	}
	return out, nil
}

// SessionStarts returns the time of the first dated turn of each session
// of keys (the earliest start of its parts); sessions without one are
// absent.
func (db *DB) SessionStarts(ctx context.Context, keys []engram.SessionKey) (map[engram.SessionKey]time.Time, error) {
	out := make(map[engram.SessionKey]time.Time, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	err := db.View(ctx, func(tx *sql.Tx) error {
		st, err := tx.PrepareContext(ctx, `SELECT min(start_ts) FROM units WHERE namespace = ? AND session = ? AND kind = 'session'`)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, k := range keys {
			if _, done := out[k]; done {
				continue
			}
			var ts time.Time
			if err := st.QueryRowContext(ctx, k.Namespace, k.Session).Scan(sqlrow.Time(&ts)); err != nil {
				return err
			}
			if !ts.IsZero() {
				out[k] = ts
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("palace: session starts: %w", err)
	}
	return out, nil
}

// ScoreUnits returns the BM25 of q.Text over the full text of each unit of
// ids that holds a word of it (higher is better; each kind scored in its own
// index, so scores compare within a kind). Only these units are scored, and
// from the in-memory index no row is read: what the deep path asks about
// the units of its candidates. Where the index has not loaded, one pass
// over FTS5's matching units in rowid order (cheap) computes BM25 for those
// of ids alone; the "+" keeps the rowid test out of FTS5's reach: FTS5
// would run one query per rowid, each recounting every term's documents.
func (db *DB) ScoreUnits(ctx context.Context, q engram.TextQuery, ids []string, kind string) ([]engram.UnitScore, error) {
	kinds, err := engram.UnitKinds(kind)
	if err != nil {
		return nil, err
	}
	terms, err := kwindex.QueryTerms(q.Text)
	if err != nil || len(terms) == 0 || len(ids) == 0 {
		return nil, err
	}
	if hits, ok, err := db.scoreUnitsFromMemory(ctx, terms, ids, kinds); err != nil || ok {
		if err != nil {
			return nil, fmt.Errorf("palace: score units: %w", err)
		}
		return hits, nil
	}
	var out []engram.UnitScore
	err = db.View(ctx, func(tx *sql.Tx) error {
		for _, kind := range kinds {
			table := unitFTS[kind]
			rows, err := db.readQuery(ctx, tx, `SELECT `+unitColumns+`, f.rank FROM `+table+` f JOIN units u ON u.n = f.rowid
				WHERE `+table+` MATCH ?1 AND +f.rowid IN (SELECT n FROM units WHERE kind = ?2 AND id IN (SELECT value FROM json_each(?3)))`,
				matchExpr(terms), kind, sqlrow.JSONList(ids))
			if err != nil {
				return err
			}
			if err := scanUnitHits(rows, func(h engram.UnitHit) {
				out = append(out, engram.UnitScore{ID: h.Unit.ID, Kind: h.Unit.Kind, Score: h.Score})
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("palace: score units: %w", err)
	}
	return out, nil
}
