package palace

import (
	"context"
	"database/sql"
	"testing"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/palacetest"
	"github.com/engram-dev/engram/internal/testutil"
)

// TestMerger_KeepsSegmentsMerged writes turns a commit each, as single
// POSTs do, and wants the merger, once idle, to have left no full-text table
// with a level of segments to merge (FTS5's own 'merge' then finds nothing
// to do), every table's in-commit merging off (migration 0017), every index
// sound (FTS5's integrity-check), and the turns found as before.
func TestMerger_KeepsSegmentsMerged(t *testing.T) {
	testutil.LongRun(t)
	ctx := context.Background()
	db := MustOpenDB(t)
	c := palacetest.NewCorpus(7)
	var last engram.Turn
	for seq := int64(1); seq <= 300; seq++ {
		last = c.Turn(seq)
		if err := db.PutTurns(ctx, []engram.Turn{last}); err != nil {
			t.Fatal(err)
		}
	}
	testutil.WaitUntil(t, "the merger is idle", db.merge.idle)
	if db.merge.steps.Load() == 0 {
		t.Fatal("300 commits and the merger merged nothing")
	}
	err := db.Update(ctx, func(tx *sql.Tx) error {
		for _, table := range mergeTables {
			var automerge int
			if err := tx.QueryRowContext(ctx, `SELECT v FROM `+table+`_config WHERE k = 'automerge'`).Scan(&automerge); err != nil || automerge != 0 {
				t.Errorf("%s: automerge %d (%v), want 0", table, automerge, err)
			}
			var before, after int64
			if err := tx.QueryRowContext(ctx, `SELECT total_changes()`).Scan(&before); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO `+table+` (`+table+`, rank) VALUES ('merge', 64)`); err != nil {
				return err
			}
			if err := tx.QueryRowContext(ctx, `SELECT total_changes()`).Scan(&after); err != nil {
				return err
			}
			if after-before >= 2 {
				t.Errorf("%s: the merger left segments to merge", table)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO `+table+` (`+table+`) VALUES ('integrity-check')`); err != nil {
				t.Errorf("%s: %v", table, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	hits, err := db.SearchTurns(ctx, engram.TextQuery{Text: last.Content, Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, h := range hits {
		found = found || h.Turn.ID == last.ID
	}
	if !found {
		t.Fatalf("the last turn %q is not among the hits for its own text: %v", last.ID, hits)
	}
}
