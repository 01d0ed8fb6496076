package pgpalace

import (
	"fmt"
	"sync"
	"testing"
	"time"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/pgtest"
)

// TestDatabaseDown checks that a palace whose database goes away answers
// EUNAVAILABLE, never a panic, keeps what was committed, and works again
// once the database is back, without being opened again.
func TestDatabaseDown(t *testing.T) {
	ctx := t.Context()
	c := pgtest.StartCluster(t)
	db := openAt(t, c.URL())
	turn := func(seq int64) engram.Turn {
		return engram.Turn{ID: fmt.Sprintf("t%d", seq), Seq: seq, Namespace: "ns", Session: "s", Role: engram.RoleUser,
			Content: fmt.Sprintf("note %d about the harbour", seq), TS: time.Date(2026, 6, 1, 9, int(seq), 0, 0, time.UTC)}
	}
	if err := db.PutTurns(ctx, []engram.Turn{turn(1), turn(2)}); err != nil {
		t.Fatal(err)
	}
	c.Kill(t)
	if err := db.PutTurns(ctx, []engram.Turn{turn(3)}); engram.ErrorCode(err) != engram.EUNAVAILABLE {
		t.Fatalf("PutTurns with the database down = %v; want EUNAVAILABLE", err)
	}
	if _, err := db.GetTurns(ctx, []string{"t1"}); engram.ErrorCode(err) != engram.EUNAVAILABLE {
		t.Fatalf("GetTurns with the database down = %v; want EUNAVAILABLE", err)
	}
	if _, err := db.SearchTurns(ctx, engram.TextQuery{Text: "harbour"}); err == nil {
		t.Fatal("SearchTurns with the database down found no error")
	}
	c.Start(t)
	if err := db.PutTurns(ctx, []engram.Turn{turn(3)}); err != nil {
		t.Fatalf("PutTurns once the database is back: %v", err)
	}
	hits, err := db.SearchTurns(ctx, engram.TextQuery{Text: "harbour", Limit: 10})
	if err != nil || len(hits) != 3 {
		t.Fatalf("SearchTurns once the database is back = %d hits, %v; want the 3 turns", len(hits), err)
	}
}

// TestSearchTurns_ConcurrentWriters checks the order of change numbers:
// while two servers write turns at once, a third one searching all the
// while ends with every turn in its keyword index. A row that committed
// with a change number below one the third server had read past would be
// missing from it for good.
func TestSearchTurns_ConcurrentWriters(t *testing.T) {
	ctx := t.Context()
	url := pgtest.NewDatabase(t)
	writers := []*DB{openAt(t, url), openAt(t, url)}
	reader := openAt(t, url)
	if err := reader.LoadKeywordIndex(ctx); err != nil {
		t.Fatal(err)
	}
	const perWriter, batch = 400, 5
	var wg sync.WaitGroup
	done := make(chan struct{})
	errs := make(chan error, 3)
	for w, db := range writers {
		wg.Go(func() {
			for i := 0; i < perWriter; i += batch {
				var turns []engram.Turn
				for j := i; j < i+batch; j++ {
					seq := int64(w*perWriter + j + 1) // each writer its own range, interleaved in time
					turns = append(turns, engram.Turn{ID: fmt.Sprintf("w%d-%d", w, j), Seq: seq, Namespace: "ns", Session: "s",
						Role: engram.RoleUser, Content: "the lantern log", TS: time.Date(2026, 6, 1, 0, 0, int(seq), 0, time.UTC)})
				}
				if err := db.PutTurnsSearchable(ctx, turns); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			default:
			}
			if _, err := reader.SearchTurns(ctx, engram.TextQuery{Text: "lantern", Limit: 1}); err != nil {
				errs <- err
				return
			}
			if n, _ := reader.CountTurns(ctx, ""); n == 2*perWriter {
				return
			}
		}
	}()
	wg.Wait()
	<-done
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	hits, err := reader.SearchTurns(ctx, engram.TextQuery{Text: "lantern log", Limit: maxSearchLimit})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2*perWriter {
		t.Fatalf("the reading server's index finds %d of the %d turns written while it searched", len(hits), 2*perWriter)
	}
}

// TestSearch_ColdConcurrent: many searches at once on a server whose
// keyword indexes are cold (a server that just started under load) each
// wait for the load and answer; none panics (a WaitGroup waited on by
// some while another's Warm added the next load did, with HTTP 500s).
func TestSearch_ColdConcurrent(t *testing.T) {
	ctx := t.Context()
	url := pgtest.NewDatabase(t)
	a := openAt(t, url)
	turns := searchTurns(t)
	if err := a.PutTurns(ctx, turns); err != nil {
		t.Fatal(err)
	}
	for round := range 5 {
		b := openAt(t, url) // cold
		var wg sync.WaitGroup
		errs := make(chan error, 32)
		for i := range 32 {
			wg.Go(func() {
				if i%2 == 0 {
					if err := a.PutTurns(ctx, []engram.Turn{{ID: fmt.Sprintf("r%d-%d", round, i), Seq: int64(10_000 + round*100 + i),
						Namespace: "work", Session: "s9", Role: engram.RoleUser, Content: "plover again", TS: time.Now()}}); err != nil {
						errs <- err
					}
				}
				if _, err := b.SearchTurns(ctx, engram.TextQuery{Text: "plover quandle", Limit: 5}); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
}
