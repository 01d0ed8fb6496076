package archive_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/internal/testutil"
)

var day1 = time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)

func TestTornTail(t *testing.T) {
	dir := t.TempDir()
	clk := testutil.NewClock(day1)
	a := MustOpen(t, dir, archive.Options{Now: clk.Now}, false)
	mustAppend(t, a, turn("s", "one"), turn("s", "two"))
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	// A crash in the middle of writing the third line.
	path := dayFile(dir, "2026-05-01")
	third := turn("s", "three")
	third.ID, third.Seq, third.ReceivedAt = "torn", 3, day1
	line, err := archive.EncodeLine(third)
	if err != nil {
		t.Fatal(err)
	}
	torn := line[:len(line)-10]
	appendFile(t, path, torn)

	b := MustOpen(t, dir, archive.Options{Now: clk.Now}, true)
	if s := b.Stats(); s.TornTails != 1 || s.CorruptLines != 0 || s.Turns != 2 {
		t.Fatalf("stats %+v", s)
	}
	lines := readLines(t, path)
	if len(lines) != 2 || !bytes.HasSuffix(lines[1], []byte("\n")) {
		t.Fatalf("day file after recovery: %q", lines)
	}
	q, err := filepath.Glob(filepath.Join(dir, "quarantine", "2026-05-01.*.torn"))
	if err != nil || len(q) != 1 {
		t.Fatalf("quarantine: %v %v", q, err)
	}
	if got, err := os.ReadFile(q[0]); err != nil || !bytes.Equal(got, torn) {
		t.Fatalf("quarantined %q (%v), want %q", got, err, torn)
	}
	if q[0] != filepath.Join(dir, "quarantine", "2026-05-01."+itoa(day1.UnixNano())+".torn") {
		t.Fatalf("quarantine name %s", q[0])
	}

	// Verify lists the quarantined line; the id was never acknowledged, so
	// a re-send of it is new, and seqs go on from the last complete line.
	rep, err := b.Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) != 1 || rep.Problems[0].Kind != archive.ProblemQuarantined || rep.Problems[0].Path != q[0] {
		t.Fatalf("problems %v", rep.Problems)
	}
	third.Seq, third.ReceivedAt = 0, time.Time{}
	res := mustAppend(t, b, third)
	if res[0].Seq != 3 || res[0].Duplicate {
		t.Fatalf("re-send %+v", res[0])
	}
	if got := streamAll(t, b, 0); len(got) != 3 || got[2].Content != "three" {
		t.Fatalf("stream %+v", got)
	}
	// Leave the quarantine out of the final check, which wants no problems.
	t.Cleanup(func() { os.RemoveAll(filepath.Join(dir, "quarantine")) })
}

// TestStaleTempRemoved checks that a temp file a crash left in quarantine/
// goes at the next Open.
func TestStaleTempRemoved(t *testing.T) {
	dir := t.TempDir()
	qdir := filepath.Join(dir, "quarantine")
	if err := os.MkdirAll(qdir, 0o700); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(qdir, "2026-05-01.1.torn.tmp")
	if err := os.WriteFile(tmp, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	MustOpen(t, dir, archive.Options{}, true)
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("stale temp file: %v", err)
	}
}

