// Package filetest holds the file checks that the tests of several
// packages share.
package filetest

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// MustHoldNowhere fails tb for every file under dir that holds one of
// words, in any case: what the tests of a forget or a redaction check, the
// text gone from every file of a home (an index keeps words lower-cased).
func MustHoldNowhere(tb testing.TB, dir string, words ...string) {
	tb.Helper()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		b = bytes.ToLower(b)
		for _, w := range words {
			if bytes.Contains(b, bytes.ToLower([]byte(w))) {
				tb.Errorf("%s still holds %q", path, w)
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
}
