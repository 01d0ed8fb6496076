package postgres

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/engram-dev/engram"
)

// correctionsChannel is the channel each Append of the corrections
// journal notifies (with its number).
const correctionsChannel = "engram_corrections"

// Corrections is the corrections journal in the database
// (archive_corrections), shared by every server on it: one JSON line per
// correction, as the file journal (archive.Journal) writes it, numbered
// in commit order. Get it with Archive.Corrections; its methods are safe
// for concurrent use, and fail with EUNAVAILABLE after the Archive's
// Close or when the database cannot be reached.
type Corrections struct{ a *Archive }

// Corrections returns the corrections journal of the database.
func (a *Archive) Corrections() *Corrections { return &Corrections{a: a} }

// JournaledCorrection is a correction of the journal with its number.
type JournaledCorrection struct {
	N int64
	engram.Correction
}

// Append writes c as the journal's next entry and returns its number,
// once PostgreSQL confirmed the commit. The entries are numbered in
// commit order, across every server (the transaction holds the journal's
// advisory lock, and takes a number never given before), so a reader
// that keeps the last number it applied misses none (Since). The commit
// notifies every listening server (see Changed).
func (j *Corrections) Append(ctx context.Context, c engram.Correction) (int64, error) {
	line, err := json.Marshal(c)
	if err != nil {
		return 0, engram.Errorf(engram.EINVALID, "corrections journal: the correction %s: %v", c.ID, err)
	}
	var n int64
	err = j.update(ctx, "append to", func(tx pgx.Tx) error {
		// Past the sequence and past every row: the rows engram migrate
		// copied came without it.
		if err := tx.QueryRow(ctx, `INSERT INTO archive_corrections (n, line) VALUES (
			setval('archive_corrections_n', greatest(nextval('archive_corrections_n'),
				(SELECT coalesce(max(n), 0) + 1 FROM archive_corrections))), $1) RETURNING n`, line).Scan(&n); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, correctionsChannel, strconv.FormatInt(n, 10))
		return err
	})
	return n, err
}

// All returns every correction of the journal, in order.
func (j *Corrections) All(ctx context.Context) ([]engram.Correction, error) {
	var out []engram.Correction
	for n := int64(0); ; {
		page, err := j.Since(ctx, n)
		if err != nil {
			return nil, err
		}
		for _, c := range page {
			out = append(out, c.Correction)
		}
		if len(page) < pageRows {
			return out, nil
		}
		n = page[len(page)-1].N
	}
}

// Since returns the journal's entries after number n, in order, at most
// pageRows of them: a caller that got a full page asks again after the
// last. EINVALID names an entry that does not decode.
func (j *Corrections) Since(ctx context.Context, n int64) ([]JournaledCorrection, error) {
	a := j.a
	if a.closed.Load() {
		return nil, errClosed()
	}
	var out []JournaledCorrection
	var bad error
	err := a.retryRead(ctx, func() error {
		out, bad = out[:0], nil
		rows, err := a.pool.Query(ctx, `SELECT n, line FROM archive_corrections WHERE n > $1 ORDER BY n LIMIT $2`, n, pageRows)
		if err != nil {
			return err
		}
		var c JournaledCorrection
		var line []byte
		_, err = pgx.ForEachRow(rows, []any{&c.N, &line}, func() error {
			if err := json.Unmarshal(line, &c.Correction); err != nil && bad == nil {
				bad = damagedCorrection(c.N, err)
			}
			out = append(out, c)
			c, line = JournaledCorrection{}, nil
			return nil
		})
		return err
	})
	if err != nil {
		return nil, readFailure(ctx, err)
	}
	return out, bad
}

