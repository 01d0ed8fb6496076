package palace

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
	"time"
)

// checkpointEvery is the least time between two background checkpoints.
// SQLite's own would run every 1,000 pages (4 MB) of WAL; at the rate a
// busy engram writes, a second is about as often.
const checkpointEvery = time.Second

// checkpointer copies the WAL into the database file on a connection of its
// own, so that no commit pays for it. SQLite checkpoints inside the commit
// that takes the WAL past 1,000 pages: that commit copies the pages and
// fsyncs the database file, and the turn index, whose commit an ingest's
// acknowledgement waits for, is most of the commits. The writer therefore
// runs with wal_autocheckpoint off, and each of its commits wakes this
// checkpointer, which runs a PASSIVE checkpoint (it never waits for, nor
// blocks, the writer or the readers) at most once per checkpointEvery.
// A checkpoint that fails (a full disk) is retried on the next wake; the
// WAL keeps every commit meanwhile, and Close's final checkpoint, on the
// writer, copies what is left.
type checkpointer struct {
	conn   *sql.DB
	wake   chan struct{}
	cancel context.CancelFunc
	wg     sync.WaitGroup

	runs atomic.Int64 // checkpoints run
	left atomic.Int64 // WAL frames the last one could not copy (a reader held them)
}

// startCheckpointer opens the checkpointer's connection to the database
// at abs and starts it.
func startCheckpointer(abs string) (*checkpointer, error) {
	conn, err := sql.Open("sqlite", checkpointDSN(abs))
	if err != nil {
		return nil, err
	}
	conn.SetMaxOpenConns(1)
	conn.SetMaxIdleConns(1)
	conn.SetConnMaxLifetime(0)
	conn.SetConnMaxIdleTime(0)
	ctx, cancel := context.WithCancel(context.Background())
	c := &checkpointer{conn: conn, wake: make(chan struct{}, 1), cancel: cancel}
	c.poke() // what the migrations wrote
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.loop(ctx)
	}()
	return c, nil
}

// poke tells the checkpointer that the writer committed. It never blocks.
func (c *checkpointer) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *checkpointer) loop(ctx context.Context) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.wake:
		}
		var busy, log, done int64
		if err := c.conn.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &log, &done); err == nil {
			c.left.Store(log - done)
		}
		c.runs.Add(1)
		t.Reset(checkpointEvery)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// close stops the checkpointer and closes its connection.
func (c *checkpointer) close() error {
	c.cancel()
	c.wg.Wait()
	return c.conn.Close()
}
