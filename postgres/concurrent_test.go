package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/archivetest"
	"github.com/engram-dev/engram/internal/pgtest"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/postgres"
)

// TestWritersAndFollower runs two Archives on one database, each with its
// own connections and writer as two servers would have, appending from
// several goroutines, while a follower reads the table with Stream after
// the last seq it has seen, as an indexer on a third server would. Seqs
// must be distinct and increasing, and the follower must see every row:
// a row committed after one with a higher seq would be passed and lost.
func TestWritersAndFollower(t *testing.T) {
	url := pgtest.NewDatabase(t)
	writers := []*postgres.Archive{mustOpen(t, url, postgres.Options{}), mustOpen(t, url, postgres.Options{})}
	follower := mustOpen(t, url, postgres.Options{})
	const perWriter, callsPer = 4, 60

	ctx := context.Background()
	var done atomic.Bool
	var followed []int64
	followErr := make(chan error, 1)
	go func() {
		var last int64
		for {
			finished := done.Load() // read before the stream: the last pass sees every commit
			err := follower.Stream(ctx, last, func(tn engram.Turn) error {
				if tn.Seq <= last {
					return fmt.Errorf("seq %d after %d", tn.Seq, last)
				}
				followed = append(followed, tn.Seq)
				last = tn.Seq
				return nil
			})
			if err != nil || finished {
				followErr <- err
				return
			}
		}
	}()

	var wg sync.WaitGroup
	var mu sync.Mutex
	acked := map[string]int64{}
	for wi, a := range writers {
		for g := range perWriter {
			wg.Go(func() {
				for i := range callsPer {
					batch := []engram.Turn{archivetest.Turn(fmt.Sprintf("w%d-%d", wi, g), fmt.Sprint(i))}
					if i%7 == 0 {
						batch = append(batch, archivetest.Turn(fmt.Sprintf("w%d-%d", wi, g), fmt.Sprint(i, "b")))
					}
					res, err := a.Append(ctx, batch)
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					for _, r := range res {
						acked[r.ID] = r.Seq
					}
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	done.Store(true)
	if err := <-followErr; err != nil {
		t.Fatal(err)
	}
	if t.Failed() {
		return
	}

	all := archivetest.StreamAll(t, follower, 0)
	if len(all) != len(acked) {
		t.Fatalf("%d turns in the table, %d acknowledged", len(all), len(acked))
	}
	seen := map[int64]bool{}
	for _, tn := range all {
		if acked[tn.ID] != tn.Seq || seen[tn.Seq] {
			t.Fatalf("turn %s has seq %d, Append said %d", tn.ID, tn.Seq, acked[tn.ID])
		}
		seen[tn.Seq] = true
	}
	var missed []int64
	for _, tn := range all {
		if _, ok := slices.BinarySearch(followed, tn.Seq); !ok {
			missed = append(missed, tn.Seq)
		}
	}
	if len(missed) > 0 || len(followed) != len(all) {
		t.Fatalf("the follower read %d of %d turns; it passed seqs %v", len(followed), len(all), missed)
	}
	// Each Archive learns of the other's turns when it reads.
	for _, a := range writers {
		if got, err := a.Refresh(ctx); err != nil || got != all[len(all)-1].Seq || a.LastSeq() != got {
			t.Fatalf("Refresh %d (%v), LastSeq %d, want %d", got, err, a.LastSeq(), all[len(all)-1].Seq)
		}
	}
	t.Logf("%d turns from 2 writers, followed in %d seqs", len(all), len(followed))
}

// TestAppendGivesUpWithItsContext holds the append lock from another
// connection, so that an Append waits inside its transaction: when its
// ctx ends it returns at once, nothing of it is archived, and the next
// Append works once the lock is free.
func TestAppendGivesUpWithItsContext(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a := mustOpen(t, url, postgres.Options{})
	archivetest.MustAppend(t, a, archivetest.Turn("s", "first"))
	holder := connect(t, url)
	mustExec(t, holder, `SELECT pg_advisory_lock($1)`, postgres.AppendLockKey)

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := a.Append(ctx, []engram.Turn{archivetest.Turn("s", "given up")})
		errc <- err
	}()
	watcher := connect(t, url)
	testutil.WaitUntil(t, "the Append to wait for the lock", func() bool {
		var n int
		err := watcher.QueryRow(context.Background(),
			`SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`).Scan(&n)
		return err == nil && n == 1
	})
	cancel()
	if err := <-errc; err != context.Canceled {
		t.Fatalf("Append after its ctx ended: %v, want context.Canceled", err)
	}
	mustExec(t, holder, `SELECT pg_advisory_unlock($1)`, postgres.AppendLockKey)
	res := archivetest.MustAppend(t, a, archivetest.Turn("s", "after"))
	if res[0].Seq != 2 {
		t.Fatalf("seq %d after the given-up call, want 2", res[0].Seq)
	}
	var got []string
	for _, tn := range archivetest.StreamAll(t, a, 0) {
		got = append(got, tn.Content)
	}
	if !slices.Equal(got, []string{"first", "after"}) {
		t.Fatalf("archived %q", got)
	}
}

// TestCloseWaitsForTheCommit closes the archive while an Append waits
// inside its transaction: Close lets it finish, and its turn is archived.
func TestCloseWaitsForTheCommit(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a := mustOpen(t, url, postgres.Options{})
	holder := connect(t, url)
	mustExec(t, holder, `SELECT pg_advisory_lock($1)`, postgres.AppendLockKey)
	type result struct {
		res []engram.Appended
		err error
	}
	appended := make(chan result, 1)
	go func() {
		res, err := a.Append(context.Background(), []engram.Turn{archivetest.Turn("s", "in flight")})
		appended <- result{res, err}
	}()
	watcher := connect(t, url)
	testutil.WaitUntil(t, "the Append to wait for the lock", func() bool {
		var n int
		err := watcher.QueryRow(context.Background(),
			`SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`).Scan(&n)
		return err == nil && n == 1
	})
	closed := make(chan error, 1)
	go func() { closed <- a.Close() }()
	testutil.WaitUntil(t, "Close to begin", func() bool {
		_, err := a.Append(context.Background(), []engram.Turn{archivetest.Turn("s", "refused")})
		return engram.ErrorCode(err) == engram.EUNAVAILABLE
	})
	mustExec(t, holder, `SELECT pg_advisory_unlock($1)`, postgres.AppendLockKey)
	r := <-appended
	if r.err != nil || len(r.res) != 1 || r.res[0].Seq != 1 {
		t.Fatalf("the Append in flight at Close: %+v, %v", r.res, r.err)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	b := mustOpen(t, url, postgres.Options{})
	if got := archivetest.StreamAll(t, b, 0); len(got) != 1 || got[0].Content != "in flight" {
		t.Fatalf("archived %+v", got)
	}
}