func TestChecksumDetectsCorruption(t *testing.T) {
	dir := t.TempDir()
	clk := testutil.NewClock(day1)
	a := MustOpen(t, dir, archive.Options{Now: clk.Now}, false)
	mustAppend(t, a, turn("s", "first"), turn("s", "middle line"), turn("s", "last"))
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	path := dayFile(dir, "2026-05-01")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, []byte("middle line"))
	data[i+3] ^= 0x01 // "middle" -> "midele": still JSON, wrong crc
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}

	b := MustOpen(t, dir, archive.Options{Now: clk.Now, TailCache: -1}, false)
	if s := b.Stats(); s.CorruptLines != 1 || s.Turns != 2 || s.TornTails != 0 {
		t.Fatalf("stats %+v", s)
	}
	rep, err := b.Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) != 1 {
		t.Fatalf("problems %v", rep.Problems)
	}
	p := rep.Problems[0]
	if p.Kind != archive.ProblemChecksum || p.Path != path || p.Line != 2 || !errors.Is(p.Err, archive.ErrChecksum) {
		t.Fatalf("problem %s", p)
	}
	if !strings.HasPrefix(p.String(), path+":2: checksum: ") {
		t.Fatalf("problem text %q", p.String())
	}
	if rep.Lines != 3 || rep.Turns != 2 || rep.Files != 1 || rep.OK() {
		t.Fatalf("report %+v", rep)
	}
	got := streamAll(t, b, 0)
	if len(got) != 2 || got[0].Content != "first" || got[1].Content != "last" {
		t.Fatalf("stream %+v", got)
	}
	var scanned int
	if err := b.ScanTime(context.Background(), time.Time{}, time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC),
		func(engram.Turn) error { scanned++; return nil }); err != nil || scanned != 2 {
		t.Fatalf("scan: %d turns, %v", scanned, err)
	}
	// The damaged line stays where it is, byte for byte; appends go on.
	mustAppend(t, b, turn("s", "after"))
	if b.LastSeq() != 4 {
		t.Fatalf("LastSeq %d", b.LastSeq())
	}
	lines := readLines(t, path)
	if len(lines) != 4 || !bytes.Contains(lines[1], []byte("midele")) {
		t.Fatalf("lines %q", lines)
	}
}

func TestDiskFull(t *testing.T) {
	dir := t.TempDir()
	fsys := &faultFS{}
	a := MustOpen(t, dir, archive.Options{FS: fsys, Now: testutil.NewClock(day1).Now}, true)
	mustAppend(t, a, turn("s", "before"))
	path := dayFile(dir, "2026-05-01")
	size := fileSize(t, path)

	for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EDQUOT} {
		fsys.setWriteErr(errno, 25) // part of the line reaches the file
		x := turn("s", "lost")
		x.ID = "retry-me"
		_, err := a.Append(context.Background(), []engram.Turn{x, turn("s", "lost too")})
		wantCode(t, err, engram.ENOSPACE)
		if !errors.Is(err, errno) {
			t.Fatalf("error %v does not wrap %v", err, errno)
		}
		if got := fileSize(t, path); got != size {
			t.Fatalf("file is %d bytes after a failed write, was %d", got, size)
		}
	}
	fsys.setWriteErr(syscall.EIO, 10)
	_, err := a.Append(context.Background(), []engram.Turn{turn("s", "lost")})
	wantCode(t, err, engram.EUNAVAILABLE)
	if a.LastSeq() != 1 {
		t.Fatalf("LastSeq %d", a.LastSeq())
	}

	// Space again: the id and the seqs of the failed calls were not used.
	fsys.setWriteErr(nil, 0)
	x := turn("s", "kept")
	x.ID = "retry-me"
	res := mustAppend(t, a, x)
	if res[0].Seq != 2 || res[0].Duplicate {
		t.Fatalf("after disk full: %+v", res[0])
	}
	if got := streamAll(t, a, 0); len(got) != 2 || got[1].Content != "kept" {
		t.Fatalf("stream %+v", got)
	}
}

func TestDiskFullOnNewFile(t *testing.T) {
	dir := t.TempDir()
	fsys := &faultFS{}
	a := MustOpen(t, dir, archive.Options{FS: fsys, Now: testutil.NewClock(day1).Now}, true)
	fsys.setWriteErr(syscall.ENOSPC, 7)
	_, err := a.Append(context.Background(), []engram.Turn{turn("s", "lost")})
	wantCode(t, err, engram.ENOSPACE)
	if got := fileSize(t, dayFile(dir, "2026-05-01")); got != 0 {
		t.Fatalf("new file holds %d bytes", got)
	}
	fsys.setWriteErr(nil, 0)
	if res := mustAppend(t, a, turn("s", "kept")); res[0].Seq != 1 {
		t.Fatalf("seq %d", res[0].Seq)
	}
}

