package archive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/groupcommit"
)

// request is one Append call waiting for the writer.
type request struct {
	ctx     context.Context
	turns   []engram.Turn // the archive's own copy, checked
	rewrite *rewriteReq   // set for a Rewrite instead of turns
	done    chan response // buffered: the writer never blocks on an answer
}

type response struct {
	res     []engram.Appended
	rewrite *RewriteResult
	err     error
}

// Append archives turns and returns, for each, its id and seq, or
// Duplicate with the original seq when its id is already archived (also
// earlier in the same call). It returns only after the turns are fsynced.
// Ids are kept when given and generated (ULIDs) when not; seq and
// received_at are always assigned here. A zero TS is set to received_at.
// Meta is stored compacted.
//
// Concurrent calls are written together: one write and one fsync per
// batch (group commit).
//
// Errors: an *engram.Error with code EINVALID (Field "turns[i].name") for
// a turn no line can hold; ENOSPACE when the disk is full and EUNAVAILABLE
// for another write failure, after which nothing of the call is archived
// and the archive stays usable; EUNAVAILABLE after a failed fsync (until
// the archive is reopened) and after Close; ctx.Err() when ctx ends before
// the turns are written. Once written, the call is answered normally even
// if ctx ends meanwhile.
func (a *Archive) Append(ctx context.Context, turns []engram.Turn) ([]engram.Appended, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	own, err := Prepare(turns)
	if err != nil {
		return nil, err
	}
	r := &request{ctx: ctx, turns: own, done: make(chan response, 1)}
	select {
	case a.reqs <- r:
	case <-a.ctx.Done():
		return nil, errClosed()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	// Not selecting on ctx here: once taken, the request may be on disk,
	// and the caller must learn its seqs.
	resp := <-r.done
	return resp.res, resp.err
}

// Prepare returns the copy of turns an archive writes, checked as Append
// checks them: meta compacted, TS in UTC, Seq, ReceivedAt and Forgotten
// cleared (the archive assigns them). It returns an *engram.Error with code
// EINVALID and Field "turns[i].name" for the first turn no line can hold.
// Every archive that writes this package's lines (the PostgreSQL one too)
// checks its input with it, so that they refuse the same turns alike.
func Prepare(turns []engram.Turn) ([]engram.Turn, error) {
	own := make([]engram.Turn, len(turns))
	for i, t := range turns {
		meta, merr := engram.NormalizeMeta(t.Meta, 0)
		if merr != nil {
			return nil, engram.FieldError(fmt.Sprintf("turns[%d].meta", i), "%s", merr.Message)
		}
		t.Meta = meta
		t.Seq, t.ReceivedAt, t.Forgotten = 0, time.Time{}, nil
		t.TS = t.TS.UTC()
		if field, why := checkFields(&t); field != "" {
			return nil, engram.FieldError(fmt.Sprintf("turns[%d].%s", i, field), "%s %s", field, why)
		}
		own[i] = t
	}
	return own, nil
}

// run is the writer goroutine: it takes a request, then every other one
// already waiting, and commits them together. While it fsyncs, new
// requests queue up for the next batch, so the batch grows with the load.
func (a *Archive) run() {
	defer a.wg.Done()
	// No write before the id map is complete: a re-sent id must be found.
	<-a.idsReady
	if a.idsErr != nil {
		a.poison = a.idsErr
	}
	groupcommit.Run(a.ctx.Done(), a.reqs, maxBatchRequests, a.commit)
}

// commit writes a batch, fsyncs it and answers every request in it: the
// appends together, then the rewrites one by one.
func (a *Archive) commit(batch []*request) {
	var appends, rewrites []*request
	for _, r := range batch {
		if r.rewrite != nil {
			rewrites = append(rewrites, r)
		} else {
			appends = append(appends, r)
		}
	}
	a.commitAppends(appends)
	for _, r := range rewrites {
		if err := r.ctx.Err(); err != nil {
			r.done <- response{err: err}
			continue
		}
		res, err := a.doRewrite(r.rewrite)
		r.done <- response{rewrite: &res, err: err}
	}
}

// commitAppends writes the turns of a batch, fsyncs them and answers
// every request.
func (a *Archive) commitAppends(batch []*request) {
	live := make([]*request, 0, len(batch))
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.done <- response{err: err}
			continue
		}
		live = append(live, r)
	}
	if len(live) == 0 {
		return
	}
	fail := func(err error) {
		for _, r := range live {
			r.done <- response{err: err}
		}
	}
	if a.poison != nil {
		fail(a.poison)
		return
	}

	// One receive time per batch: a batch then lands in one file, and a
	// wall clock stepping back cannot reorder days.
	now := a.now().UTC()
	if now.Before(a.lastRecv) {
		now = a.lastRecv
	}
	seq := a.lastSeq // only this goroutine writes it
	var pending map[string]int64
	var added []engram.Turn
	buf := a.lineBuf[:0]
	results := make([][]engram.Appended, len(live))
	for ri, r := range live {
		res := make([]engram.Appended, len(r.turns))
		for i := range r.turns {
			t := &r.turns[i]
			if t.ID == "" {
				id, err := ulid.New(ulid.Timestamp(now), a.entropy)
				if err != nil {
					fail(&engram.Error{Code: engram.EINTERNAL, Message: "generate an id", Err: err})
					return
				}
				t.ID = id.String()
			}
			if s, ok := pending[t.ID]; ok {
				res[i] = engram.Appended{ID: t.ID, Seq: s, Duplicate: true}
				continue
			}
			if s, ok := a.ids.get(t.ID); ok {
				// A forgotten id is archived again only when asked.
				if _, gone := a.goneIDs[t.ID]; !gone || !t.Resurrect {
					res[i] = engram.Appended{ID: t.ID, Seq: s, Duplicate: true, Forgotten: gone}
					continue
				}
			}
			seq++
			t.Seq, t.ReceivedAt = seq, now
			if t.TS.IsZero() {
				t.TS = now
			}
			var err error
			if buf, err = appendLine(buf, *t); err != nil {
				// Append checked the turn; this is a bug.
				fail(&engram.Error{Code: engram.EINTERNAL, Message: "encode a turn", Err: err})
				return
			}
			if pending == nil {
				pending = make(map[string]int64)
			}
			pending[t.ID] = seq
			added = append(added, *t)
			res[i] = engram.Appended{ID: t.ID, Seq: seq}
		}
		results[ri] = res
	}
	if cap(buf) <= 1<<20 {
		a.lineBuf = buf // reuse, unless a huge batch made it huge
	}

	if len(added) > 0 {
		if err := a.openDay(dayOf(now)); err != nil {
			fail(a.failure("open the day file", err))
			return
		}
		if err := a.write(buf); err != nil {
			fail(err)
			return
		}
		a.lastRecv = now
	}

	a.mu.Lock()
	for id, s := range pending {
		a.ids.set(id, s)
		delete(a.goneIDs, id) // resurrected
	}
	if len(added) > 0 {
		fi := &a.files[len(a.files)-1] // openDay made the current file the last
		fi.size += int64(len(buf))
		for i := range added {
			fi.add(&added[i])
			a.tail.push(added[i])
			a.stats.countRedaction(&added[i], 1)
		}
		a.lastSeq = seq
		a.stats.Turns += int64(len(added))
		a.stats.Batches++
		close(a.notify)
		a.notify = make(chan struct{})
	}
	a.stats.Commits += int64(len(live))
	a.mu.Unlock()

	for ri, r := range live {
		r.done <- response{res: results[ri]}
	}
}

