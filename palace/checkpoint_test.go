package palace

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
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