func TestFsyncFailurePoisons(t *testing.T) {
	dir := t.TempDir()
	fsys := &faultFS{}
	a := MustOpen(t, dir, archive.Options{FS: fsys}, false)
	mustAppend(t, a, turn("s", "before"))

	fsys.setSyncErr(syscall.EIO)
	_, err := a.Append(context.Background(), []engram.Turn{turn("s", "maybe")})
	wantCode(t, err, engram.EUNAVAILABLE)
	if !errors.Is(err, syscall.EIO) {
		t.Fatalf("error %v does not wrap EIO", err)
	}
	// The disk recovers, but a retried fsync proves nothing: stay down.
	fsys.setSyncErr(nil)
	for range 2 {
		_, err = a.Append(context.Background(), []engram.Turn{turn("s", "after")})
		wantCode(t, err, engram.EUNAVAILABLE)
	}
	if err := a.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}

	// Reopened, the archive works again.
	b := MustOpen(t, dir, archive.Options{}, true)
	res := mustAppend(t, b, turn("s", "reopened"))
	if res[0].Seq != b.LastSeq() || b.LastSeq() < 2 {
		t.Fatalf("after reopen: %+v, LastSeq %d", res[0], b.LastSeq())
	}
}

func TestScanTime(t *testing.T) {
	dir := t.TempDir()
	clk := testutil.NewClock(day1)
	fsys := &faultFS{}
	a := MustOpen(t, dir, archive.Options{FS: fsys, Now: clk.Now, TailCache: -1}, true)

	at := func(h int) time.Time { return time.Date(2026, 4, 1, h, 0, 0, 0, time.UTC) }
	mk := func(h int) engram.Turn { x := turn("s", "h"+itoa(int64(h))); x.TS = at(h); return x }
	// Day 1 holds turns from hours 5 to 9, day 2 from hours 1 to 3 (TS is
	// the client's time and need not follow received_at).
	mustAppend(t, a, mk(9), mk(5), mk(7))
	clk.Set(day1.Add(24 * time.Hour))
	mustAppend(t, a, mk(2), mk(1), mk(3))

	scan := func(from, to time.Time) []string {
		t.Helper()
		var got []string
		var prev int64
		if err := a.ScanTime(context.Background(), from, to, func(tn engram.Turn) error {
			if tn.Seq <= prev {
				t.Fatalf("seq %d after %d", tn.Seq, prev)
			}
			prev = tn.Seq
			got = append(got, tn.Content)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	for _, tc := range []struct {
		from, to int
		want     string
	}{
		{0, 24, "h9 h5 h7 h2 h1 h3"},
		{5, 9, "h5 h7"}, // to is exclusive
		{3, 6, "h5 h3"}, // both files, seq order
		{7, 8, "h7"},    // from is inclusive
		{4, 5, ""},      // a gap
		{10, 12, ""},    // after all
		{6, 6, ""},      // empty range
		{9, 3, ""},      // reversed range
	} {
		if got := strings.Join(scan(at(tc.from), at(tc.to)), " "); got != tc.want {
			t.Errorf("[%d, %d): %q, want %q", tc.from, tc.to, got, tc.want)
		}
	}

	// A range that only day 2 covers leaves day 1 unread.
	fsys.resetOpened()
	if got := scan(at(1), at(3)); strings.Join(got, " ") != "h2 h1" {
		t.Fatalf("scan %v", got)
	}
	for _, p := range fsys.openedPaths() {
		if strings.HasSuffix(p, "2026-05-01.jsonl") {
			t.Fatalf("ScanTime read %s", p)
		}
	}
	// Stream after seq 3 skips day 1 too.
	fsys.resetOpened()
	if got := streamAll(t, a, 3); len(got) != 3 {
		t.Fatalf("stream %+v", got)
	}
	if opened := fsys.openedPaths(); len(opened) != 1 || !strings.HasSuffix(opened[0], "2026-05-02.jsonl") {
		t.Fatalf("Stream opened %v", opened)
	}
}

func appendFile(tb testing.TB, path string, b []byte) {
	tb.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

func fileSize(tb testing.TB, path string) int64 {
	tb.Helper()
	st, err := os.Stat(path)
	if err != nil {
		tb.Fatal(err)
	}
	return st.Size()
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestHandEditedFile reads a file whose lines were reordered and copied by
// hand: a seq out of order is skipped everywhere and reported, an id on two
// lines is reported and re-sends map to its first line.
func TestHandEditedFile(t *testing.T) {
	dir := t.TempDir()
	path := dayFile(dir, "2026-05-01")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	var data []byte
	for _, l := range []struct {
		id  string
		seq int64
	}{{"a", 1}, {"b", 3}, {"c", 2}, {"a", 4}} {
		tn := turn("s", l.id)
		tn.ID, tn.Seq, tn.ReceivedAt = l.id, l.seq, day1
		line, err := archive.EncodeLine(tn)
		if err != nil {
			t.Fatal(err)
		}
		data = append(data, line...)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}

	a := MustOpen(t, dir, archive.Options{Now: testutil.NewClock(day1).Now, TailCache: -1}, false)
	if s := a.Stats(); s.CorruptLines != 1 || s.Turns != 3 || a.LastSeq() != 4 {
		t.Fatalf("stats %+v, LastSeq %d", s, a.LastSeq())
	}
	rep, err := a.Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) != 2 ||
		rep.Problems[0].Kind != archive.ProblemSeqOrder || rep.Problems[0].Line != 3 ||
		rep.Problems[1].Kind != archive.ProblemDuplicateID || rep.Problems[1].Line != 4 {
		t.Fatalf("problems %v", rep.Problems)
	}
	var seqs []int64
	for _, tn := range streamAll(t, a, 0) {
		seqs = append(seqs, tn.Seq)
	}
	if fmt.Sprint(seqs) != "[1 3 4]" {
		t.Fatalf("streamed seqs %v", seqs)
	}
	x := turn("s", "again")
	x.ID = "a"
	res := mustAppend(t, a, x, turn("s", "new"))
	if !res[0].Duplicate || res[0].Seq != 1 || res[1].Seq != 5 {
		t.Fatalf("results %+v", res)
	}
}

// TestOpenAppliesBatchesInOrder reads a file of many decoding batches, with
// a damaged line, a seq out of order, an id on two lines and a torn end
// spread over them, with one decoding goroutine and with several: both
// read the same archive, as the lines' order says.
func TestOpenAppliesBatchesInOrder(t *testing.T) {
	const lines = 2000
	var data []byte
	for i := 1; i <= lines; i++ {
		tn := turn("s", fmt.Sprintf("turn %d", i))
		tn.ID, tn.Seq, tn.ReceivedAt = fmt.Sprintf("id%d", i), int64(i), day1
		switch i {
		case 1300:
			tn.Seq = 5 // out of order: skipped
		case 1800:
			tn.ID = "id20" // archived twice: re-sends map to the first
		}
		line, err := archive.EncodeLine(tn)
		if err != nil {
			t.Fatal(err)
		}
		if i == 700 {
			line[bytes.Index(line, []byte("turn 700"))] ^= 0x01 // wrong crc
		}
		data = append(data, line...)
	}
	data = append(data, `{"id":"torn","seq":2001,"namesp`...)
	var stats []archive.Stats
	for _, workers := range []int{1, 4} {
		dir := t.TempDir()
		path := dayFile(dir, "2026-05-01")
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		a := MustOpen(t, dir, archive.Options{Now: testutil.NewClock(day1).Now, LoadWorkers: workers}, false)
		s := a.Stats()
		if s.CorruptLines != 2 || s.TornTails != 1 || s.Turns != lines-2 || a.LastSeq() != lines {
			t.Fatalf("workers %d: stats %+v, LastSeq %d", workers, s, a.LastSeq())
		}
		if a.Known("id700") || a.Known("id1300") || !a.Known("id1299") || !a.Known("id2000") {
			t.Fatalf("workers %d: the skipped lines are known, or the read ones are not", workers)
		}
		var seqs []int64
		err := a.Stream(context.Background(), 0, func(tn engram.Turn) error {
			if tn.Seq == 1800 && tn.ID != "id20" || tn.Seq == 1999 && tn.Content != "turn 1999" {
				t.Errorf("workers %d: seq %d is %s %q", workers, tn.Seq, tn.ID, tn.Content)
			}
			seqs = append(seqs, tn.Seq)
			return nil
		})
		if err != nil || len(seqs) != lines-2 || !slices.IsSorted(seqs) {
			t.Fatalf("workers %d: streamed %d turns in order %v, %v", workers, len(seqs), slices.IsSorted(seqs), err)
		}
		s.Bytes, s.Fsyncs = 0, 0
		stats = append(stats, s)
	}
	if !reflect.DeepEqual(stats[0], stats[1]) {
		t.Fatalf("one worker read %+v, four %+v", stats[0], stats[1])
	}
}
