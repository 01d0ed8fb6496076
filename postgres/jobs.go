package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/engram-dev/engram"
)

// Jobs over the shared archive. Each server derives its own palace, so the
// layer jobs run on every server; a job over the archive itself (a
// verification reads every row) is the same work on each, and is done by
// one server an interval. RunShared takes the job's lease: a session-level
// advisory lock, held on a connection of its own for the run, so that a
// server that dies mid-run gives it up with its connection and another
// takes the job at its next tick; and team_jobs, which says when the job
// last ran and on which server, so that the servers run it once an
// interval between them, not once each.

// jobLockClass is the first key of the two-key advisory locks of shared
// jobs ("engr" in ASCII); the second is a hash of the job's name. The
// two-key locks are a space apart from the one-key locks of migrations and
// appends.
const jobLockClass int32 = 0x656e6772

// SharedRun says what RunShared did.
type SharedRun struct {
	Ran bool // the job ran here
	// Server is the server that holds the job (Ran false: it runs it now)
	// or ran it last (within the interval), as it named itself.
	Server string
	// Last is when that last run started; zero when the job is running
	// elsewhere.
	Last time.Time
}

// serverName names this process in team_jobs: its host and process id.
func serverName() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown-host"
	}
	return fmt.Sprintf("%s/%d", host, os.Getpid())
}

// RunShared runs the job name on this server unless another server runs it
// now, or ran it successfully less than every ago. The lease holds a
// connection of the pool for the run. run's error is returned, and
// recorded with the run.
func (a *Archive) RunShared(ctx context.Context, name string, every time.Duration, run func(context.Context) error) (SharedRun, error) {
	if name == "" {
		return SharedRun{}, engram.Errorf(engram.EINVALID, "postgres: a shared job needs a name")
	}
	if a.closed.Load() {
		return SharedRun{}, errClosed()
	}
	conn, err := a.pool.Acquire(ctx)
	if err != nil {
		return SharedRun{}, dbFailure(ctx, "take a shared job's lease", err)
	}
	defer conn.Release()
	key := jobLockKey(name)
	var got bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1, $2)`, jobLockClass, key).Scan(&got); err != nil {
		return SharedRun{}, dbFailure(ctx, "take a shared job's lease", err)
	}
	if !got {
		var who string
		// Who holds it: the server recorded at the start of its run.
		err := conn.QueryRow(ctx, `SELECT server FROM team_jobs WHERE name = $1`, name).Scan(&who)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return SharedRun{}, dbFailure(ctx, "read a shared job's state", err)
		}
		return SharedRun{Server: who}, nil
	}
	defer func() {
		// On a connection that failed the lock is gone with it; Release
		// then closes the connection.
		_, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1, $2)`, jobLockClass, key)
	}()
	var (
		recent bool
		who    string
		last   time.Time
	)
	err = conn.QueryRow(ctx, `SELECT last_success > now() - make_interval(secs => $2), server, last_run
		FROM team_jobs WHERE name = $1 AND last_success IS NOT NULL`, name, every.Seconds()).Scan(&recent, &who, &last)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return SharedRun{}, dbFailure(ctx, "read a shared job's state", err)
	}
	if recent {
		return SharedRun{Server: who, Last: last}, nil
	}
	me := serverName()
	var started time.Time
	if err := conn.QueryRow(ctx, `INSERT INTO team_jobs (name, last_run, server) VALUES ($1, now(), $2)
		ON CONFLICT (name) DO UPDATE SET last_run = excluded.last_run, server = excluded.server
		RETURNING last_run`, name, me).Scan(&started); err != nil {
		return SharedRun{}, dbFailure(ctx, "record a shared job's start", err)
	}
	runErr := run(ctx)
	msg := ""
	if runErr != nil {
		msg = Message(runErr.Error()) // as the server logs it
	}
	if _, err := conn.Exec(context.WithoutCancel(ctx), `UPDATE team_jobs SET last_error = $2,
		last_success = CASE WHEN $2 = '' THEN last_run ELSE last_success END WHERE name = $1`, name, msg); err != nil && runErr == nil {
		return SharedRun{Ran: true, Server: me, Last: started}, dbFailure(ctx, "record a shared job's end", err)
	}
	return SharedRun{Ran: true, Server: me, Last: started}, runErr
}

// Message is s as a text column can hold it: without NUL bytes, with
// invalid UTF-8 replaced. An error's message may quote what a turn or a
// model's output held; PostgreSQL refuses text with either, and a job's
// record of its failure must not fail in turn.
func Message(s string) string {
	return strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", ""), "\uFFFD")
}

// dbFailure is what a failed read or write of the shared jobs' or
// vectors' tables returns: ctx's own error when ctx ended, else
// EUNAVAILABLE naming what failed.
func dbFailure(ctx context.Context, what string, err error) error {
	if cerr := ctx.Err(); cerr != nil && errors.Is(err, cerr) {
		return cerr
	}
	return &engram.Error{Code: engram.EUNAVAILABLE, Message: "cannot " + what + " in PostgreSQL", Err: err}
}

// jobLockKey is the second key of a shared job's advisory lock.
func jobLockKey(name string) int32 {
	h := fnv.New32a()
	h.Write([]byte(name))
	return int32(h.Sum32())
}
