package archive_test

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/internal/archivetest"
)

// quietLogger drops the warnings tests provoke on purpose.
func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// MustOpen opens the archive in dir and closes it when the test ends. With
// check, it then reopens dir and fails the test unless the archive verifies
// clean: the invariant every test that damages nothing must keep.
func MustOpen(tb testing.TB, dir string, opts archive.Options, check bool) *archive.Archive {
	tb.Helper()
	if opts.Logger == nil {
		opts.Logger = quietLogger()
	}
	a, err := archive.Open(dir, opts)
	if err != nil {
		tb.Fatalf("open %s: %v", dir, err)
	}
	tb.Cleanup(func() {
		if err := a.Close(); err != nil {
			tb.Errorf("close: %v", err)
		}
		if check {
			checkClean(tb, dir)
		}
	})
	return a
}

// checkClean reopens dir and checks that every line reads, seqs increase
// from 1 without gaps and no id repeats.
func checkClean(tb testing.TB, dir string) {
	tb.Helper()
	a, err := archive.Open(dir, archive.Options{Logger: quietLogger()})
	if err != nil {
		tb.Errorf("reopen for the final check: %v", err)
		return
	}
	defer a.Close()
	if s := a.Stats(); s.CorruptLines != 0 || s.TornTails != 0 {
		tb.Errorf("final check: %d corrupt lines, %d torn tails", s.CorruptLines, s.TornTails)
	}
	rep, err := a.Verify(context.Background())
	if err != nil {
		tb.Errorf("final verify: %v", err)
		return
	}
	for _, p := range rep.Problems {
		tb.Errorf("final verify: %s", p)
	}
	var want int64 = 1
	err = a.Stream(context.Background(), 0, func(t engram.Turn) error {
		if t.Seq != want {
			return fmt.Errorf("seq %d, want %d", t.Seq, want)
		}
		want++
		return nil
	})
	if err != nil {
		tb.Errorf("final stream: %v", err)
	}
	if got := a.LastSeq(); got != want-1 {
		tb.Errorf("final check: LastSeq %d, streamed up to %d", got, want-1)
	}
}

// The suite's helpers serve the file archive's own tests too.
var (
	turn       = archivetest.Turn
	mustAppend = archivetest.MustAppend
	streamAll  = archivetest.StreamAll
	wantCode   = archivetest.WantCode
)

// dayFile returns the path of a day's file under dir.
func dayFile(dir string, day string) string {
	return filepath.Join(dir, day[0:4], day[5:7], day+".jsonl")
}

// readLines returns the lines of a file, each with its '\n'.
func readLines(tb testing.TB, path string) [][]byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var lines [][]byte
	for len(b) > 0 {
		i := 0
		for i < len(b) && b[i] != '\n' {
			i++
		}
		if i < len(b) {
			i++
		}
		lines = append(lines, b[:i])
		b = b[i:]
	}
	return lines
}

// faultFS wraps the real file system to make writes and fsyncs fail, or
// block, on demand, and to record which files were opened.
type faultFS struct {
	archive.OSFS

	mu        sync.Mutex
	writeErr  error // returned by data-file writes while set
	partial   int   // bytes a failing write still writes first
	syncErr   error // returned by every Sync while set
	syncGate  chan struct{}
	syncEnter chan struct{}
	opened    []string
}

func (f *faultFS) OpenFile(name string, flag int, perm fs.FileMode) (archive.File, error) {
	file, err := f.OSFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.opened = append(f.opened, name)
	f.mu.Unlock()
	return &faultFile{File: file, fs: f}, nil
}

func (f *faultFS) setWriteErr(err error, partial int) {
	f.mu.Lock()
	f.writeErr, f.partial = err, partial
	f.mu.Unlock()
}

func (f *faultFS) setSyncErr(err error) {
	f.mu.Lock()
	f.syncErr = err
	f.mu.Unlock()
}

// blockSyncs makes every Sync signal enter and wait for gate to close.
func (f *faultFS) blockSyncs() (enter <-chan struct{}, release func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.syncGate, f.syncEnter = make(chan struct{}), make(chan struct{}, 100)
	gate := f.syncGate
	return f.syncEnter, func() { close(gate) }
}

func (f *faultFS) openedPaths() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.opened...)
}

func (f *faultFS) resetOpened() {
	f.mu.Lock()
	f.opened = nil
	f.mu.Unlock()
}

type faultFile struct {
	archive.File
	fs *faultFS
}

func (f *faultFile) Write(p []byte) (int, error) {
	f.fs.mu.Lock()
	werr, partial := f.fs.writeErr, f.fs.partial
	f.fs.mu.Unlock()
	if werr == nil {
		return f.File.Write(p)
	}
	n, err := f.File.Write(p[:min(partial, len(p))])
	if err != nil {
		return n, err
	}
	return n, &fs.PathError{Op: "write", Path: "archive", Err: werr}
}

func (f *faultFile) Sync() error {
	f.fs.mu.Lock()
	serr, gate, enter := f.fs.syncErr, f.fs.syncGate, f.fs.syncEnter
	f.fs.mu.Unlock()
	if gate != nil {
		enter <- struct{}{}
		<-gate
	}
	if serr != nil {
		return &fs.PathError{Op: "sync", Path: "archive", Err: serr}
	}
	return f.File.Sync()
}

var _ archive.FS = (*faultFS)(nil)

// dayOfNow is the day file's name for a turn received now.
func dayOfNow() string { return time.Now().UTC().Format(time.DateOnly) }
