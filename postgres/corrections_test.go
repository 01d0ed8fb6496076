package postgres_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/internal/pgtest"
	"github.com/engram-dev/engram/postgres"
)

// TestCorrectionsConcurrent appends corrections from two Archives on one
// database, as two servers would, from several goroutines each, while a
// third follows the journal with Since after the last number it read and
// wakes on Changed. Every correction must be kept, once, under a number
// of its own, the numbers following the commit order: a follower that
// passed an entry committed late would never see it.
func TestCorrectionsConcurrent(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ctx := context.Background()
	writers := []*postgres.Corrections{mustOpen(t, url, postgres.Options{}).Corrections(), mustOpen(t, url, postgres.Options{}).Corrections()}
	follower := mustOpen(t, url, postgres.Options{}).Corrections()
	const perWriter, callsPer = 3, 15
	total := len(writers) * perWriter * callsPer

	var followed []postgres.JournaledCorrection
	var woken atomic.Int64
	followErr := make(chan error, 1)
	go func() {
		var last int64
		for len(followed) < total {
			wake := follower.Changed()
			page, err := follower.Since(ctx, last)
			if err != nil {
				followErr <- err
				return
			}
			for _, c := range page {
				if c.N <= last {
					followErr <- fmt.Errorf("entry %d after %d", c.N, last)
					return
				}
				followed, last = append(followed, c), c.N
			}
			if len(page) == 0 {
				<-wake
				woken.Add(1)
			}
		}
		followErr <- nil
	}()

	var wg sync.WaitGroup
	var mu sync.Mutex
	acked := map[string]int64{}
	for wi, j := range writers {
		for g := range perWriter {
			wg.Go(func() {
				for i := range callsPer {
					c := engram.Correction{ID: fmt.Sprintf("cor-w%d-g%d-%d", wi, g, i), At: time.Now().UTC(), Target: engram.CorrectMemory,
						Of: "m1", Text: fmt.Sprintf("text %d", i)}
					n, err := j.Append(ctx, c)
					if err != nil {
						t.Errorf("append %s: %v", c.ID, err)
						return
					}
					mu.Lock()
					acked[c.ID] = n
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	if err := <-followErr; err != nil {
		t.Fatal(err)
	}
	if woken.Load() == 0 {
		t.Error("the follower was never woken by a notification")
	}
	seen := map[int64]bool{}
	for _, n := range acked {
		if seen[n] {
			t.Fatalf("number %d given twice", n)
		}
		seen[n] = true
	}
	if len(followed) != total || len(acked) != total {
		t.Fatalf("followed %d, acknowledged %d, appended %d", len(followed), len(acked), total)
	}
	for _, c := range followed {
		if acked[c.ID] != c.N {
			t.Fatalf("the follower read %s as %d, its Append answered %d", c.ID, c.N, acked[c.ID])
		}
	}
	all, err := writers[0].All(ctx)
	if err != nil || len(all) != total {
		t.Fatalf("All: %d, %v", len(all), err)
	}
}

// TestCorrectionsRewrite checks Rewrite: a correction dropped goes, one
// edited is changed where it stands, the rest keep their numbers, and a
// dropped number (the last one, here) is never given again; corrections
// engram migrate copied are numbered before the next Append's.
func TestCorrectionsRewrite(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ctx := t.Context()
	// A home's journal of two corrections and an archive of none, copied
	// into the database as `engram migrate --to` does.
	home := t.TempDir()
	src := filepath.Join(home, "archive")
	if err := os.Mkdir(src, 0o700); err != nil {
		t.Fatal(err)
	}
	fj, err := archive.OpenJournal(filepath.Join(home, archive.CorrectionsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"c1", "c2"} {
		if err := fj.Append(engram.Correction{ID: id, Target: engram.CorrectMemory, Of: "m-" + id, Text: "kept " + id}); err != nil {
			t.Fatal(err)
		}
	}
	a := mustOpen(t, url, postgres.Options{})
	if _, err := a.Import(ctx, src, postgres.HomeFiles{Journal: fj.Path()}); err != nil {
		t.Fatal(err)
	}
	j := a.Corrections()
	n3, err := j.Append(ctx, engram.Correction{ID: "c3", Target: engram.CorrectMemory, Of: "m3", Text: "the secret zorp"})
	if err != nil || n3 != 3 {
		t.Fatalf("append after the copied journal: %d, %v", n3, err)
	}
	n4, err := j.Append(ctx, engram.Correction{ID: "c4", Target: engram.CorrectMemory, Of: "m4", Text: "to drop"})
	if err != nil {
		t.Fatal(err)
	}
	changed, err := j.Rewrite(ctx, func(c engram.Correction) (engram.Correction, bool) {
		switch c.ID {
		case "c1", "c4":
			return c, false
		case "c3":
			c.Text = "the secret [gone]"
		}
		return c, true
	})
	if err != nil || changed != 3 {
		t.Fatalf("rewrite: %d, %v", changed, err)
	}
	if again, err := j.Rewrite(ctx, func(c engram.Correction) (engram.Correction, bool) { return c, true }); err != nil || again != 0 {
		t.Fatalf("a rewrite that changes nothing: %d, %v", again, err)
	}
	n5, err := j.Append(ctx, engram.Correction{ID: "c5", Target: engram.CorrectFact, Of: "f5", Wrong: true})
	if err != nil || n5 <= n4 {
		t.Fatalf("append after the last entry was dropped: %d (dropped %d), %v", n5, n4, err)
	}
	got, err := j.Since(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	var ns []int64
	for _, c := range got {
		ids, ns = append(ids, c.ID), append(ns, c.N)
	}
	if !slices.Equal(ids, []string{"c2", "c3", "c5"}) || !slices.Equal(ns, []int64{2, 3, n5}) || got[1].Text != "the secret [gone]" {
		t.Fatalf("journal after the rewrite: %v %v %+v", ids, ns, got)
	}
	pgtest.MustHoldNowhere(t, url, "zorp")
}