// Rewrite replaces the journal's corrections by what edit returns for
// each, in order (keep false deletes it), in one transaction under the
// journal's lock: how a forget or a redaction reaches the corrections. It
// returns how many changed or went. The numbers of the entries kept stay
// as they are, and a deleted one is never given again. A Rewrite that
// changed entries notifies as an Append does, so that the other servers
// drop from their copies the corrections it deleted.
func (j *Corrections) Rewrite(ctx context.Context, edit func(engram.Correction) (c engram.Correction, keep bool)) (int, error) {
	changed := 0
	err := j.update(ctx, "rewrite", func(tx pgx.Tx) error {
		changed = 0
		rows, err := tx.Query(ctx, `SELECT n, line FROM archive_corrections ORDER BY n`)
		if err != nil {
			return err
		}
		type entry struct {
			n    int64
			line []byte
		}
		entries, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (entry, error) {
			var e entry
			return e, r.Scan(&e.n, &e.line)
		})
		if err != nil {
			return err
		}
		var drop, upd []int64
		var lines [][]byte
		for _, e := range entries {
			var old engram.Correction
			if err := json.Unmarshal(e.line, &old); err != nil {
				return damagedCorrection(e.n, err)
			}
			oldLine, err := json.Marshal(old)
			if err != nil {
				return err
			}
			c, keep := edit(old)
			if !keep {
				drop = append(drop, e.n)
				continue
			}
			line, err := json.Marshal(c)
			if err != nil {
				return engram.Errorf(engram.EINVALID, "corrections journal: the correction %s: %v", c.ID, err)
			}
			if string(line) != string(oldLine) {
				upd, lines = append(upd, e.n), append(lines, line)
			}
		}
		if len(drop) > 0 {
			if _, err := tx.Exec(ctx, `DELETE FROM archive_corrections WHERE n = ANY($1)`, drop); err != nil {
				return err
			}
		}
		if len(upd) > 0 {
			if _, err := tx.Exec(ctx, `UPDATE archive_corrections AS c SET line = u.line
				FROM unnest($1::bigint[], $2::bytea[]) AS u(n, line) WHERE c.n = u.n`, upd, lines); err != nil {
				return err
			}
		}
		changed = len(drop) + len(upd)
		if changed == 0 {
			return nil
		}
		_, err = tx.Exec(ctx, `SELECT pg_notify($1, '')`, correctionsChannel)
		return err
	})
	return changed, err
}

// update runs write in a transaction holding the journal's lock. An
// *engram.Error of write is returned as it is; any other failure is
// EUNAVAILABLE, naming op, and when the commit was not confirmed, says
// the change may or may not be in.
func (j *Corrections) update(ctx context.Context, op string, write func(tx pgx.Tx) error) error {
	a := j.a
	if a.closed.Load() {
		return errClosed()
	}
	fail := func(err error, committing bool) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if ee, ok := err.(*engram.Error); ok {
			return ee
		}
		if bad := RefusedText(err, "nothing was changed"); bad != nil {
			return bad
		}
		msg := "could not " + op + " the corrections journal in PostgreSQL; nothing was changed"
		if committing {
			msg = "PostgreSQL did not confirm the commit of the corrections journal: the change may or may not be in"
		}
		return &engram.Error{Code: engram.EUNAVAILABLE, Message: msg, Err: err}
	}
	tx, err := a.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return fail(err, false)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, correctionsLockKey); err != nil {
		return fail(err, false)
	}
	if err := write(tx); err != nil {
		return fail(err, false)
	}
	if err := tx.Commit(ctx); err != nil {
		_, server := isServerError(err)
		return fail(err, !server)
	}
	return nil
}

// damagedCorrection is the error of an entry whose line does not decode.
func damagedCorrection(n int64, err error) error {
	return engram.Errorf(engram.EINVALID, "the corrections journal in PostgreSQL: entry %d is damaged (%v): restore the database from pg_dump, or mend or delete the row of archive_corrections by hand",
		n, err)
}

// Changed returns a channel that is closed when a correction is next
// appended to the journal, or the journal rewritten (by this Archive or
// another on the database),
// and once the listener has (again) started listening, since an append
// committed before was not notified. Like Notify, it is a broadcast: take
// the channel, then read the entries after the last one applied (Since).
func (j *Corrections) Changed() <-chan struct{} {
	a := j.a
	a.notifyMu.Lock()
	defer a.notifyMu.Unlock()
	return a.corrections
}

// corrected wakes the callers of Changed.
func (a *Archive) corrected() {
	a.notifyMu.Lock()
	defer a.notifyMu.Unlock()
	if !a.closed.Load() {
		close(a.corrections)
		a.corrections = make(chan struct{})
	}
}
