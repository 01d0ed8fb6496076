package archive_test

import (
	"bufio"
	"bytes"
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

func TestRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "home", "archive") // Open creates it
	clk := testutil.NewClock(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC))
	a := MustOpen(t, dir, archive.Options{Now: clk.Now}, true)

	in := []engram.Turn{
		{ID: "client-1", Namespace: "work", Session: "s1", Role: engram.RoleUser, Content: "hello <world> & all",
			TS: time.Date(2026, 4, 30, 9, 0, 0, 5, time.FixedZone("X", -3600)), Meta: json.RawMessage(`{"a":[1,2],"b":"\u00e9"}`)},
		{Namespace: "work", Session: "s1", Role: engram.RoleAssistant, Speaker: "bot", Content: "hi\nthere 日本"},
		{Namespace: "default", Session: "s2", Role: engram.RoleTool, Content: "x", Meta: json.RawMessage(` { "k" : true } `)},
	}
	res := mustAppend(t, a, in...)
	if res[0].ID != "client-1" || res[1].ID == "" || res[1].ID == res[2].ID {
		t.Fatalf("ids: %+v", res)
	}
	for i, r := range res {
		if r.Seq != int64(i+1) || r.Duplicate {
			t.Fatalf("result %d: %+v", i, r)
		}
	}

	now := clk.Now()
	want := make([]engram.Turn, len(in))
	for i, tn := range in {
		tn.ID, tn.Seq, tn.ReceivedAt = res[i].ID, res[i].Seq, now
		tn.TS = tn.TS.UTC()
		if tn.TS.IsZero() {
			tn.TS = now
		}
		want[i] = tn
	}
	want[2].Meta = json.RawMessage(`{"k":true}`) // stored compacted

	check := func(got []engram.Turn) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%d turns, want %d", len(got), len(want))
		}
		for i := range got {
			assertTurn(t, got[i], want[i])
		}
	}
	check(streamAll(t, a, 0)) // from the tail cache
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	b := MustOpen(t, dir, archive.Options{TailCache: -1}, true)
	check(streamAll(t, b, 0)) // from the file
	if got := streamAll(t, b, 2); len(got) != 1 || got[0].Seq != 3 {
		t.Fatalf("stream after 2: %+v", got)
	}
	if b.LastSeq() != 3 {
		t.Fatalf("LastSeq %d", b.LastSeq())
	}

	// The file is plain JSONL, one line per turn, private.
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

func TestConcurrentAppends(t *testing.T) {
	const writers, perWriter = 8, 150
	dir := t.TempDir()
	a := MustOpen(t, dir, archive.Options{}, true)

	var wg sync.WaitGroup
	results := make([][]engram.Appended, writers)
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				tn := turn(fmt.Sprintf("w%d", w), fmt.Sprintf("w%d-%d", w, i))
				tn.ID = fmt.Sprintf("w%d-%d", w, i)
				batch := []engram.Turn{tn}
				if i%10 == 0 { // some calls carry several turns
					for j := range 2 {
						extra := turn(fmt.Sprintf("w%d", w), fmt.Sprintf("w%d-%d-%d", w, i, j))
						extra.ID = fmt.Sprintf("w%d-%d-%d", w, i, j)
						batch = append(batch, extra)
					}
				}
				res, err := a.Append(context.Background(), batch)
				if err != nil {
					errs <- err
					return
				}
				results[w] = append(results[w], res...)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	seqOf := make(map[string]int64)
	for _, rs := range results {
		for _, r := range rs {
			if r.Duplicate {
				t.Fatalf("duplicate %+v", r)
			}
			seqOf[r.ID] = r.Seq
		}
	}
	got := streamAll(t, a, 0)
	if len(got) != len(seqOf) {
		t.Fatalf("%d turns streamed, %d appended", len(got), len(seqOf))
	}
	seen := make(map[string]bool)
	for i, tn := range got {
		if tn.Seq != int64(i+1) {
			t.Fatalf("turn %d has seq %d", i, tn.Seq)
		}
		if seen[tn.ID] {
			t.Fatalf("id %s twice", tn.ID)
		}
		seen[tn.ID] = true
		if seqOf[tn.ID] != tn.Seq {
			t.Fatalf("id %s: streamed seq %d, Append said %d", tn.ID, tn.Seq, seqOf[tn.ID])
		}
	}
	// Each writer's own turns are in the order it appended them.
	last := make(map[string]int64)
	for _, tn := range got {
		if tn.Seq <= last[tn.Session] {
			t.Fatalf("session %s out of order", tn.Session)
		}
		last[tn.Session] = tn.Seq
	}

	s := a.Stats()
	calls := int64(writers * perWriter)
	t.Logf("%d appends, %d turns, %d batches, %d fsyncs", calls, s.Turns, s.Batches, s.Fsyncs)
	if s.Commits != calls || s.Turns != int64(len(got)) {
		t.Fatalf("stats %+v", s)
	}
	if s.Fsyncs >= calls {
		t.Fatalf("%d fsyncs for %d appends: no group commit", s.Fsyncs, calls)
	}
}

