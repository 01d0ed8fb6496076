package testutil

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFileFixture: the file is made once, however many tests copy it, and
// each copy is the file, private to the user; Remove deletes it.
func TestFileFixture(t *testing.T) {
	made := 0
	f := FileFixture{Make: func(path string) error {
		made++
		return os.WriteFile(path, []byte("made "+string(rune('0'+made))), 0o644)
	}}
	dir := t.TempDir()
	for _, name := range []string{"a", "b"} {
		path := filepath.Join(dir, name)
		f.CopyTo(t, path)
		b, err := os.ReadFile(path)
		if err != nil || string(b) != "made 1" {
			t.Fatalf("copy %s: %q, %v", name, b, err)
		}
		if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("copy %s: %v, %v; want mode 0600", name, st.Mode().Perm(), err)
		}
	}
	if made != 1 {
		t.Fatalf("made %d times", made)
	}
	f.Remove()
	if _, err := os.Stat(f.dir); !os.IsNotExist(err) {
		t.Fatalf("after Remove: %v", err)
	}
}
