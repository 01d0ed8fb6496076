package archive_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/internal/archivetest"
)

// TestConformance runs the suite every engram.Archive passes (the
// PostgreSQL archive's tests run it too). After each case the directory
// must verify clean: seqs from 1 without gaps, no id on two lines, every
// line whole, which the suite cannot see through engram.Archive.
func TestConformance(t *testing.T) {
	archivetest.Run(t, func(t *testing.T) archivetest.Opener {
		dir := t.TempDir()
		t.Cleanup(func() { checkClean(t, dir) }) // after the suite's closes
		return func() (engram.Archive, error) {
			return archive.Open(dir, archive.Options{Logger: quietLogger()})
		}
	})
}

// fullFile gives the file archive the form of archivetest.Full: the
// methods that answer from memory take a ctx and return no error.
type fullFile struct{ *archive.Archive }

func (f fullFile) Known(_ context.Context, id string) (bool, error) { return f.Archive.Known(id), nil }
func (f fullFile) Forgotten(_ context.Context, id string) (bool, error) {
	return f.Archive.Forgotten(id), nil
}
func (f fullFile) Tombstones(context.Context) (map[string]int64, error) {
	return f.Archive.Tombstones(), nil
}
func (f fullFile) Counts(context.Context) (int64, int64, int64, error) {
	s := f.Archive.Stats()
	return s.Turns, s.Forgotten, s.Redacted, nil
}

// TestConformanceExtended runs the cases of forget, redaction, Verify and
// Notify the PostgreSQL archive passes too.
func TestConformanceExtended(t *testing.T) {
	archivetest.RunExtended(t, func(t *testing.T) archivetest.Extended {
		dir := t.TempDir()
		return archivetest.Extended{
			Open: func() (archivetest.Full, error) {
				a, err := archive.Open(dir, archive.Options{Logger: quietLogger()})
				if err != nil {
					return nil, err
				}
				return fullFile{a}, nil
			},
			Damage: func(t *testing.T, seq int64) { damageLine(t, dir, seq) },
		}
	})
}

// damageLine changes a byte of the content of the line of seq in its day
// file, leaving its crc as it was.
func damageLine(t *testing.T, dir string, seq int64) {
	t.Helper()
	mark := []byte(fmt.Sprintf(`"seq":%d,`, seq))
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		i := bytes.Index(b, mark)
		if i < 0 {
			return nil
		}
		j := bytes.Index(b[i:], []byte(`"content":"`))
		b[i+j+len(`"content":"`)] ^= 0x01
		return os.WriteFile(path, b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}
