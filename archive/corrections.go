package archive

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/atomicfile"
)

// CorrectionsFile is the name of the corrections journal in a home.
const CorrectionsFile = "corrections.jsonl"

// Journal is the home's corrections journal: one JSON line per correction
// of a memory or a graph fact, appended and fsynced before the correction
// is applied; only a forget or a redaction rewrites it, whole (Rewrite).
// It is the corrections' source of truth, as the day files are the turns':
// a rebuilt palace applies it again.
//
// A line cut short by a crash (never acknowledged) is skipped on reading
// and cut off before the next append.
type Journal struct {
	path string
	mu   sync.Mutex
	list []engram.Correction
	size int64 // bytes of complete lines
}

// OpenJournal reads the journal at path (none yet: empty).
func OpenJournal(path string) (*Journal, error) {
	j := &Journal{path: path}
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("corrections journal: %w", err)
	}
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			break // a torn last line
		}
		line := b[:i]
		b = b[i+1:]
		var c engram.Correction
		if err := json.Unmarshal(line, &c); err != nil {
			return nil, engram.Errorf(engram.EINVALID, "corrections journal %s: line %d is damaged (%v): restore the file from a backup, or mend or delete the line by hand",
				path, len(j.list)+1, err)
		}
		j.list = append(j.list, c)
		j.size += int64(i + 1)
	}
	return j, nil
}

// Path is the journal's file.
func (j *Journal) Path() string { return j.path }

// All returns every correction, in the order they were made.
func (j *Journal) All() []engram.Correction {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]engram.Correction(nil), j.list...)
}

// Append writes c as the journal's next line and fsyncs it (and the folder,
// when the file is new).
func (j *Journal) Append(c engram.Correction) error {
	line, err := json.Marshal(c)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	j.mu.Lock()
	defer j.mu.Unlock()
	_, statErr := os.Stat(j.path)
	f, err := os.OpenFile(j.path, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("corrections journal: %w", err)
	}
	defer f.Close()
	// Cut a torn tail, then write at the end of the complete lines.
	if err := f.Truncate(j.size); err != nil {
		return fmt.Errorf("corrections journal: %w", err)
	}
	if _, err := f.WriteAt(line, j.size); err != nil {
		f.Truncate(j.size)
		return fmt.Errorf("corrections journal: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("corrections journal: %w", err)
	}
	if errors.Is(statErr, fs.ErrNotExist) {
		if err := atomicfile.SyncDir(filepath.Dir(j.path)); err != nil {
			return fmt.Errorf("corrections journal: %w", err)
		}
	}
	j.size += int64(len(line))
	j.list = append(j.list, c)
	return nil
}

// Backup copies the journal's complete lines to dst (fsynced) and returns
// their size and SHA-256; ok is false when there is no correction yet.
func (j *Journal) Backup(dst string) (size int64, sum string, ok bool, err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.size == 0 {
		return 0, "", false, nil
	}
	src, err := os.Open(j.path)
	if err != nil {
		return 0, "", false, err
	}
	defer src.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, "", false, err
	}
	defer out.Close()
	h := sha256.New()
	w := bufio.NewWriter(io.MultiWriter(out, h))
	if _, err := io.CopyN(w, src, j.size); err != nil {
		return 0, "", false, err
	}
	if err := w.Flush(); err != nil {
		return 0, "", false, err
	}
	if err := out.Sync(); err != nil {
		return 0, "", false, err
	}
	return j.size, hex.EncodeToString(h.Sum(nil)), true, out.Close()
}

// Rewrite replaces the journal by the corrections edit returns, each
// correction in turn: keep false drops it. It is how a forget or a
// redaction reaches the corrections (a corrected memory's text holds the
// words of its turns): the journal is written whole to a temporary file,
// fsynced and renamed over the old one, so a crash leaves either journal,
// never a torn one. It returns how many corrections changed or went; with
// none, the file is left as it is.
func (j *Journal) Rewrite(edit func(engram.Correction) (c engram.Correction, keep bool)) (int, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	var (
		list    []engram.Correction
		buf     bytes.Buffer
		changed int
	)
	for _, old := range j.list {
		c, keep := edit(old)
		if !keep {
			changed++
			continue
		}
		line, err := json.Marshal(c)
		if err != nil {
			return 0, err
		}
		if oldLine, _ := json.Marshal(old); !bytes.Equal(line, oldLine) {
			changed++
		}
		buf.Write(line)
		buf.WriteByte('\n')
		list = append(list, c)
	}
	if changed == 0 {
		return 0, nil
	}
	if err := atomicfile.WriteFile(j.path, buf.Bytes(), 0o600); err != nil {
		return 0, fmt.Errorf("corrections journal: %w", err)
	}
	j.list, j.size = list, int64(buf.Len())
	return changed, nil
}
