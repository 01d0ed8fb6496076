package claudecode_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/engram-dev/engram/claudecode"
)

func scanAll(t *testing.T, path string, off int64) ([]string, int64) {
	t.Helper()
	var lines []string
	var lastEnd int64 = -1
	end, err := claudecode.Scan(context.Background(), path, off, func(line []byte, e int64) error {
		lines = append(lines, string(line))
		lastEnd = e
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if lastEnd >= 0 && lastEnd != end {
		t.Errorf("Scan returned %d, last line ended at %d", end, lastEnd)
	}
	return lines, end
}

// TestScanPartialLine: a line being written is left until its newline.
func TestScanPartialLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	write := func(s string, flag int) {
		f, err := os.OpenFile(path, flag|os.O_WRONLY|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(s)
		f.Close()
	}
	write("one\ntw", os.O_TRUNC)
	lines, end := scanAll(t, path, 0)
	if strings.Join(lines, "|") != "one\n" || end != 4 {
		t.Fatalf("lines %q end %d", lines, end)
	}
	write("o\nthr", os.O_APPEND)
	lines, end = scanAll(t, path, end)
	if strings.Join(lines, "|") != "two\n" || end != 8 {
		t.Fatalf("lines %q end %d", lines, end)
	}
	lines, end2 := scanAll(t, path, end)
	if len(lines) != 0 || end2 != end {
		t.Fatalf("nothing new: lines %q end %d", lines, end2)
	}
	// A file shorter than the offset was replaced: start again.
	write("new\n", os.O_TRUNC)
	lines, end = scanAll(t, path, end)
	if strings.Join(lines, "|") != "new\n" || end != 4 {
		t.Fatalf("after replace: lines %q end %d", lines, end)
	}
}

func TestScanLongLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	long := strings.Repeat("x", claudecode.MaxLineBytes+10)
	if err := os.WriteFile(path, []byte("a\n"+long+"\nb\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	lines, end := scanAll(t, path, 0)
	if len(lines) != 3 || lines[0] != "a\n" || lines[1] != "" || lines[2] != "b\n" || end != int64(len(long)+5) {
		t.Fatalf("%d lines, end %d", len(lines), end)
	}
}

func TestScanStopsOnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(path, []byte("a\nb\nc\n"), 0o600)
	n := 0
	end, err := claudecode.Scan(context.Background(), path, 0, func(line []byte, _ int64) error {
		if n++; n == 2 {
			return os.ErrClosed
		}
		return nil
	})
	if err != os.ErrClosed || end != 2 {
		t.Fatalf("end %d err %v, want 2 and the callback's error", end, err)
	}
}

func TestOffsets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hooks", "offsets.json")
	a, err := claudecode.OpenOffsets(path)
	if err != nil || a.Get("/t1") != 0 {
		t.Fatalf("empty: %v %d", err, a.Get("/t1"))
	}
	b, _ := claudecode.OpenOffsets(path)
	a.Set("/t1", 10)
	if err := a.Save(); err != nil {
		t.Fatal(err)
	}
	b.Set("/t2", 20) // another process, opened before a saved
	if err := b.Save(); err != nil {
		t.Fatal(err)
	}
	c, err := claudecode.OpenOffsets(path)
	if err != nil || c.Get("/t1") != 10 || c.Get("/t2") != 20 {
		t.Fatalf("merged: %v t1 %d t2 %d", err, c.Get("/t1"), c.Get("/t2"))
	}
	if m, _ := filepath.Glob(path + ".tmp*"); len(m) != 0 {
		t.Errorf("temporary files left: %v", m)
	}
	os.WriteFile(path, []byte("{broken"), 0o600)
	d, err := claudecode.OpenOffsets(path)
	if err == nil || d.Get("/t1") != 0 {
		t.Fatalf("broken file: err %v t1 %d", err, d.Get("/t1"))
	}
	d.Set("/t1", 5)
	if err := d.Save(); err != nil {
		t.Fatal(err)
	}
	if e, err := claudecode.OpenOffsets(path); err != nil || e.Get("/t1") != 5 {
		t.Fatalf("after rewrite: %v", err)
	}
}

func FuzzMap(f *testing.F) {
	b, _ := os.ReadFile(filepath.Join(fixtures, "session.jsonl"))
	for _, l := range strings.Split(string(b), "\n") {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		in, ok, err := claudecode.Mapper{}.Map(line)
		if ok && (err != nil || in.ID == "" || in.Session == "" || strings.TrimSpace(in.Content) == "") {
			t.Fatalf("ok with %+v, %v", in, err)
		}
	})
}

// TestScanRefusesWhatIsNoRegularFile: a transcript path naming a FIFO, a
// device or a folder is refused at once, before any read: a FIFO with no
// writer held the hook in open(2), and /dev/zero fed it for ever, with the
// home's lock held, past the hook's deadline and SIGTERM.
func TestScanRefusesWhatIsNoRegularFile(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// Should Scan open the FIFO and wait for a writer, this one comes and
	// goes: the read then ends at EOF, without the refusal, and the test
	// fails instead of hanging.
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.Close()
		}
	}()
	t.Cleanup(func() {
		// A reader that does not wait releases the writer, if no reader came.
		if r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			<-wrote
			r.Close()
		}
	})
	for _, path := range []string{fifo, "/dev/zero", t.TempDir()} {
		called := false
		_, err := claudecode.Scan(t.Context(), path, 0, func([]byte, int64) error {
			called = true
			return nil
		})
		if !errors.Is(err, claudecode.ErrNotRegular) || !strings.Contains(err.Error(), path) || called {
			t.Fatalf("Scan(%s): %v (a line passed: %v), want ErrNotRegular naming the path", path, err, called)
		}
	}
}

// TestScanStopsWithTheContext: a transcript that is still being read when
// the hook's deadline passes is left there.
func TestScanStopsWithTheContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(path, []byte(strings.Repeat("x", 1<<20)+"\n"+strings.Repeat("y\n", 1000)), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	end, err := claudecode.Scan(ctx, path, 0, func([]byte, int64) error { return nil })
	if !errors.Is(err, context.Canceled) || end != 0 {
		t.Fatalf("Scan after the context ended: end %d, %v", end, err)
	}
}
