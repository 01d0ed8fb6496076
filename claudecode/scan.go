package claudecode

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// MaxLineBytes is the longest transcript line read; a longer line (a huge
// pasted file, say) is skipped as broken.
const MaxLineBytes = 16 << 20

// Scan calls fn with every complete line of the transcript at path that
// starts at or after offset, and end, the offset just past its newline. A
// last line without a newline is still being written and is not passed; a
// line over MaxLineBytes is passed as nil. fn must not keep line.
// When the file is shorter than offset it has been replaced, and Scan
// starts again at 0. Scan stops at the first error fn returns and returns
// it. It returns the offset just past the last line passed to fn (offset
// itself, or 0 after a restart, when none was).
func Scan(path string, offset int64, fn func(line []byte, end int64) error) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return offset, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return offset, err
	}
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
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".jsonl") {
			paths = append(paths, p)
		}
		return nil
	})
	sort.Strings(paths)
	return paths, err
}
