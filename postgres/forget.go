package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
)

// Known reports whether id is archived (forgotten or not). Unlike the
// file archive's, it asks the database, so it takes a ctx and may fail
// (EUNAVAILABLE).
func (a *Archive) Known(ctx context.Context, id string) (bool, error) {
	if a.closed.Load() {
		return false, errClosed()
	}
	var ok bool
	err := a.retryRead(ctx, func() error {
		return a.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM archive_turns WHERE id = $1)`, id).Scan(&ok)
	})
	if err != nil {
		return false, readFailure(ctx, err)
	}
	return ok, nil
}

// Forgotten reports whether id names a forgotten turn: its latest row is
// a tombstone.
func (a *Archive) Forgotten(ctx context.Context, id string) (bool, error) {
	if a.closed.Load() {
		return false, errClosed()
	}
	var gone bool
	err := a.retryRead(ctx, func() error {
		err := a.pool.QueryRow(ctx, `SELECT ts IS NULL FROM archive_turns WHERE id = $1 ORDER BY seq DESC LIMIT 1`, id).Scan(&gone)
		if errors.Is(err, pgx.ErrNoRows) {
			gone, err = false, nil
		}
		return err
	})
	if err != nil {
		return false, readFailure(ctx, err)
	}
	return gone, nil
}

// Tombstones returns the forgotten ids with the seqs of their tombstones.
func (a *Archive) Tombstones(ctx context.Context) (map[string]int64, error) {
	if a.closed.Load() {
		return nil, errClosed()
	}
	out := map[string]int64{}
	err := a.retryRead(ctx, func() error {
		clear(out)
		rows, err := a.pool.Query(ctx, `SELECT id, seq FROM archive_turns t WHERE ts IS NULL
			AND NOT EXISTS (SELECT 1 FROM archive_turns l WHERE l.id = t.id AND l.seq > t.seq)`)
		if err != nil {
			return err
		}
		var id string
		var seq int64
		_, err = pgx.ForEachRow(rows, []any{&id, &seq}, func() error {
			out[id] = seq
			return nil
		})
		return err
	})
	if err != nil {
		return nil, readFailure(ctx, err)
	}
	return out, nil
}

// Forget replaces the rows of the turns with the given ids by their
// tombstones (archive.Tombstone: only the id, the seq, the receive time
// and f), the line the file archive writes for them, with its crc; ts
// becomes NULL. Turns forgotten before are reported as Unchanged, ids no
// row holds as Unknown. A re-sent forgotten id is a duplicate (Forgotten
// set) unless the turn asks to be resurrected. Errors: EINVALID (Field
// "reason") for a reason over engram.MaxReasonBytes; the others are
// Rewrite's.
func (a *Archive) Forget(ctx context.Context, ids []string, f engram.Forgotten) (archive.RewriteResult, error) {
	if len(f.Reason) > engram.MaxReasonBytes {
		return archive.RewriteResult{}, engram.FieldError("reason", "reason is over %d bytes", engram.MaxReasonBytes)
	}
	return a.journaled(ctx, ids, func(t engram.Turn) (engram.Turn, bool) {
		if t.IsTombstone() {
			return t, false
		}
		return archive.Tombstone(t, f), true
	}, RewriteForget, nil)
}

// Rewrite replaces the rows of the turns with the given ids (the latest
// row of each: a resurrected id's tombstone stays) by the versions edit
// returns: the new line, its crc, and ts (NULL for a tombstone), in one
// transaction under the append lock, so that no server appends meanwhile
// and every server's readers see the old rows or the new ones. A row
// whose line does not read (see Verify) is left and its id reported as
// Unknown, as the file archive does. Files and Copies stay empty: a
// table has neither.
//
// A new version must keep the id and seq of the turn and encode as a line
// (EINVALID otherwise, and nothing is written). Errors: ENOSPACE when the
// database's disk is full; EUNAVAILABLE when the database fails (nothing
// changed, unless the message says the commit was not confirmed) and
// after Close; ctx.Err() when ctx ends first.
//
// The transaction records the rewrite in the rewrite journal (see
// RewritesSince) as a redaction whose spans are not known; Redact records
// them.
func (a *Archive) Rewrite(ctx context.Context, ids []string, edit archive.Edit) (archive.RewriteResult, error) {
	return a.journaled(ctx, ids, edit, RewriteRedact, nil)
}

// Redact is Rewrite for a redaction: the journal entry records r (the
// spans, the marker and the reason the edit applied), which the other
// servers apply to their palaces.
func (a *Archive) Redact(ctx context.Context, ids []string, edit archive.Edit, r Redaction) (archive.RewriteResult, error) {
	return a.journaled(ctx, ids, edit, RewriteRedact, &r)
}

// journaled is Rewrite, recording the rewrite in the journal as kind,
// with red for a redaction.
func (a *Archive) journaled(ctx context.Context, ids []string, edit archive.Edit, kind string, red *Redaction) (archive.RewriteResult, error) {
	if err := ctx.Err(); err != nil {
		return archive.RewriteResult{}, err
	}
	if a.closed.Load() {
		return archive.RewriteResult{}, errClosed()
	}
	var want []string
	seen := map[string]bool{}
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			want = append(want, id)
		}
	}
	var res archive.RewriteResult
	if len(want) == 0 {
		return res, nil
	}
	res, err := a.rewrite(ctx, want, edit, kind, red)
	if err == nil || ctx.Err() != nil {
		return res, err
	}
	var we *writeError
	if errors.As(err, &we) && we.broken && !we.committing {
		// As for appends: a connection the database restarted under.
		a.pool.Reset()
		res, err = a.rewrite(ctx, want, edit, kind, red)
	}
	if errors.As(err, &we) {
		return archive.RewriteResult{}, rewriteFailure(we)
	}
	return res, err
}

// rewriteFailure is the error a Rewrite caller gets for a failed
// transaction.
func rewriteFailure(e *writeError) error {
	if pe, ok := isServerError(e.err); ok && pe.Code == sqlDiskFull {
		return &engram.Error{Code: engram.ENOSPACE, Message: "the disk of the PostgreSQL archive is full; nothing was rewritten", Err: e.err}
	}
	if bad := RefusedText(e.err, "nothing was rewritten"); bad != nil {
		return bad
	}
	if e.committing {
		return &engram.Error{Code: engram.EUNAVAILABLE,
			Message: "PostgreSQL did not confirm the commit: the turns may or may not be rewritten; rewrite them again", Err: e.err}
	}
	return &engram.Error{Code: engram.EUNAVAILABLE, Message: "the PostgreSQL archive could not " + e.op + "; nothing was rewritten", Err: e.err}
}

// rewrite runs one Rewrite transaction. Its errors are an *engram.Error
// (EINVALID), ctx's, or a *writeError.
func (a *Archive) rewrite(ctx context.Context, ids []string, edit archive.Edit, kind string, red *Redaction) (archive.RewriteResult, error) {
	var res archive.RewriteResult
	var redaction []byte
	if red != nil {
		var err error
		if redaction, err = json.Marshal(red); err != nil {
			return res, engram.Errorf(engram.EINVALID, "archive: the redaction to record: %v", err)
		}
	}
	conn, err := a.pool.Acquire(ctx)
	if err != nil {
		return res, &writeError{op: "connect", err: err}
	}
	defer conn.Release()
	fail := func(op string, err error) (archive.RewriteResult, error) {
		if cerr := ctx.Err(); cerr != nil {
			return archive.RewriteResult{}, cerr
		}
		return archive.RewriteResult{}, &writeError{op: op, err: err, broken: conn.Conn().IsClosed()}
	}
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return fail("begin a transaction", err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, appendLockKey); err != nil {
		return fail("take the append lock", err)
	}
	found, err := latestRows(ctx, tx, ids)
	if err != nil {
		return fail("read the turns", err)
	}

	var (
		seqs  []int64
		crcs  []int64
		lines [][]byte
		tss   []*time.Time
		reds  []bool
	)
	readable := map[string]bool{}
	changed := map[string]bool{}
	for _, r := range found {
		t, err := a.decode(r.seq, r.id, r.crc, r.line)
		if err != nil {
			continue // not readable: Unknown, as in the file archive
		}
		readable[t.ID] = true
		nt, ok := edit(t)
		if !ok {
			continue
		}
		if nt.ID != t.ID || nt.Seq != t.Seq {
			return archive.RewriteResult{}, engram.Errorf(engram.EINVALID, "archive: a rewrite must keep the id and seq of turn %d", t.Seq)
		}
		line, err := archive.EncodeLine(nt)
		if err != nil {
			return archive.RewriteResult{}, engram.Errorf(engram.EINVALID, "archive: the new version of turn %d: %v", t.Seq, err)
		}
		line = line[:len(line)-1]
		crc, _ := archive.LineCRC(line)
		var ts *time.Time
		if !nt.IsTombstone() {
			v := nt.TS.UTC()
			ts = &v
		}
		seqs, crcs, lines = append(seqs, t.Seq), append(crcs, int64(crc)), append(lines, line)
		tss, reds = append(tss, ts), append(reds, nt.Redacted != nil && !nt.IsTombstone())
		res.Changed = append(res.Changed, archive.Rewritten{Old: t, New: nt})
		changed[t.ID] = true
	}
	for _, id := range ids {
		switch {
		case !readable[id]:
			res.Unknown = append(res.Unknown, id)
		case !changed[id]:
			res.Unchanged = append(res.Unchanged, id)
		}
	}
	if len(seqs) == 0 {
		return res, nil
	}
	if _, err := tx.Exec(ctx, `UPDATE archive_turns AS t SET line = u.line, crc = u.crc, ts = u.ts, redacted = u.redacted
		FROM unnest($1::bigint[], $2::bigint[], $3::bytea[], $4::timestamptz[], $5::boolean[]) AS u(seq, crc, line, ts, redacted)
		WHERE t.seq = u.seq`, seqs, crcs, lines, tss, reds); err != nil {
		return fail("rewrite the turns", err)
	}
	if err := deleteVectors(ctx, tx, seqs); err != nil {
		return fail("delete the rewritten turns' vectors", err)
	}
	changedIDs := make([]string, len(res.Changed))
	for i, c := range res.Changed {
		changedIDs[i] = c.New.ID
	}
	if err := tx.QueryRow(ctx, `INSERT INTO archive_rewrites (kind, ids, seqs, redaction) VALUES ($1, $2, $3, $4) RETURNING n`,
		kind, changedIDs, seqs, redaction).Scan(&res.Journal); err != nil {
		return fail("record the rewrite in the journal", err)
	}
	// Delivered at the commit to every listening server (see Rewrites).
	if _, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, rewriteChannel, strconv.Itoa(len(seqs))); err != nil {
		return fail("notify the rewrite", err)
	}
	if err := tx.Commit(ctx); err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return archive.RewriteResult{}, cerr
		}
		_, server := isServerError(err)
		return archive.RewriteResult{}, &writeError{op: "commit", err: err, committing: !server || conn.Conn().IsClosed()}
	}
	return res, nil
}

// storedRow is a row of archive_turns as a rewrite reads it.
type storedRow struct {
	seq  int64
	id   string
	crc  int64
	line []byte
}

// latestRows reads the latest row of each of ids in tx, in seq order.
func latestRows(ctx context.Context, tx pgx.Tx, ids []string) ([]storedRow, error) {
	rows, err := tx.Query(ctx, `SELECT DISTINCT ON (id) seq, id, crc, line FROM archive_turns
		WHERE id = ANY($1) ORDER BY id, seq DESC`, ids)
	if err != nil {
		return nil, err
	}
	var found []storedRow
	var r storedRow
	_, err = pgx.ForEachRow(rows, []any{&r.seq, &r.id, &r.crc, &r.line}, func() error {
		found = append(found, r)
		r.line = nil
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(found, func(x, y storedRow) int { return int(x.seq - y.seq) })
	return found, nil
}

// Verify rereads every row, checks its line's crc and form and that the
// row's seq, id and crc are the line's, and reports each row that fails
// as a Problem (Kind checksum or malformed, Path the table's name, Seq
// and ID the row's). It reads what was committed when it started; the
// error is for a failure to read (or ctx ending), not for what was found.
// Files stays 0; Lines counts rows.
func (a *Archive) Verify(ctx context.Context) (archive.Report, error) {
	var rep archive.Report
	if a.closed.Load() {
		return rep, errClosed()
	}
	end, err := a.Refresh(ctx)
	if err != nil {
		return rep, err
	}
	after := int64(0)
	for after < end {
		var page []struct {
			seq  int64
			id   string
			crc  int64
			line []byte
		}
		err := a.retryRead(ctx, func() error {
			page = page[:0]
			rows, err := a.pool.Query(ctx, `SELECT seq, id, crc, line FROM archive_turns
				WHERE seq > $1 AND seq <= $2 ORDER BY seq LIMIT $3`, after, end, pageRows)
			if err != nil {
				return err
			}
			var r struct {
				seq  int64
				id   string
				crc  int64
				line []byte
			}
			_, err = pgx.ForEachRow(rows, []any{&r.seq, &r.id, &r.crc, &r.line}, func() error {
				page = append(page, r)
				r.line = nil
				return nil
			})
			return err
		})
		if err != nil {
			return rep, readFailure(ctx, err)
		}
		if len(page) == 0 {
			break
		}
		for _, r := range page {
			after = r.seq
			rep.Lines++
			rep.Bytes += int64(len(r.line)) + 1 // as a line of a file
			t, err := a.decode(r.seq, r.id, r.crc, r.line)
			if err != nil {
				kind := archive.ProblemMalformed
				if errors.Is(err, archive.ErrChecksum) {
					kind = archive.ProblemChecksum
				}
				rep.Problems = append(rep.Problems, archive.Problem{Kind: kind, Path: "archive_turns",
					Err: fmt.Errorf("seq %d: %w", r.seq, err), Seq: r.seq, ID: r.id})
				continue
			}
			if t.IsTombstone() {
				rep.Forgotten++
			} else {
				rep.Turns++
			}
		}
	}
	return rep, nil
}

// Error lets a writeError travel as an error inside this package; callers
// get public()'s or rewriteFailure's.
func (e *writeError) Error() string { return e.op + ": " + e.err.Error() }
