package archive

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/engram-dev/engram"
)

// Stream calls fn for every readable turn with Seq > afterSeq, in seq
// order, up to the last turn committed when Stream was called, and stops
// at the first error fn returns, which it returns as is. Recent turns come
// from memory, older ones from the files. Unreadable lines are skipped
// with a warning. Stream returns EUNAVAILABLE after Close.
//
// fn may call the Archive, Append included.
func (a *Archive) Stream(ctx context.Context, afterSeq int64, fn func(engram.Turn) error) error {
	a.mu.RLock()
	if a.closed {
		a.mu.RUnlock()
		return errClosed()
	}
	turns, ok := a.tail.since(afterSeq)
	var files []fileInfo
	if !ok {
		files = slices.Clone(a.files)
	}
	a.mu.RUnlock()

	if ok {
		for _, t := range turns {
			if err := ctx.Err(); err != nil {
				return err
			}
			// The cache's meta must not change if fn changes its copy.
			t.Meta = bytes.Clone(t.Meta)
			if err := fn(t); err != nil {
				return err
			}
		}
		return nil
	}
	r := reader{a: a, after: afterSeq}
	for i := range files {
		if files[i].lastSeq <= afterSeq {
			continue
		}
		if err := r.file(ctx, files, i, func(t engram.Turn) error {
			if t.Seq <= afterSeq {
				return nil
			}
			return fn(t)
		}); err != nil {
			return err
		}
	}
	return nil
}

// ScanTime calls fn for every readable turn whose TS lies in [from, to),
// in seq order, up to the last turn committed when ScanTime was called,
// and stops at the first error fn returns, which it returns as is. Files
// whose turns all lie outside the range are not read. ScanTime returns
// EUNAVAILABLE after Close.
func (a *Archive) ScanTime(ctx context.Context, from, to time.Time, fn func(engram.Turn) error) error {
	a.mu.RLock()
	if a.closed {
		a.mu.RUnlock()
		return errClosed()
	}
	files := slices.Clone(a.files)
	a.mu.RUnlock()

	if !from.Before(to) {
		return nil
	}
	r := reader{a: a}
	for i := range files {
		fi := &files[i]
		// TS is the client's time, so any day file may hold any TS; the
		// range of each file says which ones to open.
		if !fi.hasTS || fi.maxTS.Before(from) || !fi.minTS.Before(to) {
			continue
		}
		if err := r.file(ctx, files, i, func(t engram.Turn) error {
			if t.IsTombstone() || t.TS.Before(from) || !t.TS.Before(to) {
				return nil
			}
			return fn(t)
		}); err != nil {
			return err
		}
	}
	return nil
}

// reader reads day files for Stream and ScanTime.
type reader struct {
	a    *Archive
	prev int64 // highest seq read so far
	// after skips the lines of seq after or below it unread (their seq
	// peeked, see peekSeq): a reader far behind the tail cache, such as
	// the vector indexer under a steady ingest, read and decoded the whole
	// day file at every catch-up, some 30,000 lines, to use its last few.
	after int64
}

// file calls fn for every readable turn in the committed part of
// files[i], skipping with a warning the lines that do not decode and those
// whose seq is not above the one before (only a hand edit does that; Open
// skipped them too), so that callers always see increasing seqs.
func (r *reader) file(ctx context.Context, files []fileInfo, i int, fn func(engram.Turn) error) error {
	fi := &files[i]
	// Files skipped whole still count for the order: their last seq is a
	// floor for the lines of this one.
	for j := i - 1; j >= 0; j-- {
		if files[j].lastSeq > 0 {
			r.prev = max(r.prev, files[j].lastSeq)
			break
		}
	}
	f, size, err := r.a.openCommitted(fi)
	if err != nil {
		return err
	}
	defer f.Close()
	var fnErr error
	_, err = eachLine(f, size, func(line []byte, num int, _ int64) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if r.after > 0 {
			if seq, ok := peekSeq(line); ok && seq <= r.after {
				r.prev = max(r.prev, seq)
				return nil
			}
		}
		t, err := DecodeLine(line)
		if err != nil {
			r.a.log.Warn("archive: unreadable line skipped; engram doctor names it and its fix",
				logKeyPath, fi.path, logKeyLine, num, logKeyErr, err)
			return nil
		}
		if t.Seq <= r.prev {
			r.a.log.Warn("archive: line with a seq out of order skipped",
				logKeyPath, fi.path, logKeyLine, num, logKeySeq, t.Seq)
			return nil
		}
		r.prev = t.Seq
		if err := fn(t); err != nil {
			fnErr = err
			return err
		}
		return nil
	})
	switch {
	case fnErr != nil:
		return fnErr
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case err != nil:
		return fmt.Errorf("archive: read %s: %w", fi.path, err)
	}
	return nil
}

// eachLine calls fn for every complete ('\n'-terminated) line in r[0:size],
// with its 1-based number and its offset, and returns the offset just past
// the last complete line: bytes from there to size are a torn line. The
// line passed to fn is only valid during the call.
func eachLine(r io.ReaderAt, size int64, fn func(line []byte, num int, off int64) error) (int64, error) {
	br := bufio.NewReaderSize(io.NewSectionReader(r, 0, size), 64<<10)
	var long []byte // a line longer than br's buffer, gathered
	var off int64
	num := 0
	for {
		chunk, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long, chunk...)
			continue
		}
		line := chunk
		if len(long) > 0 {
			long = append(long, chunk...)
			line = long
		}
		if err == io.EOF {
			return off, nil // line, if any, is torn
		}
		if err != nil {
			return off, err
		}
		num++
		if err := fn(line, num, off); err != nil {
			return off, err
		}
		off += int64(len(line))
		long = long[:0]
	}
}