func TestIdempotentResend(t *testing.T) {
	dir := t.TempDir()
	a := MustOpen(t, dir, archive.Options{}, true)

	x := turn("s", "x")
	x.ID = "same"
	// Twice in one call.
	res := mustAppend(t, a, x, turn("s", "other"), x)
	if res[0] != (engram.Appended{ID: "same", Seq: 1}) || res[2] != (engram.Appended{ID: "same", Seq: 1, Duplicate: true}) ||
		res[1].Seq != 2 {
		t.Fatalf("results %+v", res)
	}
	// Again in a later call.
	res = mustAppend(t, a, x)
	if res[0] != (engram.Appended{ID: "same", Seq: 1, Duplicate: true}) {
		t.Fatalf("results %+v", res)
	}
	// Concurrently, with a new id: exactly one wins.
	y := turn("s", "y")
	y.ID = "race"
	var wg sync.WaitGroup
	var mu sync.Mutex
	var fresh []engram.Appended
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := a.Append(context.Background(), []engram.Turn{y})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			fresh = append(fresh, res[0])
			mu.Unlock()
		}()
	}
	wg.Wait()
	wins := 0
	for _, r := range fresh {
		if !r.Duplicate {
			wins++
		}
		if r.Seq != 3 {
			t.Fatalf("race result %+v", r)
		}
	}
	if wins != 1 {
		t.Fatalf("%d writes of one id", wins)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	// And after a reopen.
	b := MustOpen(t, dir, archive.Options{}, true)
	res = mustAppend(t, b, x, y, turn("s", "new"))
	if !res[0].Duplicate || res[0].Seq != 1 || !res[1].Duplicate || res[1].Seq != 3 || res[2].Seq != 4 {
		t.Fatalf("results after reopen %+v", res)
	}
	n := 0
	for _, l := range readLines(t, dayFile(dir, dayOfNow())) {
		if bytes.Contains(l, []byte(`"id":"same"`)) {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("id written on %d lines", n)
	}
}

func dayOfNow() string { return time.Now().UTC().Format(time.DateOnly) }

func TestAppendValidates(t *testing.T) {
	a := MustOpen(t, t.TempDir(), archive.Options{}, true)
	for _, tc := range []struct {
		edit  func(*engram.Turn)
		field string
	}{
		{func(t *engram.Turn) { t.Session = "" }, "turns[1].session"},
		{func(t *engram.Turn) { t.Namespace = "" }, "turns[1].namespace"},
		{func(t *engram.Turn) { t.Content = "" }, "turns[1].content"},
		{func(t *engram.Turn) { t.Role = "" }, "turns[1].role"},
		{func(t *engram.Turn) { t.Meta = json.RawMessage(`[1]`) }, "turns[1].meta"},
		{func(t *engram.Turn) { t.Meta = json.RawMessage(`{"a"`) }, "turns[1].meta"},
		{func(t *engram.Turn) { t.Speaker = "\xff" }, "turns[1].speaker"},
		{func(t *engram.Turn) { t.TS = time.Date(12000, 1, 1, 0, 0, 0, 0, time.UTC) }, "turns[1].ts"},
	} {
		bad := turn("s", "bad")
		tc.edit(&bad)
		_, err := a.Append(context.Background(), []engram.Turn{turn("s", "ok"), bad})
		wantCode(t, err, engram.EINVALID)
		if f := engram.ErrorField(err); f != tc.field {
			t.Fatalf("field %q (%v), want %q", f, err, tc.field)
		}
	}
	if a.LastSeq() != 0 {
		t.Fatal("a refused call archived something")
	}
	// Nothing to do is no error.
	if res, err := a.Append(context.Background(), nil); err != nil || len(res) != 0 {
		t.Fatalf("empty append: %v %v", res, err)
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

func TestClose(t *testing.T) {
	dir := t.TempDir()
	a := MustOpen(t, dir, archive.Options{}, true)
	mustAppend(t, a, turn("s", "before"))
	ch := a.Notify()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	_, err := a.Append(context.Background(), []engram.Turn{turn("s", "after")})
	wantCode(t, err, engram.EUNAVAILABLE)
	wantCode(t, a.Stream(context.Background(), 0, func(engram.Turn) error { return nil }), engram.EUNAVAILABLE)
	select {
	case <-ch:
	default:
		t.Fatal("Close did not wake Notify waiters")
	}
	if a.LastSeq() != 1 {
		t.Fatalf("LastSeq %d after close", a.LastSeq())
	}
}

func TestNotify(t *testing.T) {
	a := MustOpen(t, t.TempDir(), archive.Options{}, true)
	ch := a.Notify()
	done := make(chan int64)
	go func() {
		<-ch
		done <- a.LastSeq()
	}()
	x := turn("s", "x")
	x.ID = "x"
	mustAppend(t, a, x)
	if seq := <-done; seq != 1 {
		t.Fatalf("woken at seq %d", seq)
	}
	// A call that writes nothing (a duplicate) commits nothing.
	ch = a.Notify()
	mustAppend(t, a, x)
	select {
	case <-ch:
		t.Fatal("woken by a duplicate")
	default:
	}
	mustAppend(t, a, turn("s", "y"))
	select {
	case <-ch:
	default:
		t.Fatal("not woken by a commit")
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
