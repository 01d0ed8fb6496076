package palace

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/testutil"
)

// TestCheckpointer: the writer never checkpoints (its commits do not copy
// the WAL), and the background checkpointer copies every commit into the
// database file: a copy of palace.db alone, without its WAL, comes to hold
// every turn written.
func TestCheckpointer(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "palace.db")
	db := MustOpenDBAt(t, path, Options{})
	var auto int
	if err := db.w.QueryRowContext(ctx, `PRAGMA wal_autocheckpoint`).Scan(&auto); err != nil || auto != 0 {
		t.Fatalf("the writer's wal_autocheckpoint is %d (%v), want 0", auto, err)
	}
	const n = 300
	for i := int64(1); i <= n; i++ {
		if err := db.PutTurns(ctx, []engram.Turn{testTurn(i, "a turn about the billing migration, number "+itoa(i))}); err != nil {
			t.Fatal(err)
		}
	}
	copyPath := filepath.Join(dir, "copy.db")
	testutil.WaitUntil(t, "every turn in the database file", func() bool {
		return turnsInFileAlone(path, copyPath) == n
	})
	if db.ckpt.runs.Load() == 0 {
		t.Fatal("no checkpoint counted")
	}
}

// TestCheckpointerRestartsWAL: under writes that never pause, the WAL
// still starts again from its beginning once it is long (restartFrames):
// the checkpointer's second step takes the writer, so the WAL is copied
// whole with no commit after it. (A checkpoint beside the writer alone
// never saw it whole, and the WAL grew with every write.)
func TestCheckpointerRestartsWAL(t *testing.T) {
	testutil.LongRun(t)
	ctx := context.Background()
	db := MustOpenDB(t)
	body := strings.Repeat("the billing migration moved every invoice to the new ledger; ", 40)
	seq := int64(0)
	testutil.WaitUntil(t, "the WAL started again", func() bool {
		for range 20 {
			seq++
			if err := db.PutTurns(ctx, []engram.Turn{testTurn(seq, body+itoa(seq))}); err != nil {
				t.Fatal(err)
			}
		}
		return db.ckpt.restarts.Load() > 0
	})
}

// turnsInFileAlone copies the database file at path, without its WAL, to
// copyPath and counts the turns the copy holds; -1 when it cannot be read
// (a copy taken while a checkpoint wrote).
func turnsInFileAlone(path, copyPath string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return -1
	}
	os.Remove(copyPath + "-wal")
	os.Remove(copyPath + "-shm")
	if err := os.WriteFile(copyPath, b, 0o600); err != nil {
		return -1
	}
	c, err := sql.Open("sqlite", "file:"+copyPath+"?mode=ro")
	if err != nil {
		return -1
	}
	defer c.Close()
	var got int
	if err := c.QueryRow(`SELECT count(*) FROM turns`).Scan(&got); err != nil {
		return -1
	}
	return got
}

// TestCheckpointerStep: a background checkpoint is a step of the process's
// background work (Options.Work): it begins one before it copies anything
// and ends it after, and it checkpoints nothing when no step can begin
// (the palace closing).
func TestCheckpointerStep(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "palace.db")
	db := MustOpenDBAt(t, path, Options{})
	if err := db.PutTurns(ctx, []engram.Turn{testTurn(1, "a turn about the billing migration")}); err != nil {
		t.Fatal(err)
	}
	var c *checkpointer
	var refuse bool
	var atBegin, atEnd []int64 // the checkpoints run when a step began, ended
	c, err := newCheckpointer(path, &writeGate{}, func(context.Context) (func(), error) {
		if refuse {
			return nil, context.Canceled
		}
		atBegin = append(atBegin, c.runs.Load())
		return func() { atEnd = append(atEnd, c.runs.Load()) }, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.conn.Close() })
	c.checkpoint(ctx)
	if c.runs.Load() != 1 || !slices.Equal(atBegin, []int64{0}) || !slices.Equal(atEnd, []int64{1}) {
		t.Fatalf("a checkpoint: %d run; steps begun at %v and ended at %v checkpoints; want 1 run in one step, begun at 0 and ended at 1",
			c.runs.Load(), atBegin, atEnd)
	}
	refuse = true
	c.checkpoint(ctx)
	if c.runs.Load() != 1 {
		t.Fatalf("a checkpoint ran without its step: %d runs, want 1", c.runs.Load())
	}
}
