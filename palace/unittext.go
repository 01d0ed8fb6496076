package palace

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	engram "github.com/engram-dev/engram"
)

// The session parts' full-text rows (unit_sessions_fts) are written behind
// the turns, not in the transaction that stores them. A part holds up to
// UnitMaxTurns turns and its row is its whole text, so writing it again
// with every turn made a single-turn commit index some thirty turns' words
// where the turn itself has one, and FTS5 merges its segments inside
// whichever commit fills a level: the slow tail of an acknowledgement. Now
// PutTurns grows the parts (units, unit_turns, each growth a change number)
// and the unit text follower writes the rows of the parts changed since
// its watermark (palace_meta unit_text_seq) in a background transaction of
// its own, at most once per unitTextEvery: under a steady stream of turns
// a part's row is written once per run, not once per turn.
//
// What reads the rows: FTS5's searches of the units (SearchUnits,
// ScoreUnits) when the in-memory index cannot answer (a command that does
// not load it, a server while it loads). Those see a part's newest turns
// once the follower has run, within unitTextEvery of the turn's commit;
// the in-memory index reads the parts' text from their turns and is not
// behind. Close writes what is left, and a palace opened with rows behind
// its watermark (a crash) has them written at once.

// keyUnitTextSeq is the palace_meta key of the units' change number
// through which the session parts' full-text rows are current.
const keyUnitTextSeq = "unit_text_seq"

// unitTextEvery is the least time between two runs of the follower.
const unitTextEvery = 250 * time.Millisecond

// unitTextBatch is the most parts one transaction of the follower writes;
// unitTextHold is how long it writes before it gives way to a turn's
// commit waiting for the writer. Giving way after every part made a
// backlog (a bulk ingest's parts) a transaction and a commit a part.
const (
	unitTextBatch = 256
	unitTextHold  = 2 * time.Millisecond
)

// unitTexter is the follower's goroutine.
type unitTexter struct {
	db     *DB
	wake   chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newUnitTexter(db *DB) *unitTexter {
	ctx, cancel := context.WithCancel(context.Background())
	u := &unitTexter{db: db, wake: make(chan struct{}, 1), ctx: ctx, cancel: cancel}
	u.poke() // rows a crash left behind
	u.wg.Add(1)
	go func() {
		defer u.wg.Done()
		u.loop()
	}()
	return u
}

// poke tells the follower that parts changed. It never blocks.
func (u *unitTexter) poke() {
	select {
	case u.wake <- struct{}{}:
	default:
	}
}

func (u *unitTexter) loop() {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-u.ctx.Done():
			return
		case <-u.wake:
		}
		// A failure (a full disk, the palace closing) is retried at the
		// next poke; Close writes what is left.
		u.db.writeUnitText(u.ctx) //nolint:errcheck
		t.Reset(unitTextEvery)
		select {
		case <-u.ctx.Done():
			return
		case <-t.C:
		}
	}
}

// close stops the follower.
func (u *unitTexter) close() {
	u.cancel()
	u.wg.Wait()
}

// FlushUnitText writes the full-text rows of every session part changed
// since the follower last ran, in the caller's goroutine: after it,
// FTS5's searches of the units see every stored turn.
func (db *DB) FlushUnitText(ctx context.Context) error {
	if err := db.writeUnitText(ctx); err != nil {
		return fmt.Errorf("palace: write the session parts' text: %w", err)
	}
	return nil
}

// unitTextCurrent writes the session parts' rows the follower has not
// written yet, if kinds holds the session parts: FTS5's searches of them
// see every stored turn, as the in-memory index does.
func (db *DB) unitTextCurrent(ctx context.Context, kinds []string) error {
	if !slices.Contains(kinds, engram.UnitSession) {
		return nil
	}
	var behind bool
	err := db.View(ctx, func(tx *sql.Tx) error {
		// The newest session part, by the seq index backwards.
		return tx.QueryRowContext(ctx, `SELECT coalesce((SELECT seq FROM units WHERE kind = ? ORDER BY seq DESC LIMIT 1), 0) >
			coalesce((SELECT value FROM palace_meta WHERE key = ?), 0)`, engram.UnitSession, keyUnitTextSeq).Scan(&behind)
	})
	if err != nil || !behind {
		return err
	}
	return db.writeUnitText(ctx)
}

// writeUnitText writes the rows of the parts changed after the watermark,
// unitTextBatch to a transaction that gives way to the turn index, up to
// the parts' state when it began: the parts turns change meanwhile wait
// for the next run, or a stream of single turns would keep it writing a
// part a turn, as the turns' commits did.
func (db *DB) writeUnitText(ctx context.Context) error {
	until := int64(-1)
	for {
		wrote := 0
		err := db.Update(ctx, func(tx *sql.Tx) error {
			wrote = 0
			var from int64
			err := tx.QueryRowContext(ctx, `SELECT value FROM palace_meta WHERE key = ?`, keyUnitTextSeq).Scan(&from)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			if until < 0 {
				if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM units`).Scan(&until); err != nil {
					return err
				}
			}
			type part struct{ n, seq int64 }
			parts, err := queryRows(ctx, tx, `SELECT n, seq FROM units WHERE seq > ? AND seq <= ? AND kind = ? ORDER BY seq LIMIT ?`,
				[]any{from, until, engram.UnitSession, unitTextBatch}, func(r *sql.Rows, p *part) error { return r.Scan(&p.n, &p.seq) })
			if err != nil {
				return err
			}
			st := db.writerStmts(ctx, tx)
			last, start := from, time.Now()
			for i, p := range parts {
				if i > 0 && time.Since(start) >= unitTextHold && db.yieldWriter() {
					break
				}
				if err := indexUnit(ctx, st, engram.UnitSession, p.n); err != nil {
					return err
				}
				last, wrote = p.seq, wrote+1
			}
			if last == from {
				return nil
			}
			return setMeta(ctx, tx, keyUnitTextSeq, last)
		})
		if err != nil || wrote == 0 {
			return err
		}
	}
}