// write appends buf to the current file and fsyncs it. A failed write is
// undone (the file is cut back to its committed size) so that no partial
// line stays to be followed by good ones; a failed fsync poisons the
// archive.
func (a *Archive) write(buf []byte) error {
	a.mu.RLock()
	before := a.files[len(a.files)-1].size
	a.mu.RUnlock()

	n, err := a.cur.Write(buf)
	if err == nil && n < len(buf) {
		err = io.ErrShortWrite
	}
	if err != nil {
		if terr := a.cur.Truncate(before); terr != nil {
			// The partial line cannot be removed; the next batch would
			// glue its first line onto it.
			a.poison = a.failure("cut back a failed write", terr)
			a.log.Error("archive: cannot cut back a failed write; refusing writes until restarted",
				logKeyPath, a.dayPath(a.curDay), logKeyErr, terr)
		}
		return a.failure("write", err)
	}
	if err := a.sync(a.cur); err != nil {
		return a.failure("fsync", err)
	}
	return nil
}

// failure turns an error of the write path into the *engram.Error Append
// returns, and poisons the archive when err is a failed fsync.
func (a *Archive) failure(op string, err error) error {
	if e, ok := err.(*engram.Error); ok {
		return e
	}
	var se *syncError
	if errors.As(err, &se) {
		a.poison = &engram.Error{Code: engram.EUNAVAILABLE,
			Message: "the archive could not fsync and refuses writes until engram restarts", Err: err}
		a.log.Error("archive: fsync failed; refusing writes until reopened", logKeyErr, err)
		return a.poison
	}
	if isNoSpace(err) {
		return &engram.Error{Code: engram.ENOSPACE,
			Message: "the disk holding the archive is full; nothing was archived", Err: fmt.Errorf("%s: %w", op, err)}
	}
	return &engram.Error{Code: engram.EUNAVAILABLE,
		Message: "the archive could not " + op + "; nothing was archived", Err: err}
}

// openDay makes the file of day the current one, creating it if need be.
// On error the previous current file stays open.
func (a *Archive) openDay(day string) error {
	if a.cur != nil && a.curDay == day {
		return nil
	}
	path := a.dayPath(day)
	a.mu.RLock()
	known := len(a.files) > 0 && a.files[len(a.files)-1].day == day
	a.mu.RUnlock()

	var f File
	var err error
	if known {
		f, err = a.fs.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	} else {
		f, err = a.createFile(path, os.O_WRONLY|os.O_APPEND)
	}
	if err != nil {
		return err
	}
	if a.cur != nil {
		// Its turns are fsynced already; a close error loses nothing.
		if cerr := a.cur.Close(); cerr != nil {
			a.log.Warn("archive: close day file", logKeyPath, a.dayPath(a.curDay), logKeyErr, cerr)
		}
	}
	a.cur, a.curDay = f, day
	if !known {
		a.mu.Lock()
		a.files = append(a.files, fileInfo{day: day, path: path})
		a.mu.Unlock()
	}
	return nil
}
