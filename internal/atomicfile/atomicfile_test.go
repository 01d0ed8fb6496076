package atomicfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/engram-dev/engram/internal/atomicfile"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	for _, data := range []string{"one", "two, longer"} {
		if err := atomicfile.WriteFile(path, []byte(data), 0o640); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil || string(b) != data {
			t.Fatalf("read back %q, %v; want %q", b, err, data)
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o640 {
			t.Fatalf("mode %v, %v; want 0640", fi.Mode(), err)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("the folder holds %d entries, want only f.json: %v", len(ents), ents)
	}
}

func TestWriteFileFailureKeepsTheOld(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := atomicfile.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A folder where the file should go: the rename fails.
	target := filepath.Join(dir, "sub")
	if err := os.MkdirAll(filepath.Join(target, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.WriteFile(target, []byte("new"), 0o600); err == nil {
		t.Fatal("renaming over a non-empty folder succeeded")
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("the other file changed: %q", b)
	}
	if stale, _ := filepath.Glob(filepath.Join(dir, ".sub.tmp-*")); len(stale) != 0 {
		t.Errorf("temporary files left: %v", stale)
	}
}

func TestRemoveTemps(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{".a.plist.tmp-123", ".a.plist.tmp-9", "a.plist", ".b.tmp-1"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	atomicfile.RemoveTemps(dir, "a.plist")
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if len(names) != 2 || names[0] != ".b.tmp-1" || names[1] != "a.plist" {
		t.Errorf("left %v, want .b.tmp-1 and a.plist", names)
	}
}
