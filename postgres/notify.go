package postgres

import (
	"context"
	"strconv"
	"time"
)

// notifyChannel is the LISTEN/NOTIFY channel each append transaction
// notifies with its last seq.
const notifyChannel = "engram_archive"

// rewriteChannel is the channel each Forget and Rewrite transaction that
// changed rows notifies (with their count).
const rewriteChannel = "engram_archive_rewrite"

// Notify returns a channel that is closed when LastSeq next rises: at
// this Archive's next commit, when another server's commit is notified,
// or when a read sees a higher seq (and at Close). Every caller holding it
// is woken: it is a broadcast. To wait for turns after seq n without
// missing one, take the channel first, then check LastSeq, as with the
// file archive's Notify.
//
// Other servers' commits arrive by LISTEN/NOTIFY rather than a poll: each
// append transaction sends its last seq with pg_notify, which PostgreSQL
// delivers at the commit, in commit order, to every listening session, so
// a follower learns of a commit in one network trip and an idle archive
// costs the database nothing. The listening connection is one of its own
// (not for a pooler in transaction mode); when it is lost, the listener
// connects again, listens, and then reads the highest seq, so that a
// commit made meanwhile is not missed.
func (a *Archive) Notify() <-chan struct{} {
	a.notifyMu.Lock()
	defer a.notifyMu.Unlock()
	return a.notify
}

// Rewrites returns a channel that is closed when a Forget or Rewrite
// transaction (of this Archive or another on the database) next commits,
// and once the listener has (again) started listening, since a rewrite
// committed before was not notified. Like Notify, it is a broadcast. A
// server that keeps copies of the turns (its palace) takes the channel,
// then reads what the archive holds (Tombstones, the rewritten lines) and
// brings its copies up to it: a wake with nothing new costs one read.
func (a *Archive) Rewrites() <-chan struct{} {
	a.notifyMu.Lock()
	defer a.notifyMu.Unlock()
	return a.rewrites
}

// rewritten wakes the callers of Rewrites.
func (a *Archive) rewritten() {
	a.notifyMu.Lock()
	defer a.notifyMu.Unlock()
	close(a.rewrites)
	a.rewrites = make(chan struct{})
}

// listenRetry bounds the wait between two attempts to listen again after
// the connection was lost.
const listenRetry = 2 * time.Second

// listen is the goroutine that follows the commits of every server on the
// database until Close.
func (a *Archive) listen() {
	defer a.wg.Done()
	wait := 50 * time.Millisecond
	for {
		err := a.listenOnce()
		if a.ctx.Err() != nil {
			return
		}
		a.log.Warn("postgres archive: lost the connection that follows other servers' commits; listening again", logKeyErr, err)
		select {
		case <-a.ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, listenRetry)
	}
}

// listenOnce listens on a connection of its own and takes each
// notification's seq until the connection fails or Close.
func (a *Archive) listenOnce() error {
	pc, err := a.pool.Acquire(a.ctx)
	if err != nil {
		return err
	}
	// Taken out of the pool: a wait cut short by Close leaves the
	// connection in a state no one else may use.
	conn := pc.Hijack()
	defer conn.Close(context.Background())
	if _, err := conn.Exec(a.ctx, "LISTEN "+notifyChannel+"; LISTEN "+rewriteChannel+"; LISTEN "+correctionsChannel); err != nil {
		return err
	}
	// Commits before the LISTEN took effect are not notified: read the
	// head once it listens.
	a.rewritten()
	a.corrected()
	if _, err := a.Refresh(a.ctx); err != nil {
		return err
	}
	for {
		n, err := conn.WaitForNotification(a.ctx)
		if err != nil {
			return err
		}
		switch n.Channel {
		case rewriteChannel:
			a.rewritten()
			continue
		case correctionsChannel:
			a.corrected()
			continue
		}
		if seq, err := strconv.ParseInt(n.Payload, 10, 64); err == nil {
			a.advance(seq)
		}
	}
}
