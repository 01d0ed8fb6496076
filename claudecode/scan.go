package claudecode

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ErrNotRegular is a transcript path that names no regular file.
var ErrNotRegular = errors.New("not a regular file")

// MaxLineBytes is the longest transcript line read; a longer line (a huge
// pasted file, say) is skipped as broken.
const MaxLineBytes = 16 << 20

// openRegular opens path for reading if it is a regular file, and returns
// its FileInfo; else ErrNotRegular, naming the path and what it is. The
// open does not wait (openNoWait): a FIFO with no writer would hold it, and
// a device such as /dev/zero would feed the read for ever, neither bounded
// by a context, with the home's lock held.
func openRegular(path string) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNoWait, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%s is %s, %w: a transcript is read only from a regular file", path, fileKind(st.Mode()), ErrNotRegular)
	}
	return f, st, nil
}

// fileKind names the kind of file of m, which is no regular file.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a folder"
	}
	return "a special file"
}

// Scan calls fn with every complete line of the transcript at path that
// starts at or after offset, and end, the offset just past its newline. A
// last line without a newline is still being written and is not passed; a
// line over MaxLineBytes is passed as nil. fn must not keep line.
// When the file is shorter than offset it has been replaced, and Scan
// starts again at 0. Scan stops at the first error fn returns and returns
// it, and stops with ctx's error once ctx ends. It returns the offset just
// past the last line passed to fn (offset itself, or 0 after a restart,
// when none was). A path that names no regular file (a FIFO, a device, a
// folder) is refused before any read: ErrNotRegular.
func Scan(ctx context.Context, path string, offset int64, fn func(line []byte, end int64) error) (int64, error) {
	f, st, err := openRegular(path)
	if err != nil {
		return offset, err
	}
	defer f.Close()
	if offset < 0 || st.Size() < offset {
		offset = 0
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return offset, err
	}
	r := bufio.NewReaderSize(f, 256<<10)
	pos := offset
	var long bool
	var buf []byte
	for {
		if err := ctx.Err(); err != nil {
			return offset, err
		}
		chunk, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if !long {
				buf = append(buf, chunk...)
				if len(buf) > MaxLineBytes {
					long, buf = true, nil
				}
			}
			pos += int64(len(chunk))
			continue
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				// A partial last line: leave it, and what was
				// buffered of it, for next time.
				return offset, nil
			}
			return offset, fmt.Errorf("read %s: %w", path, err)
		}
		pos += int64(len(chunk))
		line := chunk
		if long || len(buf) > 0 {
			line = append(buf, chunk...)
		}
		if long || len(line) > MaxLineBytes {
			line = nil // over MaxLineBytes: passed as nil, to be counted as broken
		}
		if err := fn(line, pos); err != nil {
			return offset, err
		}
		offset = pos
		long, buf = false, buf[:0]
	}
}

// DefaultDir is Claude Code's transcript folder under the user's home.
func DefaultDir() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".claude", "projects"), nil
}

// Transcripts returns the .jsonl files under dir, sorted.
func Transcripts(dir string) ([]string, error) {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		// A FIFO or a device among them is no transcript (Scan refuses it).
		if !d.IsDir() && d.Type()&(fs.ModeNamedPipe|fs.ModeSocket|fs.ModeDevice) == 0 && strings.HasSuffix(d.Name(), ".jsonl") {
			paths = append(paths, p)
		}
		return nil
	})
	sort.Strings(paths)
	return paths, err
}
