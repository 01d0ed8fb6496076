package palace

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/testutil"
)

// TestBackupWhileWriting copies the palace while a goroutine stores turns
// without pause: every copy opens, passes integrity_check and the FTS
// checks, and holds exactly the turns up to its watermark, which lies
// between what was stored before the copy began and what was stored when
// it ended.
func TestBackupWhileWriting(t *testing.T) {
	testutil.LongRun(t)
	db := MustOpenDB(t)
	ctx := context.Background()
	for seq := int64(1); seq <= 500; seq++ {
		mustPut(t, db, testTurn(seq, "warm up turn about the database port "+itoa(seq)))
	}

	var stored atomic.Int64 // the highest seq whose PutTurns returned
	stored.Store(500)
	werr := make(chan error, 1) // the writer's failure
	stop := testutil.Writers(t, 1, func(_, i int) bool {
		seq := 501 + 3*int64(i)
		batch := []engram.Turn{
			testTurn(seq, "we moved the cache to port "+itoa(seq)),
			testTurn(seq+1, "我们决定用SQLite做存储 "+itoa(seq)),
			testTurn(seq+2, "backup while writing "+itoa(seq)),
		}
		if err := db.PutTurns(ctx, batch); err != nil {
			werr <- err
			return false
		}
		stored.Store(seq + 2)
		return true
	})

	dir := t.TempDir()
	var infos []Info
	for i := range 4 {
		// Each copy starts while writes are under way, after more than the
		// last copy holds (the first CJK turn loads the dictionary first).
		last := int64(500)
		if i > 0 {
			last = infos[i-1].IndexedSeq
		}
		testutil.WaitUntil(t, "writes after the last copy", func() bool { return stored.Load() > last+30 || len(werr) > 0 })
		before := stored.Load()
		path := filepath.Join(dir, "copy"+itoa(int64(i))+".db")
		info, err := db.Backup(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		after := stored.Load() + 3 // a batch may commit before its Store
		if info.IndexedSeq < before || info.IndexedSeq > after {
			t.Errorf("copy %d: indexed_seq %d, want within [%d, %d]", i, info.IndexedSeq, before, after)
		}
		if info.Turns != info.IndexedSeq {
			t.Errorf("copy %d: %d turns up to indexed_seq %d; want one per seq", i, info.Turns, info.IndexedSeq)
		}
		if info.SchemaVersion < 1 {
			t.Errorf("copy %d: schema version %d", i, info.SchemaVersion)
		}
		if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("copy %d: %v, mode %v; want 0600", i, err, st.Mode().Perm())
		}
		infos = append(infos, info)
	}
	stop()
	if len(werr) > 0 {
		t.Fatal(<-werr)
	}
	for i := 1; i < len(infos); i++ {
		if infos[i].IndexedSeq <= infos[i-1].IndexedSeq {
			t.Errorf("copy %d does not hold the writes made after copy %d: %+v", i, i-1, infos)
		}
	}

	for i, want := range infos {
		cp := MustOpenDBAt(t, filepath.Join(dir, "copy"+itoa(int64(i))+".db"), Options{}) // checks integrity at the end
		seq, err := cp.IndexedSeq(ctx)
		if err != nil || seq != want.IndexedSeq {
			t.Errorf("copy %d reopened: indexed_seq %d, %v; want %d", i, seq, err, want.IndexedSeq)
		}
		var ok string
		if err := cp.View(ctx, func(tx *sql.Tx) error {
			return tx.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&ok)
		}); err != nil || ok != "ok" {
			t.Errorf("copy %d: integrity_check %q, %v", i, ok, err)
		}
		res, err := cp.SearchTurns(ctx, engram.TextQuery{Namespace: engram.DefaultNamespace, Text: "database port", Limit: 5})
		if err != nil || len(res) == 0 {
			t.Errorf("copy %d: search finds %d turns, %v", i, len(res), err)
		}
	}
}

func TestBackupRefusesExistingFile(t *testing.T) {
	db := MustOpenDB(t)
	mustPut(t, db, testTurn(1, "hello"))
	path := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(path, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := db.Backup(context.Background(), path)
	if engram.ErrorCode(err) != engram.ECONFLICT {
		t.Fatalf("backup over an existing file: %v, want %s", err, engram.ECONFLICT)
	}
	if b, _ := os.ReadFile(path); string(b) != "mine" {
		t.Errorf("the existing file was changed: %q", b)
	}
}

func TestBackupCancelled(t *testing.T) {
	db := MustOpenDB(t)
	mustPut(t, db, testTurn(1, "hello"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	path := filepath.Join(t.TempDir(), "copy.db")
	if _, err := db.Backup(ctx, path); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled backup: %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a cancelled backup left %s: %v", path, err)
	}
}

func TestBackupAfterClose(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "palace.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := db.Backup(context.Background(), filepath.Join(t.TempDir(), "copy.db")); !errors.Is(err, ErrClosed) {
		t.Fatalf("backup after close: %v", err)
	}
}

func TestReadInfoMissing(t *testing.T) {
	_, err := ReadInfo(context.Background(), filepath.Join(t.TempDir(), "nope.db"))
	if engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Fatalf("ReadInfo of a missing file: %v", err)
	}
}

// BenchmarkBackup copies a palace of 100,000 turns (95 MB).
func BenchmarkBackup(b *testing.B) {
	db, _ := buildBenchDB(b, b.TempDir(), 100_000)
	dir := b.TempDir()
	ctx := context.Background()
	b.ResetTimer()
	for i := range b.N {
		path := filepath.Join(dir, "copy"+itoa(int64(i))+".db")
		start := time.Now()
		info, err := db.Backup(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(time.Since(start).Seconds(), "s/backup")
		if info.Turns != 100_000 {
			b.Fatalf("copy holds %d turns", info.Turns)
		}
		b.StopTimer()
		if st, err := os.Stat(path); err == nil {
			b.ReportMetric(float64(st.Size())/1e6, "MB")
		}
		os.Remove(path)
		b.StartTimer()
	}
}
