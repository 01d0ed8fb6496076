package archive_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/internal/testutil"
)

// archiveState is what a reader can see of an archive: what Open rebuilds,
// by reading the files or from the checkpoint.
type archiveState struct {
	Stats     archive.Stats
	LastSeq   int64
	All, Tail []engram.Turn
	Day2      []engram.Turn
	Known     map[string][2]bool // id -> known, forgotten
}

func stateOf(t *testing.T, a *archive.Archive, ids []string) archiveState {
	t.Helper()
	st := a.Stats()
	st.Fsyncs, st.Batches, st.Commits = 0, 0, 0
	s := archiveState{Stats: st, LastSeq: a.LastSeq(), All: streamAll(t, a, 0), Tail: streamAll(t, a, a.LastSeq()-3), Known: map[string][2]bool{}}
	from := day1.Add(24 * time.Hour)
	if err := a.ScanTime(context.Background(), from, from.Add(24*time.Hour), func(t engram.Turn) error {
		s.Day2 = append(s.Day2, t)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, id := range append(ids, "01ARZ3NDEKTSV4RRFFQ69G5FAV") {
		s.Known[id] = [2]bool{a.Known(id), a.Forgotten(id)}
	}
	return s
}

// fillArchive writes turns over three days into a new archive at dir,
// forgets one and redacts another, closes it and returns the ids.
func fillArchive(t *testing.T, dir string) []string {
	t.Helper()
	clk := testutil.NewClock(day1)
	a := MustOpen(t, dir, archive.Options{Now: clk.Now, TailCache: 4}, false)
	var ids []string
	for d := range 3 {
		clk.Set(day1.Add(time.Duration(d) * 24 * time.Hour))
		var batch []engram.Turn
		for i := range 5 {
			tn := turn(fmt.Sprintf("s%d", d), fmt.Sprintf("day %d turn %d password hunter2", d, i))
			tn.TS = clk.Now()
			batch = append(batch, tn)
		}
		for _, r := range mustAppend(t, a, batch...) {
			ids = append(ids, r.ID)
		}
	}
	ctx := context.Background()
	if _, err := a.Forget(ctx, ids[1:2], engram.Forgotten{At: day1, Reason: "asked"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Rewrite(ctx, ids[12:13], func(t engram.Turn) (engram.Turn, bool) {
		t, n := t.RedactSpans([]string{"hunter2"}, "[x]")
		t.Redacted = &engram.Redaction{At: day1, Spans: n, Rules: map[string]int64{"password": int64(n)}}
		return t, n > 0
	}); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestCheckpoint: after a clean Close, Open takes the archive's state from
// the checkpoint, and it is the state reading every file gives: counts,
// streams (the tail cache's too), time scans, the ids known and forgotten.
// The checkpoint is gone once the archive is open.
func TestCheckpoint(t *testing.T) {
	dir := t.TempDir()
	ids := fillArchive(t, dir)
	ck := filepath.Join(dir, archive.CheckpointName)
	if _, err := os.Stat(ck); err != nil {
		t.Fatalf("no checkpoint after Close: %v", err)
	}
	b := MustOpen(t, dir, archive.Options{TailCache: 4}, false)
	if !b.FromCheckpoint() {
		t.Fatal("the checkpoint was not taken")
	}
	if _, err := os.Stat(ck); !os.IsNotExist(err) {
		t.Fatalf("the checkpoint is still there once open: %v", err)
	}
	got := stateOf(t, b, ids)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(ck); err != nil {
		t.Fatal(err)
	}
	c := MustOpen(t, dir, archive.Options{TailCache: 4}, false)
	if c.FromCheckpoint() {
		t.Fatal("taken without a checkpoint")
	}
	want := stateOf(t, c, ids)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("from the checkpoint:\n%+v\nfrom the files:\n%+v", got, want)
	}
	if want.Stats.Turns != 14 || want.Stats.Forgotten != 1 || want.Stats.Redacted != 1 || want.Stats.Secrets["password"] != 1 || len(want.Day2) != 5 || !want.Known[ids[1]][1] {
		t.Fatalf("the archive is not what was written: %+v", want)
	}

	// Appends after a start from the checkpoint: an id known, an id
	// forgotten, a new one.
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	d := MustOpen(t, dir, archive.Options{TailCache: 4}, true)
	if !d.FromCheckpoint() {
		t.Fatal("the checkpoint was not taken the second time")
	}
	dup, gone := turn("s0", "again"), turn("s0", "forgotten again")
	dup.ID, gone.ID = ids[0], ids[1]
	res := mustAppend(t, d, dup, gone, turn("s9", "new"))
	if !res[0].Duplicate || res[0].Seq != 1 || !res[1].Duplicate || !res[1].Forgotten || res[2].Duplicate || res[2].Seq != 16 {
		t.Fatalf("appends after a start from the checkpoint: %+v", res)
	}
}

// TestCheckpointIDsBehindOpen: a start from the checkpoint does not wait
// for the id map (most of the checkpoint): Open returns, and reads answer,
// while it is still being made; writes wait for it, so a re-sent id is
// still a duplicate.
func TestCheckpointIDsBehindOpen(t *testing.T) {
	dir := t.TempDir()
	ids := fillArchive(t, dir)
	release := make(chan struct{})
	archive.SetLoadIDsHook(func() { <-release })
	t.Cleanup(func() { archive.SetLoadIDsHook(nil) })
	a := MustOpen(t, dir, archive.Options{TailCache: 4}, false)
	if !a.FromCheckpoint() {
		t.Fatal("the checkpoint was not taken")
	}
	// The id map is held back: what Open took at once answers.
	if a.LastSeq() != 15 || a.Stats().Turns != 14 || !a.Forgotten(ids[1]) || len(streamAll(t, a, 0)) != 15 {
		t.Fatalf("while the ids load: last seq %d, stats %+v, %d lines", a.LastSeq(), a.Stats(), len(streamAll(t, a, 0)))
	}
	if gone := a.Tombstones(); len(gone) != 1 || gone[ids[1]] != 2 {
		t.Fatalf("tombstones while the ids load: %v, want %s at seq 2", gone, ids[1])
	}
	started := make(chan struct{})
	done := make(chan []engram.Appended, 1)
	go func() {
		dup, gone := turn("s0", "again"), turn("s0", "forgotten again")
		dup.ID, gone.ID = ids[0], ids[1]
		close(started)
		res, err := a.Append(context.Background(), []engram.Turn{dup, gone, turn("s9", "new")})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	<-started
	close(release)
	res := <-done
	if len(res) != 3 || !res[0].Duplicate || res[0].Seq != 1 || !res[1].Duplicate || !res[1].Forgotten || res[2].Duplicate || res[2].Seq != 16 {
		t.Fatalf("appends sent while the ids loaded: %+v", res)
	}
	if !a.Known(ids[0]) || a.Known("01ARZ3NDEKTSV4RRFFQ69G5FAV") || len(a.Tombstones()) != 1 {
		t.Fatalf("known %v, tombstones %v", a.Known(ids[0]), a.Tombstones())
	}
}

// TestCheckpointIDsDamaged: a checkpoint whose ids section does not check
// out (the rest does) is taken, and its id map made of the day files.
func TestCheckpointIDsDamaged(t *testing.T) {
	dir := t.TempDir()
	ids := fillArchive(t, dir)
	ck := filepath.Join(dir, archive.CheckpointName)
	st, err := os.Stat(ck)
	if err != nil {
		t.Fatal(err)
	}
	flip(t, ck, int(st.Size())-24-1) // the last seq's last byte, before the trailer
	a := MustOpen(t, dir, archive.Options{TailCache: 4}, false)
	if !a.FromCheckpoint() {
		t.Fatal("the checkpoint was not taken")
	}
	got := stateOf(t, a, ids)
	dup := turn("s0", "again")
	dup.ID = ids[len(ids)-1] // the id whose seq the flipped byte is part of
	if res := mustAppend(t, a, dup); !res[0].Duplicate || res[0].Seq != int64(len(ids)) {
		t.Fatalf("a re-sent id after the ids were read from the files: %+v", res)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	os.Remove(ck)
	want := stateOf(t, MustOpen(t, dir, archive.Options{TailCache: 4}, false), ids)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got:\n%+v\nreading every file:\n%+v", got, want)
	}
}

// TestCheckpointNotTaken: a checkpoint that does not describe the files as
// they are, or does not read, is left aside and every file read.
func TestCheckpointNotTaken(t *testing.T) {
	for name, change := range map[string]func(t *testing.T, dir string){
		"a file touched": func(t *testing.T, dir string) {
			later := time.Now().Add(time.Hour)
			if err := os.Chtimes(dayFile(dir, "2026-05-02"), later, later); err != nil {
				t.Fatal(err)
			}
		},
		"a file removed": func(t *testing.T, dir string) {
			if err := os.Remove(dayFile(dir, "2026-05-03")); err != nil {
				t.Fatal(err)
			}
		},
		"a line cut off": func(t *testing.T, dir string) {
			lines := readLines(t, dayFile(dir, "2026-05-03"))
			if err := os.WriteFile(dayFile(dir, "2026-05-03"), concat(lines[:4]), 0o600); err != nil {
				t.Fatal(err)
			}
		},
		"a flipped byte": func(t *testing.T, dir string) { flip(t, filepath.Join(dir, archive.CheckpointName), 100) },
		"a cut checkpoint": func(t *testing.T, dir string) {
			if err := os.Truncate(filepath.Join(dir, archive.CheckpointName), 50); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			ids := fillArchive(t, dir)
			change(t, dir)
			a := MustOpen(t, dir, archive.Options{TailCache: 4}, true)
			if a.FromCheckpoint() {
				t.Fatal("the checkpoint was taken")
			}
			got := stateOf(t, a, ids)
			a.Close()
			os.Remove(filepath.Join(dir, archive.CheckpointName))
			want := stateOf(t, MustOpen(t, dir, archive.Options{TailCache: 4}, false), ids)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got:\n%+v\nreading every file:\n%+v", got, want)
			}
		})
	}
}

func concat(lines [][]byte) []byte {
	var b []byte
	for _, l := range lines {
		b = append(b, l...)
	}
	return b
}

// flip inverts the byte at off of the file at path.
func flip(t *testing.T, path string, off int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[off] ^= 0xff
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
