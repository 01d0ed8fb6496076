// Package filetest holds the file checks that the tests of several
// packages share.
package filetest

import (
	"bytes"
	"crypto/sha256"
	"fmt"
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

// Snapshot records every entry under dir, dir itself and the names beside
// it (a command that moves dir aside leaves a sibling): each entry's mode,
// size, modification time and, for a file, its bytes' length and contents
// summed. Two snapshots are equal when nothing was written there.
func Snapshot(tb testing.TB, dir string) map[string]string {
	tb.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		v := fmt.Sprintf("%s %d %d", fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			v += fmt.Sprintf(" %x", sha256.Sum256(b))
		}
		out[rel] = v
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	siblings, err := os.ReadDir(filepath.Dir(dir))
	if err != nil {
		tb.Fatal(err)
	}
	for _, s := range siblings {
		out["../"+s.Name()] = ""
	}
	return out
}

// MustBeUnchanged fails tb for every difference between the snapshot
// before (Snapshot) and dir now, naming what: the entries added, removed
// or changed.
func MustBeUnchanged(tb testing.TB, what, dir string, before map[string]string) {
	tb.Helper()
	now := Snapshot(tb, dir)
	for k, v := range before {
		if w, ok := now[k]; !ok {
			tb.Errorf("%s: %s was removed from %s", what, k, dir)
		} else if w != v {
			tb.Errorf("%s: %s in %s changed: %s, was %s", what, k, dir, w, v)
		}
	}
	for k := range now {
		if _, ok := before[k]; !ok {
			tb.Errorf("%s: %s was added to %s", what, k, dir)
		}
	}
}
