package palace

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/testutil"
)

// unitTextState reads the follower's watermark, the newest session part's
// change number, and the session parts without a full-text row.
func unitTextState(tb testing.TB, db *DB) (mark, newest, missing int64) {
	tb.Helper()
	ctx := context.Background()
	err := db.View(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `SELECT
			coalesce((SELECT value FROM palace_meta WHERE key = ?), 0),
			coalesce((SELECT max(seq) FROM units WHERE kind = 'session'), 0),
			(SELECT count(*) FROM units u WHERE kind = 'session' AND NOT EXISTS (SELECT 1 FROM unit_sessions_fts f WHERE f.rowid = u.n))`,
			keyUnitTextSeq).Scan(&mark, &newest, &missing)
	})
	if err != nil {
		tb.Fatal(err)
	}
	return mark, newest, missing
}

// TestUnitTextFollower: the session parts' full-text rows are written by
// the follower after the turns' commit, with no flush asked for; a search
// by FTS5 sees a part's newest turn; Close writes what is left, and a
// palace whose rows fell behind (a crash) has them written when opened.
func TestUnitTextFollower(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "palace.db")
	db := MustOpenDBAt(t, path, Options{})
	var turns []engram.Turn
	for i := range 40 {
		tr := testTurn(int64(i+1), fmt.Sprintf("turn %d about the kafka cluster", i))
		tr.Session = fmt.Sprintf("s%d", i%4)
		turns = append(turns, tr)
	}
	for _, tr := range turns { // one commit a turn, as single POSTs
		mustPut(t, db, tr)
	}
	testutil.WaitUntil(t, "the follower to write every session part's row", func() bool {
		mark, newest, missing := unitTextState(t, db)
		return mark == newest && missing == 0
	})

	// A turn that only the part's row can match by its words together
	// with an earlier turn's: found by FTS5 (the index is not loaded).
	last := testTurn(41, "zeppelin")
	last.Session = "s1"
	mustPut(t, db, last)
	hits, err := db.SearchUnits(ctx, engram.TextQuery{Text: "zeppelin", Limit: 5}, engram.UnitSession)
	if err != nil || len(hits) != 1 || hits[0].Unit.Session != "s1" {
		t.Fatalf("FTS5's search of the session parts right after the turn: %v, %v", hits, err)
	}

	// Close writes what the follower has not.
	more := testTurn(42, "dirigible")
	more.Session = "s2"
	mustPut(t, db, more)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = MustOpenDBAt(t, path, Options{})
	db.text.close() // this handle's follower stays out of the rest
	if mark, newest, missing := unitTextState(t, db); mark != newest || missing != 0 {
		t.Fatalf("after Close: watermark %d, newest part %d, %d parts without a row", mark, newest, missing)
	}

	// Rows behind the watermark, as a crash leaves them: the next open
	// writes them without being asked.
	if err := db.Update(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO unit_sessions_fts (unit_sessions_fts) VALUES ('delete-all')`); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE palace_meta SET value = 0 WHERE key = ?`, keyUnitTextSeq)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	again := MustOpenDBAt(t, path, Options{})
	testutil.WaitUntil(t, "the rows a crash left behind to be written at open", func() bool {
		mark, newest, missing := unitTextState(t, again)
		return mark == newest && missing == 0
	})
}
