package postgres

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/oklog/ulid/v2"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/internal/groupcommit"
)

// request is one Append call waiting for the writer.
type request struct {
	ctx   context.Context
	turns []engram.Turn // the archive's own copy, checked
	done  chan response // buffered: the writer never blocks on an answer
}

type response struct {
	res []engram.Appended
	err error
}

// Append archives turns and returns, for each, its id and seq, or
// Duplicate with the original seq when its id is already archived (also
// earlier in the same call, or by another server). It returns only after
// PostgreSQL confirmed the COMMIT. Ids are kept when given and generated
// (ULIDs) when not; seq and received_at (to the microsecond) are always
// assigned here. A zero TS is set to received_at. Meta is stored
// compacted. The turns are checked as the file archive checks them
// (archive.Prepare).
//
// Concurrent calls of one Archive are written in one transaction (group
// commit). Appends of every Archive on the database are serialised by a
// transaction-scoped advisory lock, under which each takes the next seqs
// after the table's highest: seqs are then committed in their order, so a
// reader that has seen seq N has seen every seq below it, and a reader
// following the table with Stream never passes a row committed later.
// A sequence object would let two writers work at once, but a writer
// holding seq 5 could commit after one holding seq 6, and a reader that
// has read 6 would never read 5; the lock costs one writer at a time,
// which group commit makes up for.
//
// Errors: an *engram.Error with code EINVALID (Field "turns[i].name") for
// a turn no line can hold; ENOSPACE when the database's disk is full and
// EUNAVAILABLE when the database cannot be reached or fails, after which
// nothing of the call is archived, except when the connection broke during
// the COMMIT, which the message says: then the turns may be archived, and
// sending them again with the same ids archives them exactly once;
// EUNAVAILABLE after Close; ctx.Err() when ctx ends first, the turns
// archived or not (the same advice holds).
func (a *Archive) Append(ctx context.Context, turns []engram.Turn) ([]engram.Appended, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if a.closed.Load() {
		return nil, errClosed()
	}
	own, err := archive.Prepare(turns)
	if err != nil {
		return nil, err
	}
	if len(own) == 0 {
		return []engram.Appended{}, nil
	}
	r := &request{ctx: ctx, turns: own, done: make(chan response, 1)}
	select {
	case a.reqs <- r:
	case <-a.ctx.Done():
		return nil, errClosed()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	// Unlike the file archive's, a commit waits on the network: a caller
	// whose ctx ends is not held until the database answers.
	select {
	case resp := <-r.done:
		return resp.res, resp.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// run is the writer goroutine: it takes a request, then every other one
// already waiting, and commits them in one transaction.
func (a *Archive) run() {
	defer a.wg.Done()
	groupcommit.Run(a.ctx.Done(), a.reqs, maxBatchRequests, a.commit)
}

// commit writes a batch in one transaction and answers every request.
func (a *Archive) commit(batch []*request) {
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
	// The transaction is given up when every caller in it has, so that
	// a database that does not answer holds nobody past their ctx and the
	// writer is free for the next batch. Not at Close, which waits for
	// the transaction in flight, as the file archive's waits for its
	// batch.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var waiting atomic.Int64
	waiting.Store(int64(len(live)))
	for _, r := range live {
		stop := context.AfterFunc(r.ctx, func() {
			if waiting.Add(-1) == 0 {
				cancel()
			}
		})
		defer stop()
	}

	results, last, err := a.write(ctx, live)
	if err != nil && err.broken && !err.committing && ctx.Err() == nil {
		// The connection broke before the COMMIT was sent, so the server
		// rolled the transaction back. After the database restarted,
		// every idle connection is such a broken one (the pool checks
		// only those idle for a while): drop them all, and try once more
		// on a new one.
		a.pool.Reset()
		results, last, err = a.write(ctx, live)
	}
	if err != nil {
		e := err.public()
		for _, r := range live {
			r.done <- response{err: e}
		}
		return
	}
	if last > 0 {
		a.advance(last)
		a.batches.Add(1)
	}
	a.commits.Add(int64(len(live)))
	for i, r := range live {
		r.done <- response{res: results[i]}
	}
}

// writeError is a failed transaction: committing says whether the
// COMMIT was sent, after which the outcome is unknown; broken, whether
// the connection is gone.
type writeError struct {
	op         string
	err        error
	committing bool
	broken     bool
}

// public returns the error Append callers get.
func (e *writeError) public() error {
	if ee, ok := e.err.(*engram.Error); ok && ee.Code == engram.EINTERNAL {
		return ee
	}
	if pe, ok := isServerError(e.err); ok && pe.Code == sqlDiskFull {
		return &engram.Error{Code: engram.ENOSPACE,
			Message: "the disk of the PostgreSQL archive is full; nothing was archived", Err: e.err}
	}
	if e.committing {
		return &engram.Error{Code: engram.EUNAVAILABLE,
			Message: "PostgreSQL did not confirm the commit: the turns may or may not be archived; send them again with the same ids",
			Err:     e.err}
	}
	return &engram.Error{Code: engram.EUNAVAILABLE,
		Message: "the PostgreSQL archive could not " + e.op + "; nothing was archived", Err: e.err}
}

// write archives the turns of live in one transaction and returns each
// request's results and the highest seq written (0 when every turn was a
// duplicate).
func (a *Archive) write(ctx context.Context, live []*request) ([][]engram.Appended, int64, *writeError) {
	var conn *pgxpool.Conn
	fail := func(op string, err error) ([][]engram.Appended, int64, *writeError) {
		return nil, 0, &writeError{op: op, err: err, broken: conn != nil && conn.Conn().IsClosed()}
	}
	// received_at has the microsecond precision of timestamptz, so that
	// the row's column and its line agree.
	now := a.now().UTC().Truncate(time.Microsecond)
	ids, err := a.assignIDs(live, now)
	if err != nil {
		return fail("generate an id", err)
	}

	// READ COMMITTED whatever the database's default: each statement
	// then sees what was committed before it began, so the head read
	// after the lock is taken sees the previous holder's rows.
	conn, err = a.pool.Acquire(ctx)
	if err != nil {
		return fail("connect", err)
	}
	defer conn.Release()
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return fail("begin a transaction", err)
	}
	defer tx.Rollback(ctx)

	h, err := readHead(ctx, tx, ids)
	if err != nil {
		return fail("read the archive's head", err)
	}
	// received_at never goes back, even when the clock (or another
	// server's) does.
	if now.Before(h.lastRecv) {
		now = h.lastRecv.UTC()
	}
	var rows newRows
	results := make([][]engram.Appended, len(live))
	for ri, r := range live {
		if results[ri], err = rows.add(r.turns, h, now); err != nil {
			// Prepare checked the turns; this is a bug.
			return nil, 0, &writeError{op: "encode a turn", err: &engram.Error{Code: engram.EINTERNAL, Message: "encode a turn", Err: err}}
		}
	}
	if len(rows.seqs) == 0 {
		return results, 0, nil // all duplicates: nothing to commit
	}
	if _, err := tx.Exec(ctx, `INSERT INTO archive_turns (seq, id, ts, received_at, crc, line, redacted)
		SELECT * FROM unnest($1::bigint[], $2::text[], $3::timestamptz[], $4::timestamptz[], $5::bigint[], $6::bytea[], $7::boolean[])`,
		rows.seqs, rows.ids, rows.tss, rows.recvs, rows.crcs, rows.lines, rows.red); err != nil {
		return fail("insert the turns", err)
	}
	// Delivered to every listening server at the commit, in commit order
	// (see listen).
	seq := h.seq
	if _, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, notifyChannel, strconv.FormatInt(seq, 10)); err != nil {
		return fail("notify", err)
	}
	if err := tx.Commit(ctx); err != nil {
		// A server's answer (a deferred constraint, a full disk) means
		// the transaction was rolled back; a lost connection leaves it
		// unknown.
		_, server := isServerError(err)
		return nil, 0, &writeError{op: "commit", err: err, committing: !server || conn.Conn().IsClosed()}
	}
	return results, seq, nil
}

// assignIDs gives every turn of live without an id a new one, kept in the
// request so that a retry writes the same ids, and returns all their ids.
func (a *Archive) assignIDs(live []*request, now time.Time) ([]string, error) {
	var ids []string
	for _, r := range live {
		for i := range r.turns {
			t := &r.turns[i]
			if t.ID == "" {
				id, err := ulid.New(ulid.Timestamp(now), a.entropy)
				if err != nil {
					return nil, err
				}
				t.ID = id.String()
			}
			ids = append(ids, t.ID)
		}
	}
	return ids, nil
}

// head is what an append reads under the lock: the last seq and receive
// time, and the latest seq of each of its ids, those forgotten marked.
type head struct {
	seq      int64 // the last seq, then the last one this append takes
	lastRecv time.Time
	known    map[string]int64
	gone     map[string]bool
}

// readHead takes the append lock and reads the head of the archive in tx.
func readHead(ctx context.Context, tx pgx.Tx, ids []string) (*head, error) {
	b := &pgx.Batch{}
	b.Queue(`SELECT pg_advisory_xact_lock($1)`, appendLockKey)
	b.Queue(`SELECT seq, received_at FROM archive_turns ORDER BY seq DESC LIMIT 1`)
	// The latest row of each id, and whether it is a tombstone.
	b.Queue(`SELECT DISTINCT ON (id) id, seq, ts IS NULL FROM archive_turns
		WHERE id = ANY($1) ORDER BY id, seq DESC`, ids)
	br := tx.SendBatch(ctx, b)
	defer br.Close()
	h := &head{known: map[string]int64{}, gone: map[string]bool{}}
	if _, err := br.Exec(); err != nil {
		return nil, err
	}
	if err := br.QueryRow().Scan(&h.seq, &h.lastRecv); err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	var id string
	var seq int64
	var tomb bool
	_, err = pgx.ForEachRow(rows, []any{&id, &seq, &tomb}, func() error {
		h.known[id] = seq
		if tomb {
			h.gone[id] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return h, br.Close()
}

// newRows are the columns of the rows an append inserts.
type newRows struct {
	seqs       []int64
	ids        []string
	tss, recvs []time.Time
	crcs       []int64
	lines      [][]byte
	red        []bool
}

// add numbers the turns of one request after h.seq and adds their rows;
// an id archived before is a duplicate (a forgotten one is archived again
// only when the turn asks, as in the file archive).
func (n *newRows) add(turns []engram.Turn, h *head, now time.Time) ([]engram.Appended, error) {
	res := make([]engram.Appended, len(turns))
	for i, t := range turns {
		if s, ok := h.known[t.ID]; ok && (!h.gone[t.ID] || !t.Resurrect) {
			res[i] = engram.Appended{ID: t.ID, Seq: s, Duplicate: true, Forgotten: h.gone[t.ID]}
			continue
		}
		h.seq++
		t.Seq, t.ReceivedAt = h.seq, now
		if t.TS.IsZero() {
			t.TS = now
		}
		line, err := archive.EncodeLine(t)
		if err != nil {
			return nil, err
		}
		line = line[:len(line)-1] // the '\n'
		crc, ok := archive.LineCRC(line)
		if !ok {
			return nil, errors.New("a line without its crc")
		}
		h.known[t.ID] = h.seq
		delete(h.gone, t.ID)
		n.red = append(n.red, t.Redacted != nil)
		n.seqs, n.ids, n.tss, n.recvs = append(n.seqs, h.seq), append(n.ids, t.ID), append(n.tss, t.TS), append(n.recvs, now)
		n.crcs, n.lines = append(n.crcs, int64(crc)), append(n.lines, line)
		res[i] = engram.Appended{ID: t.ID, Seq: h.seq}
	}
	return res, nil
}
