package archive_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/internal/testutil"
)

// TestFiles checks what is file-specific in a round trip (the suite's
// RoundTrip checks the turns): the turns go to the day file of their
// receive time, plain JSONL, one line per turn, private, under directories
// Open creates; read back from the files they are what the tail cache gave.
func TestFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "home", "archive") // Open creates it
	clk := testutil.NewClock(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC))
	a := MustOpen(t, dir, archive.Options{Now: clk.Now}, true)
	bare := turn("s2", "x")
	bare.TS, bare.Meta = time.Time{}, json.RawMessage(` { "k" : true } `)
	mustAppend(t, a, fullTurn(), turn("s1", "hi\nthere 日本"), bare)
	cached := streamAll(t, a, 0)
	if len(cached) != 3 || !cached[0].ReceivedAt.Equal(clk.Now()) || !cached[2].TS.Equal(clk.Now()) {
		t.Fatalf("from the tail cache: %+v", cached)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	b := MustOpen(t, dir, archive.Options{TailCache: -1}, true)
	got := streamAll(t, b, 0)
	if len(got) != len(cached) {
		t.Fatalf("%d turns from the files, %d from the tail cache", len(got), len(cached))
	}
	for i := range got {
		assertTurn(t, got[i], cached[i])
	}

	path := dayFile(dir, "2026-05-01")
	lines := readLines(t, path)
	if len(lines) != 3 {
		t.Fatalf("%d lines", len(lines))
	}
	for _, l := range lines {
		if !json.Valid(l) {
			t.Fatalf("not JSON: %s", l)
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("file mode %v", st.Mode())
	}
	for _, d := range []string{dir, filepath.Join(dir, "2026"), filepath.Join(dir, "2026", "05")} {
		st, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o700 {
			t.Fatalf("%s: mode %v", d, st.Mode())
		}
	}
}

// TestStreamTailAndFiles checks that the tail cache and the files give the
// same answers, whichever serves a call.
func TestStreamTailAndFiles(t *testing.T) {
	dir := t.TempDir()
	a := MustOpen(t, dir, archive.Options{TailCache: 4}, true)
	for i := range 10 {
		mustAppend(t, a, turn("s", fmt.Sprintf("turn %d", i)))
	}
	for after := int64(0); after <= 11; after++ {
		got := streamAll(t, a, after)
		wantN := max(0, 10-int(after))
		if len(got) != wantN {
			t.Fatalf("after %d: %d turns, want %d", after, len(got), wantN)
		}
		for i, tn := range got {
			if tn.Seq != after+int64(i)+1 || tn.Content != fmt.Sprintf("turn %d", tn.Seq-1) {
				t.Fatalf("after %d: turn %d is %+v", after, i, tn)
			}
		}
	}

	// fn's error stops the stream and comes back as is.
	stop := fmt.Errorf("stop")
	n := 0
	for _, after := range []int64{0, 8} { // files, then tail
		n = 0
		err := a.Stream(context.Background(), after, func(engram.Turn) error { n++; return stop })
		if err != stop || n != 1 {
			t.Fatalf("after %d: err %v after %d calls", after, err, n)
		}
	}
}

// TestGroupCommit appends from many goroutines (the suite's
// ConcurrentAppends checks the turns) and checks that commits share
// fsyncs.
func TestGroupCommit(t *testing.T) {
	const writers, perWriter = 8, 150
	a := MustOpen(t, t.TempDir(), archive.Options{}, true)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				if _, err := a.Append(context.Background(), []engram.Turn{turn(fmt.Sprintf("w%d", w), fmt.Sprint(i))}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	s := a.Stats()
	calls := int64(writers * perWriter)
	t.Logf("%d appends, %d turns, %d batches, %d fsyncs", calls, s.Turns, s.Batches, s.Fsyncs)
	if s.Commits != calls || s.Turns != calls {
		t.Fatalf("stats %+v", s)
	}
	if s.Fsyncs >= calls {
		t.Fatalf("%d fsyncs for %d appends: no group commit", s.Fsyncs, calls)
	}
}

func TestLock(t *testing.T) {
	dir := t.TempDir()
	a := MustOpen(t, dir, archive.Options{}, true)
	_, err := archive.Open(dir, archive.Options{Logger: quietLogger()})
	wantCode(t, err, engram.ELOCKED)
	want := fmt.Sprintf("archive %s is in use by another engram process (pid %d); stop it or use another --home", dir, os.Getpid())
	if engram.ErrorMessage(err) != want {
		t.Fatalf("message %q, want %q", engram.ErrorMessage(err), want)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	MustOpen(t, dir, archive.Options{}, true) // free again
}

// TestLockOtherProcess holds the lock in a child process (this test binary
// running TestLockHelperProcess) and checks that Open names its pid.
func TestLockOtherProcess(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHelperProcess$")
	cmd.Env = append(os.Environ(), "ENGRAM_ARCHIVE_LOCK_HELPER="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "locked\n" {
		t.Fatalf("helper said %q, %v", line, err)
	}
	_, err = archive.Open(dir, archive.Options{Logger: quietLogger()})
	wantCode(t, err, engram.ELOCKED)
	if !strings.Contains(err.Error(), fmt.Sprintf("(pid %d)", cmd.Process.Pid)) {
		t.Fatalf("error %q does not name pid %d", err, cmd.Process.Pid)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper: %v", err)
	}
	MustOpen(t, dir, archive.Options{}, true) // the lock died with the holder
}

func TestLockHelperProcess(t *testing.T) {
	dir := os.Getenv("ENGRAM_ARCHIVE_LOCK_HELPER")
	if dir == "" {
		t.Skip("run by TestLockOtherProcess")
	}
	a, err := archive.Open(dir, archive.Options{Logger: quietLogger()})
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Println("locked")
	io.Copy(io.Discard, os.Stdin) // until the parent closes stdin
	a.Close()
}

// TestNotifyAtCommit checks that the file archive closes Notify's channel
// before Append returns (the suite's Notify only waits for it), also when
// a call that archived nothing came between.
func TestNotifyAtCommit(t *testing.T) {
	a := MustOpen(t, t.TempDir(), archive.Options{}, true)
	x := turn("s", "x")
	x.ID = "x"
	for _, calls := range [][]engram.Turn{{x}, {x, turn("s", "y")}} {
		ch := a.Notify()
		for _, tn := range calls {
			mustAppend(t, a, tn)
		}
		select {
		case <-ch:
		default:
			t.Fatalf("not woken when Append returned (%d calls)", len(calls))
		}
	}
}

func TestDayRollover(t *testing.T) {
	dir := t.TempDir()
	clk := testutil.NewClock(time.Date(2026, 12, 31, 23, 59, 59, 900_000_000, time.UTC))
	a := MustOpen(t, dir, archive.Options{Now: clk.Now}, true)
	mustAppend(t, a, turn("s", "old year"))
	clk.Set(time.Date(2027, 1, 1, 0, 0, 1, 0, time.UTC))
	mustAppend(t, a, turn("s", "new year"))
	// The wall clock steps back: received_at is clamped, the day stays.
	clk.Set(time.Date(2026, 12, 31, 12, 0, 0, 0, time.UTC))
	mustAppend(t, a, turn("s", "clock stepped back"))

	old := readLines(t, dayFile(dir, "2026-12-31"))
	cur := readLines(t, dayFile(dir, "2027-01-01"))
	if len(old) != 1 || len(cur) != 2 {
		t.Fatalf("lines per day: %d, %d", len(old), len(cur))
	}
	got := streamAll(t, a, 0)
	if !got[2].ReceivedAt.Equal(got[1].ReceivedAt) {
		t.Fatalf("received_at went back: %v after %v", got[2].ReceivedAt, got[1].ReceivedAt)
	}
	if s := a.Stats(); s.Files != 2 {
		t.Fatalf("%d files", s.Files)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	// Reopened with the clock still behind, writes go on in the last file.
	b := MustOpen(t, dir, archive.Options{Now: clk.Now}, true)
	mustAppend(t, b, turn("s", "after reopen"))
	if n := len(readLines(t, dayFile(dir, "2027-01-01"))); n != 3 {
		t.Fatalf("%d lines in the last file", n)
	}
	if _, err := os.Stat(dayFile(dir, "2026-12-31")); err != nil {
		t.Fatal(err)
	}
}

// TestCancelledBeforeWrite holds the writer in an fsync, so that a second
// call is still waiting when its ctx ends, and cancels the first call's
// ctx while it is being written.
func TestCancelledBeforeWrite(t *testing.T) {
	fsys := &faultFS{}
	a := MustOpen(t, t.TempDir(), archive.Options{FS: fsys}, true)
	mustAppend(t, a, turn("s", "warm up")) // creates the file, so the next sync is the data's

	enter, release := fsys.blockSyncs()
	ctx1, cancel1 := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() {
		_, err := a.Append(ctx1, []engram.Turn{turn("s", "first")})
		first <- err
	}()
	<-enter // the first call is written and in its fsync

	ctx2, cancel2 := context.WithCancel(context.Background())
	second := make(chan error, 1)
	go func() {
		_, err := a.Append(ctx2, []engram.Turn{turn("s", "second")})
		second <- err
	}()
	cancel1()
	cancel2()
	if err := <-second; err != context.Canceled {
		t.Fatalf("second: %v, want context.Canceled", err)
	}
	release()
	if err := <-first; err != nil {
		t.Fatalf("first, cancelled after its write: %v", err)
	}
	if got := streamAll(t, a, 0); len(got) != 2 || got[1].Content != "first" {
		t.Fatalf("archived %+v", got)
	}
}

// TestStreamWhileAppending reads while writers append: readers only see
// whole, committed turns in seq order.
func TestStreamWhileAppending(t *testing.T) {
	a := MustOpen(t, t.TempDir(), archive.Options{TailCache: 8}, true)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 200 {
			if _, err := a.Append(ctx, []engram.Turn{turn("s", fmt.Sprint(i))}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for a.LastSeq() < 200 {
		last := a.LastSeq()
		var prev int64
		err := a.Stream(context.Background(), 0, func(tn engram.Turn) error {
			if tn.Seq != prev+1 {
				return fmt.Errorf("seq %d after %d", tn.Seq, prev)
			}
			prev = tn.Seq
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if prev < last {
			t.Fatalf("streamed up to %d, LastSeq was %d", prev, last)
		}
	}
	wg.Wait()
}
