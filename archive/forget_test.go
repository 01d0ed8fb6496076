package archive_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/internal/filetest"
)

// TestForgetRewritesTheLine checks the files of a forget (the suite's
// ForgetThenResend checks what readers see, the suite's
// RewriteKeepsSeqAndID a rewrite that would move a turn): the day file is
// rewritten without the turn's words, appends go on into it, and the
// tombstone and a resurrected copy read back from the files.
func TestForgetRewritesTheLine(t *testing.T) {
	dir := t.TempDir()
	a := MustOpen(t, dir, archive.Options{}, true)
	ctx := context.Background()
	in := []engram.Turn{turn("s1", "keep one"), turn("s1", "secret zebrafish"), turn("s2", "keep two")}
	in[1].ID = "gone-1"
	in[1].Meta = []byte(`{"who":"zebrafish"}`)
	res := mustAppend(t, a, in...)

	at := time.Date(2026, 5, 2, 10, 0, 0, 0, time.UTC)
	out, err := a.Forget(ctx, []string{"gone-1"}, engram.Forgotten{At: at, Reason: "asked"})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Changed) != 1 || out.Files != 1 {
		t.Fatalf("forget: %+v", out)
	}
	filetest.MustHoldNowhere(t, dir, "zebrafish")
	// Appends go on into the rewritten (current) file.
	mustAppend(t, a, turn("s1", "after"))
	resend := turn("s1", "secret again")
	resend.ID, resend.Resurrect = "gone-1", true
	back := mustAppend(t, a, resend)
	rep, err := a.Verify(ctx)
	if err != nil || !rep.OK() || rep.Forgotten != 1 || rep.Turns != 4 {
		t.Fatalf("verify: %+v %v", rep, err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	b := MustOpen(t, dir, archive.Options{TailCache: -1}, false)
	got := streamAll(t, b, 0)
	if len(got) != 5 || !got[1].IsTombstone() || got[1].Seq != res[1].Seq || got[1].Forgotten.Reason != "asked" ||
		!got[1].Forgotten.At.Equal(at) || got[4].Seq != back[0].Seq || got[4].Content != "secret again" {
		t.Fatalf("from the files: %+v", got)
	}
}

// TestForgetUnderLoad forgets turns in the current file while writers
// append: nothing else is lost, and the archive verifies clean.
func TestForgetUnderLoad(t *testing.T) {
	dir := t.TempDir()
	a := MustOpen(t, dir, archive.Options{TailCache: 64}, true)
	ctx := context.Background()
	const writers, perWriter = 4, 150
	var mu sync.Mutex
	acked := map[string]string{}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				tr := turn(fmt.Sprintf("w%d", w), fmt.Sprintf("turn w%d-%d", w, i))
				tr.ID = fmt.Sprintf("w%d-%d", w, i)
				if _, err := a.Append(ctx, []engram.Turn{tr}); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				acked[tr.ID] = tr.Content
				mu.Unlock()
			}
		})
	}
	forgot := map[string]bool{}
	for round := 0; round < 40; round++ {
		mu.Lock()
		var pick []string
		for id := range acked {
			if !forgot[id] && len(pick) < 3 {
				pick = append(pick, id)
			}
		}
		mu.Unlock()
		res, err := a.Forget(ctx, pick, engram.Forgotten{At: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range res.Changed {
			forgot[c.New.ID] = true
		}
	}
	wg.Wait()
	got := map[string]engram.Turn{}
	for _, tr := range streamAll(t, a, 0) {
		got[tr.ID] = tr
	}
	for id, content := range acked {
		tr, ok := got[id]
		switch {
		case !ok:
			t.Errorf("turn %s lost", id)
		case forgot[id] && !tr.IsTombstone():
			t.Errorf("turn %s not forgotten", id)
		case !forgot[id] && tr.Content != content:
			t.Errorf("turn %s reads %q, want %q", id, tr.Content, content)
		}
	}
	rep, err := a.Verify(ctx)
	if err != nil || !rep.OK() || rep.Forgotten != int64(len(forgot)) || rep.Turns != int64(len(acked)-len(forgot)) {
		t.Fatalf("verify: %+v %v (forgot %d)", rep, err, len(forgot))
	}
}

// TestRewriteCrashHelper is the process TestRewriteSIGKILL kills: it opens
// the archive named by the environment, forgets one turn, and stops at the
// crash point named there, saying so on stdout.
func TestRewriteCrashHelper(t *testing.T) {
	dir, point := os.Getenv("ENGRAM_ARCHIVE_CRASH_DIR"), os.Getenv("ENGRAM_ARCHIVE_CRASH_POINT")
	if dir == "" {
		t.Skip("the helper process of TestRewriteSIGKILL")
	}
	archive.SetCrashHook(func(p string) {
		if p == point {
			fmt.Println("at " + p)
			os.Stdout.Sync()
			select {} // wait for the SIGKILL
		}
	})
	a, err := archive.Open(dir, archive.Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Forget(context.Background(), []string{os.Getenv("ENGRAM_ARCHIVE_CRASH_ID")}, engram.Forgotten{At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	fmt.Println("at done")
	select {}
}

// TestRewriteSIGKILL kills a process in the middle of a rewrite, at each of
// its steps, and checks that the day file is then the old one or the new
// one, whole, and that the archive opens and verifies clean.
func TestRewriteSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test skipped with -short")
	}
	for _, point := range []string{"rewrite-partial", "rewrite-synced", "rewrite-renamed", "done"} {
		t.Run(point, func(t *testing.T) {
			dir := t.TempDir()
			a := MustOpen(t, dir, archive.Options{}, false)
			var turns []engram.Turn
			for i := range 200 {
				tr := turn("s1", fmt.Sprintf("line %d of the day", i))
				if i == 100 {
					tr.Content = "the forgotten quokka"
					tr.ID = "victim"
				}
				turns = append(turns, tr)
			}
			mustAppend(t, a, turns...)
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			files, _ := filepath.Glob(filepath.Join(dir, "*", "*", "*.jsonl"))
			if len(files) != 1 {
				t.Fatalf("day files: %v", files)
			}
			before, _ := os.ReadFile(files[0])

			cmd := exec.Command(os.Args[0], "-test.run=^TestRewriteCrashHelper$", "-test.v")
			cmd.Env = append(os.Environ(), "ENGRAM_ARCHIVE_CRASH_DIR="+dir, "ENGRAM_ARCHIVE_CRASH_POINT="+point,
				"ENGRAM_ARCHIVE_CRASH_ID=victim")
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(stdout)
			reached := false
			for sc.Scan() {
				if sc.Text() == "at "+point {
					reached = true
					break
				}
			}
			cmd.Process.Signal(syscall.SIGKILL)
			cmd.Wait()
			if !reached {
				t.Fatalf("the helper never reached %s", point)
			}

			after, err := os.ReadFile(files[0])
			if err != nil {
				t.Fatal(err)
			}
			old := bytes.Equal(after, before)
			if !old && bytes.Contains(after, []byte("quokka")) {
				t.Fatal("the day file is neither the old one nor the new one")
			}
			if point == "rewrite-partial" && !old {
				t.Fatal("a rewrite killed before its rename changed the day file")
			}
			b := MustOpen(t, dir, archive.Options{}, true)
			if s := b.Stats(); s.CorruptLines != 0 || s.TornTails != 0 {
				t.Fatalf("stats after the crash: %+v", s)
			}
			got := streamAll(t, b, 0)
			if len(got) != 200 || got[100].IsTombstone() == old {
				t.Fatalf("after the crash: %d turns, tombstone %v, old file %v", len(got), got[100].IsTombstone(), old)
			}
			leftovers, _ := filepath.Glob(filepath.Join(dir, "*", "*", "*.tmp"))
			if len(leftovers) != 0 {
				t.Fatalf("temporary files left: %v", leftovers)
			}
			if !old {
				return
			}
			// The forget can be done again after the crash.
			if _, err := b.Forget(context.Background(), []string{"victim"}, engram.Forgotten{At: time.Now()}); err != nil {
				t.Fatal(err)
			}
			filetest.MustHoldNowhere(t, dir, "quokka")
			if strings.Contains(string(before), "quokka") == false {
				t.Fatal("the test's turn was never written")
			}
		})
	}
}

// An id archived on two lines (a hand edit, a copied file) is forgotten on
// both: the palace holds only the first, grep must find neither.
func TestForgetRewritesEveryCopy(t *testing.T) {
	dir := t.TempDir()
	a := MustOpen(t, dir, archive.Options{}, false)
	in := []engram.Turn{turn("s1", "keep one"), turn("s1", "secret zebrafish"), turn("s2", "keep two")}
	in[1].ID = "gone-1"
	mustAppend(t, a, in...)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("day files: %v", files)
	}
	b := MustOpen(t, dir, archive.Options{TailCache: -1}, false)
	got := streamAll(t, b, 0)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	copied := got[1]
	copied.Seq = 4
	copied.Content = "secret zebrafish, copied by hand"
	line, err := archive.EncodeLine(copied)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(files[0], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(line); err != nil {
		t.Fatal(err)
	}
	f.Close()

	c := MustOpen(t, dir, archive.Options{}, false)
	ctx := context.Background()
	out, err := c.Forget(ctx, []string{"gone-1"}, engram.Forgotten{At: time.Now(), Reason: "asked"})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Changed) != 1 || out.Changed[0].New.Seq != 2 || len(out.Copies) != 1 || out.Copies[0].New.Seq != 4 {
		t.Fatalf("forget: changed %+v, copies %+v", out.Changed, out.Copies)
	}
	filetest.MustHoldNowhere(t, dir, "zebrafish")
	for _, tn := range streamAll(t, c, 0) {
		if tn.ID == "gone-1" && !tn.IsTombstone() {
			t.Fatalf("line %d still holds the turn", tn.Seq)
		}
	}
	// Forgotten again: nothing left to change, the id reads as already gone.
	again, err := c.Forget(ctx, []string{"gone-1"}, engram.Forgotten{At: time.Now()})
	if err != nil || len(again.Changed)+len(again.Copies) != 0 || len(again.Unchanged) != 1 {
		t.Fatalf("forget again: %+v %v", again, err)
	}
}
