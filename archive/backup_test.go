package archive_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/internal/testutil"
)

// checkCopy checks a copy Backup made against what it reported: the files
// and their hashes, nothing but complete lines that decode, the seqs 1 to
// LastSeq without a gap; then it opens the copy as an archive.
func checkCopy(tb testing.TB, dir string, info archive.BackupInfo) {
	tb.Helper()
	var want int64 = 1
	for _, f := range info.Files {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
		if err != nil {
			tb.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if int64(len(b)) != f.Size || hex.EncodeToString(sum[:]) != f.SHA256 {
			tb.Errorf("%s: %d bytes, sha256 %x; reported %d, %s", f.Path, len(b), sum, f.Size, f.SHA256)
		}
		if strings.HasPrefix(f.Path, "quarantine/") {
			continue
		}
		if len(b) > 0 && b[len(b)-1] != '\n' {
			tb.Errorf("%s ends in a torn line: %q", f.Path, b[max(0, len(b)-40):])
		}
		for line := range bytes.Lines(b) {
			t, err := archive.DecodeLine(bytes.TrimSuffix(line, []byte("\n")))
			if err != nil {
				tb.Fatalf("%s: %v: %q", f.Path, err, line)
			}
			if t.Seq != want {
				tb.Fatalf("%s: seq %d, want %d", f.Path, t.Seq, want)
			}
			want++
		}
	}
	if want-1 != info.LastSeq || info.Turns != info.LastSeq {
		tb.Errorf("copy holds seqs up to %d; reported LastSeq %d, %d turns", want-1, info.LastSeq, info.Turns)
	}
	if _, err := os.Stat(filepath.Join(dir, "LOCK")); err == nil {
		tb.Errorf("the LOCK was copied")
	}
	a, err := archive.Open(dir, archive.Options{Logger: quietLogger()})
	if err != nil {
		tb.Fatalf("open the copy: %v", err)
	}
	defer a.Close()
	if s := a.Stats(); s.TornTails != 0 || s.CorruptLines != 0 || s.Turns != info.Turns || a.LastSeq() != info.LastSeq {
		tb.Errorf("the copy opens with %+v, LastSeq %d; want %d turns up to %d", s, a.LastSeq(), info.Turns, info.LastSeq)
	}
}

// TestBackupWhileAppending copies the archive again and again while
// writers append without pause, over several day files: every copy holds
// complete lines only, up to a seq no lower than what was acknowledged
// before the copy began.
func TestBackupWhileAppending(t *testing.T) {
	dir := t.TempDir()
	var hours atomic.Int64 // a new day every 24 commits
	start := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { return start.Add(time.Duration(hours.Add(1)) * time.Hour) }
	a := MustOpen(t, dir, archive.Options{Now: now}, true)

	const writers = 4
	var acked atomic.Int64 // the highest seq acknowledged so far
	errs := make(chan error, writers)
	stop := testutil.Writers(t, writers, func(w, i int) bool {
		// Long lines, so that a write is more than one page.
		tn := turn(fmt.Sprintf("w%d", w), strings.Repeat(fmt.Sprintf("w%d-%d ", w, i), 1+i%500))
		res, err := a.Append(context.Background(), []engram.Turn{tn, turn("x", "second")})
		if err != nil {
			errs <- err
			return false
		}
		for _, r := range res {
			for {
				cur := acked.Load()
				if r.Seq <= cur || acked.CompareAndSwap(cur, r.Seq) {
					break
				}
			}
		}
		return true
	})

	var last int64
	for i := range 6 {
		testutil.WaitUntil(t, "appends after the last copy", func() bool { return acked.Load() > last+50 || len(errs) > 0 })
		before := acked.Load()
		dst := filepath.Join(t.TempDir(), "copy")
		info, err := a.Backup(context.Background(), dst)
		if err != nil {
			t.Fatal(err)
		}
		if info.LastSeq < before {
			t.Errorf("copy %d ends at seq %d; %d was acknowledged before it began", i, info.LastSeq, before)
		}
		checkCopy(t, dst, info)
		last = info.LastSeq
		if len(info.Files) < 2 && i > 2 {
			t.Errorf("copy %d has %d files; want several days", i, len(info.Files))
		}
	}
	stop()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestBackupCopiesQuarantine: the torn tail Open moved to quarantine is
// part of the copy, byte for byte.
func TestBackupCopiesQuarantine(t *testing.T) {
	dir := t.TempDir()
	a, err := archive.Open(dir, archive.Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, a, turn("s", "one"), turn("s", "two"))
	a.Close()
	appendFile(t, dayFile(dir, dayOfNow()), []byte(`{"id":"torn","seq":3,"names`))
	a = MustOpen(t, dir, archive.Options{}, false)
	if a.Stats().TornTails != 1 {
		t.Fatalf("no torn tail quarantined: %+v", a.Stats())
	}
	dst := filepath.Join(t.TempDir(), "copy")
	info, err := a.Backup(context.Background(), dst)
	if err != nil {
		t.Fatal(err)
	}
	var q []archive.BackupFile
	for _, f := range info.Files {
		if strings.HasPrefix(f.Path, "quarantine/") {
			q = append(q, f)
		}
	}
	if len(q) != 1 || q[0].Size != int64(len(`{"id":"torn","seq":3,"names`)) {
		t.Fatalf("quarantine in the copy: %+v", q)
	}
	checkCopy(t, dst, info)
}

func TestBackupRefusals(t *testing.T) {
	dir := t.TempDir()
	a, err := archive.Open(dir, archive.Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, a, turn("s", "one"))
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "mine.txt"), []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = a.Backup(context.Background(), full)
	wantCode(t, err, engram.ECONFLICT)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := a.Backup(ctx, filepath.Join(t.TempDir(), "c")); err != context.Canceled {
		t.Errorf("cancelled backup: %v", err)
	}

	// An empty directory is fine.
	empty := t.TempDir()
	info, err := a.Backup(context.Background(), empty)
	if err != nil || info.LastSeq != 1 {
		t.Fatalf("backup into an empty directory: %+v, %v", info, err)
	}
	a.Close()
	_, err = a.Backup(context.Background(), filepath.Join(t.TempDir(), "c"))
	wantCode(t, err, engram.EUNAVAILABLE)
}

func TestLockDir(t *testing.T) {
	dir := t.TempDir()
	a, err := archive.Open(dir, archive.Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = archive.LockDir(dir)
	wantCode(t, err, engram.ELOCKED)
	a.Close()

	l, err := archive.LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = archive.Open(dir, archive.Options{Logger: quietLogger()})
	wantCode(t, err, engram.ELOCKED)
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	MustOpen(t, dir, archive.Options{}, true)
}

// BenchmarkBackup copies an archive of 100,000 turns.
func BenchmarkBackup(b *testing.B) {
	dir := b.TempDir()
	var hours atomic.Int64 // a day file every 2,400 turns: 42 files
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := MustOpen(b, dir, archive.Options{Now: func() time.Time { return start.Add(time.Duration(hours.Add(1)) * time.Hour) }}, false)
	batch := make([]engram.Turn, 100)
	for i := range 1000 {
		for j := range batch {
			batch[j] = turn(fmt.Sprintf("s%d", i/4), fmt.Sprintf("turn %d of the benchmark archive: we decided to keep the API on port 30001 and to move the cache", i*100+j))
		}
		mustAppend(b, a, batch...)
	}
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		dst := filepath.Join(b.TempDir(), "copy")
		b.StartTimer()
		info, err := a.Backup(context.Background(), dst)
		if err != nil {
			b.Fatal(err)
		}
		if info.Turns != 100_000 {
			b.Fatalf("copied %d turns", info.Turns)
		}
	}
	st := a.Stats()
	b.ReportMetric(float64(st.Bytes)/1e6, "MB")
	b.ReportMetric(float64(st.Files), "files")
}
