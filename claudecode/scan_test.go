package claudecode_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-dev/engram/claudecode"
)

func scanAll(t *testing.T, path string, off int64) ([]string, int64) {
	t.Helper()
	var lines []string
	var lastEnd int64 = -1
	end, err := claudecode.Scan(path, off, func(line []byte, e int64) error {
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
	end, err := claudecode.Scan(path, 0, func(line []byte, _ int64) error {
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
