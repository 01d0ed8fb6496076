package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
)

// pageRows is how many rows a reader takes per query. Readers page by seq
// rather than hold one query open, so that a slow fn holds no connection
// and no snapshot, and may call the Archive (Append included).
const pageRows = 1000

// Stream calls fn for every readable turn with Seq > afterSeq, in seq
// order, up to the last turn committed when Stream was called, and stops
// at the first error fn returns, which it returns as is. Rows whose line
// does not decode, or does not match the row's seq, id or crc, are skipped
// with a warning and counted (Stats.CorruptRows). Stream returns
// EUNAVAILABLE after Close or when the database fails.
//
// Appends commit in seq order (see Append), so every seq up to the end
// read at the start is committed by then, and paging by seq misses none.
func (a *Archive) Stream(ctx context.Context, afterSeq int64, fn func(engram.Turn) error) error {
	return a.scan(ctx, afterSeq, nil, fn)
}

// ScanTime calls fn for every readable turn whose TS lies in [from, to),
// in seq order, up to the last turn committed when ScanTime was called,
// and stops at the first error fn returns, which it returns as is. It
// returns EUNAVAILABLE after Close or when the database fails.
func (a *Archive) ScanTime(ctx context.Context, from, to time.Time, fn func(engram.Turn) error) error {
	if a.closed.Load() {
		return errClosed()
	}
	if !from.Before(to) {
		return nil
	}
	// The column has microseconds and the line nanoseconds: the query
	// takes every row whose microsecond may hold a match, and the exact
	// bounds are checked on the decoded turn.
	lo, hi := clampTime(from).Truncate(time.Microsecond), clampTime(to).Truncate(time.Microsecond)
	return a.scan(ctx, 0, []time.Time{lo, hi}, func(t engram.Turn) error {
		if t.IsTombstone() || t.TS.Before(from) || !t.TS.Before(to) {
			return nil
		}
		return fn(t)
	})
}

// clampTime keeps t within the years a turn's time may have (0 to 9999),
// which timestamptz holds.
func clampTime(t time.Time) time.Time {
	t = t.UTC()
	if t.Year() < 0 {
		return time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if t.Year() > 9999 {
		return time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	return t
}

// scan pages through the rows after afterSeq, those whose ts lies in
// [span[0], span[1]] when span is set, and calls fn for each readable one.
func (a *Archive) scan(ctx context.Context, afterSeq int64, span []time.Time, fn func(engram.Turn) error) error {
	end, err := a.Refresh(ctx)
	if err != nil {
		return err
	}
	type row struct {
		seq  int64
		id   string
		crc  int64
		line []byte
	}
	var page []row
	for afterSeq < end {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := a.retryRead(ctx, func() error {
			page = page[:0]
			var rows pgx.Rows
			var err error
			if span == nil {
				rows, err = a.pool.Query(ctx, `SELECT seq, id, crc, line FROM archive_turns
					WHERE seq > $1 AND seq <= $2 ORDER BY seq LIMIT $3`, afterSeq, end, pageRows)
			} else {
				rows, err = a.pool.Query(ctx, `SELECT seq, id, crc, line FROM archive_turns
					WHERE seq > $1 AND seq <= $2 AND ts >= $4 AND ts <= $5 ORDER BY seq LIMIT $3`,
					afterSeq, end, pageRows, span[0], span[1])
			}
			if err != nil {
				return err
			}
			var r row
			_, err = pgx.ForEachRow(rows, []any{&r.seq, &r.id, &r.crc, &r.line}, func() error {
				page = append(page, r)
				r.line = nil // Scan reuses a non-nil slice
				return nil
			})
			return err
		})
		if err != nil {
			return readFailure(ctx, err)
		}
		if len(page) == 0 {
			return nil
		}
		for _, r := range page {
			afterSeq = r.seq
			t, err := a.decode(r.seq, r.id, r.crc, r.line)
			if err != nil {
				a.corrupt.Add(1)
				a.log.Warn("postgres archive: unreadable row skipped", logKeySeq, r.seq, logKeyErr, err)
				continue
			}
			if err := fn(t); err != nil {
				return err
			}
		}
		if len(page) < pageRows {
			return nil
		}
	}
	return nil
}

// decode reads a row's line, checking its crc, and that the row's seq,
// id and crc are the line's.
func (a *Archive) decode(seq int64, id string, crc int64, line []byte) (engram.Turn, error) {
	t, err := archive.DecodeLine(line)
	if err != nil {
		return engram.Turn{}, err
	}
	sum, _ := archive.LineCRC(line) // DecodeLine checked it is there
	if t.Seq != seq || t.ID != id || int64(sum) != crc {
		return engram.Turn{}, fmt.Errorf("%w: the row says seq %d, id %q, crc %08x; its line says seq %d, id %q, crc %08x",
			archive.ErrChecksum, seq, id, crc, t.Seq, t.ID, sum)
	}
	return t, nil
}
