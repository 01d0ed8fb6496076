package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/pgtest"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/postgres"
)

// TestRunShared: two servers on one database run a shared job once an
// interval between them. While one runs it the other is refused the lease;
// after a success neither runs it again within the interval; a failed run
// leaves it due; once the interval has passed (the record moved back, as
// a clock would) the other takes it.
func TestRunShared(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ctx := context.Background()
	a, b := mustOpen(t, url, postgres.Options{}), mustOpen(t, url, postgres.Options{})
	const job, every = "archive-verify", time.Hour

	started, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	var first postgres.SharedRun
	go func() {
		var err error
		first, err = a.RunShared(ctx, job, every, func(context.Context) error {
			close(started)
			<-release
			return nil
		})
		done <- err
	}()
	<-started
	notHere := func(context.Context) error { t.Error("the job ran on a second server"); return nil }
	if r, err := b.RunShared(ctx, job, every, notHere); err != nil || r.Ran || r.Server == "" {
		t.Fatalf("while A runs it, B: %+v %v; want refused, naming the server that holds it", r, err)
	}
	close(release)
	if err := <-done; err != nil || !first.Ran || first.Last.IsZero() {
		t.Fatalf("A: %+v %v", first, err)
	}
	r, err := b.RunShared(ctx, job, every, notHere)
	if err != nil || r.Ran || !r.Last.Equal(first.Last) {
		t.Fatalf("within the interval, B: %+v %v; want skipped, A's run at %v", r, err, first.Last)
	}

	// Another job's lease is its own.
	ran := false
	if r, err := b.RunShared(ctx, "other", every, func(context.Context) error { ran = true; return nil }); err != nil || !r.Ran || !ran {
		t.Fatalf("another job: %+v %v ran %v", r, err, ran)
	}

	db := connect(t, url)
	mustExec(t, db, `UPDATE team_jobs SET last_run = last_run - interval '2 hours', last_success = last_success - interval '2 hours' WHERE name = $1`, job)
	boom := errors.New("boom")
	if r, err := b.RunShared(ctx, job, every, func(context.Context) error { return boom }); !errors.Is(err, boom) || !r.Ran {
		t.Fatalf("after the interval, B: %+v %v; want it run, and its error", r, err)
	}
	var lastErr string
	if err := db.QueryRow(ctx, `SELECT last_error FROM team_jobs WHERE name = $1`, job).Scan(&lastErr); err != nil || lastErr != "boom" {
		t.Fatalf("recorded error %q %v", lastErr, err)
	}
	ran = false
	if r, err := a.RunShared(ctx, job, every, func(context.Context) error { ran = true; return nil }); err != nil || !r.Ran || !ran {
		t.Fatalf("after a failed run, A: %+v %v ran %v; want it run again", r, err, ran)
	}

	if _, err := a.RunShared(ctx, "", every, notHere); engram.ErrorCode(err) != engram.EINVALID {
		t.Errorf("no name: %v", err)
	}
}

// TestRunSharedServerDies: a server whose connection to the database dies
// mid-run (a killed process's connections end with it) gives up the lease
// with it, and another server takes the job: its run never recorded a
// success.
func TestRunSharedServerDies(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ctx := context.Background()
	a, b := mustOpen(t, url, postgres.Options{}), mustOpen(t, url, postgres.Options{})
	const job = "archive-verify"

	started, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := a.RunShared(ctx, job, time.Hour, func(context.Context) error {
			close(started)
			<-release
			return nil
		})
		done <- err
	}()
	<-started
	db := connect(t, url)
	var killed int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_locks
		WHERE locktype = 'advisory' AND classid = $1 AND granted) k`, uint32(0x656e6772)).Scan(&killed); err != nil || killed != 1 {
		t.Fatalf("terminate the lease's connection: %d %v", killed, err)
	}
	// The backend ends after pg_terminate_backend returns.
	testutil.WaitUntil(t, "the lease's connection to end", func() bool {
		var held int
		return db.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = $1`, uint32(0x656e6772)).Scan(&held) == nil && held == 0
	})
	ran := false
	if r, err := b.RunShared(ctx, job, time.Hour, func(context.Context) error { ran = true; return nil }); err != nil || !r.Ran || !ran {
		t.Fatalf("after A's connection died, B: %+v %v ran %v; want it run", r, err, ran)
	}
	close(release)
	if err := <-done; engram.ErrorCode(err) != engram.EUNAVAILABLE {
		t.Errorf("A, whose connection died: %v; want EUNAVAILABLE (its end could not be recorded)", err)
	}
}
