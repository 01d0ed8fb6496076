package testutil

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// FileFixture is a file made once for a test binary and copied for each
// test that wants it: a fixture built once per package, not per test
// (a new palace, every migration applied, is one). The package's TestMain
// calls Remove after m.Run.
type FileFixture struct {
	// Make writes the file at path.
	Make func(path string) error

	once sync.Once
	dir  string
	err  error
}

// CopyTo writes a copy of the file at path, with mode 0600, making the
// file first if no test has.
func (f *FileFixture) CopyTo(tb testing.TB, path string) {
	tb.Helper()
	f.once.Do(func() {
		if f.dir, f.err = os.MkdirTemp("", "fixture-"); f.err == nil {
			f.err = f.Make(filepath.Join(f.dir, "file"))
		}
	})
	if f.err != nil {
		tb.Fatalf("making the fixture: %v", f.err)
	}
	b, err := os.ReadFile(filepath.Join(f.dir, "file"))
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		tb.Fatal(err)
	}
}

// Remove deletes the file made, if one was.
func (f *FileFixture) Remove() {
	if f.dir != "" {
		os.RemoveAll(f.dir)
	}
}
