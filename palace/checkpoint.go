package palace

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
	"time"

	"github.com/engram-dev/engram/internal/sqlrow"
)

const (
	// checkpointEvery is the least time between two background checkpoints.
	// SQLite's own would run every 1,000 pages of WAL. Each checkpoint
	// fsyncs the WAL and the database file, and the archive's fsync, which
	// a POST's acknowledgement waits for, shares the disk: checkpoints a
	// tenth as large, ten times as often, keep that wait short
	// (docs/benchmarks.md, "A core kept for requests, checkpoints every
	// 100 ms").
	checkpointEvery = 100 * time.Millisecond
	// restartFrames is the WAL length, in frames (pages), past which the
	// checkpointer has the WAL start again from its beginning. A WAL that
	// never restarts grows with every write, and so does the index every
	// read searches (palace.db-shm). The step that restarts it holds the
	// writer through an fsync of the database file, a POST waiting behind
	// it: 4,000 frames of 8 KB pages (journal_size_limit keeps four times
	// as much) make it a quarter as frequent as SQLite's default length of
	// 1,000.
	restartFrames = 4000
	// forceRestartFrames is the WAL length past which step 2 holds the
	// writer against the turn index too. Below it, step 2 lets the turn
	// index commit beside it (a lender of the write gate): a POST need not
	// wait for its fsync (the longest wait a POST had beside the layer
	// jobs), and the WAL restarts at a later checkpoint instead, one that
	// no turn index meets.
	forceRestartFrames = 2 * restartFrames
)

// checkpointer copies the WAL into the database file on a connection of its
// own, so that no commit pays for it. SQLite checkpoints inside the commit
// that takes the WAL past 1,000 pages: that commit copies the pages and
// fsyncs the database file, and the turn index, whose commit an ingest's
// acknowledgement waits for, is most of the commits. The writer therefore
// runs with wal_autocheckpoint off, and each of its commits wakes this
// checkpointer, at most once per checkpointEvery, which:
//
//  1. runs a PASSIVE checkpoint beside the writer (it neither waits for nor
//     blocks the writer or the readers): the bulk of the copying and the
//     fsyncs;
//  2. when the WAL holds restartFrames or more, takes the writer (the write
//     gate, behind the turn index as every background write, and as a
//     lender: the turn index may still commit; forceRestartFrames) and
//     checkpoints again what was committed during step 1, a few pages, so
//     that the WAL is copied whole with no commit after it: the next write
//     transaction then starts the WAL again from its beginning. A
//     checkpoint beside a busy writer alone never finds the WAL whole, and
//     the WAL grew without end (the first version of this, taken back).
//
// A checkpoint that fails (a full disk) is retried on the next wake; the
// WAL keeps every commit meanwhile, and Close's final checkpoint, on the
// writer, copies what is left.
type checkpointer struct {
	*background
	conn  *sql.DB
	gate  *writeGate
	begin func(context.Context) (func(), error) // Options.Work; nil: none

	runs     atomic.Int64 // checkpoints run
	restarts atomic.Int64 // times the WAL was seen started again
	frames   atomic.Int64 // the WAL's length at the last checkpoint
}

// newCheckpointer opens the checkpointer's connection to the database at
// abs; start starts it. gate is the palace's write gate; begin, if set,
// begins a step of the process's background work (Options.Work).
func newCheckpointer(abs string, gate *writeGate, begin func(context.Context) (func(), error)) (*checkpointer, error) {
	conn, err := sqlrow.OpenPool(checkpointDSN(abs), 1)
	if err != nil {
		return nil, err
	}
	c := &checkpointer{conn: conn, gate: gate, begin: begin}
	c.background = newBackground(checkpointEvery, c.checkpoint)
	c.poke() // what the migrations wrote
	return c, nil
}

// checkpoint runs steps 1 and 2 (see checkpointer), as a step of the
// process's background work (Options.Work): its copying and fsyncs hold a
// core (a goroutine in a system call keeps its core until the runtime's
// monitor notices), and beside the background work
// computing on the other one, a request found none free.
func (c *checkpointer) checkpoint(ctx context.Context) {
	if c.begin != nil {
		done, err := c.begin(ctx)
		if err != nil {
			return
		}
		defer done()
	}
	frames, ok := c.passive(ctx)
	if !ok || frames < restartFrames {
		return
	}
	if frames >= forceRestartFrames {
		if err := c.gate.acquire(ctx, false); err != nil {
			return
		}
		defer c.gate.release()
	} else {
		if err := c.gate.acquireLending(ctx); err != nil {
			return
		}
		defer c.gate.releaseLending()
	}
	c.passive(ctx)
}

// passive runs one PASSIVE checkpoint and returns the WAL's length.
func (c *checkpointer) passive(ctx context.Context) (frames int64, ok bool) {
	var busy, done int64
	if err := c.conn.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &frames, &done); err != nil {
		return 0, false
	}
	c.runs.Add(1)
	if frames < c.frames.Swap(frames) {
		c.restarts.Add(1)
	}
	return frames, true
}

// close stops the checkpointer and closes its connection.
func (c *checkpointer) close() error {
	c.stop()
	return c.conn.Close()
}

// background runs step in a goroutine of its own once the writer commits
// (poke), at most once per every: the loop of the checkpointer and of the
// merger.
type background struct {
	every  time.Duration
	step   func(ctx context.Context)
	ctx    context.Context
	cancel context.CancelFunc
	wake   chan struct{}
	wg     sync.WaitGroup
}

func newBackground(every time.Duration, step func(ctx context.Context)) *background {
	ctx, cancel := context.WithCancel(context.Background())
	return &background{every: every, step: step, ctx: ctx, cancel: cancel, wake: make(chan struct{}, 1)}
}

// start starts the goroutine.
func (b *background) start() {
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		b.loop()
	}()
}

// poke tells the goroutine that the writer committed. It never blocks.
func (b *background) poke() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

func (b *background) loop() {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-b.ctx.Done():
			return
		case <-b.wake:
		}
		b.step(b.ctx)
		t.Reset(b.every)
		select {
		case <-b.ctx.Done():
			return
		case <-t.C:
		}
	}
}

// stop stops the goroutine, waiting for a step under way.
func (b *background) stop() {
	b.cancel()
	b.wg.Wait()
}
