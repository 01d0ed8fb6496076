package claudecode

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/engram-dev/engram/internal/atomicfile"
)

// Offsets remembers, per transcript path, the offset up to which its lines
// have been archived. It lives in one JSON file, replaced atomically.
type Offsets struct {
	path string

	mu      sync.Mutex
	m       map[string]int64
	changed map[string]bool
}

type offsetsFile struct {
	Version     int              `json:"version"`
	Transcripts map[string]int64 `json:"transcripts"`
}

// OpenOffsets reads the offsets file at path; a missing file is empty. A
// file that does not parse returns empty offsets and an error, so that a
// caller may log it and carry on from the start (turn ids make re-reading
// harmless).
func OpenOffsets(path string) (*Offsets, error) {
	o := &Offsets{path: path, changed: map[string]bool{}}
	m, err := readOffsets(path)
	if m == nil {
		m = map[string]int64{}
	}
	o.m = m
	return o, err
}

func readOffsets(path string) (map[string]int64, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var f offsetsFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("offsets file %s: %w", path, err)
	}
	return f.Transcripts, nil
}

// Get returns the offset of transcript, 0 when unknown.
func (o *Offsets) Get(transcript string) int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.m[transcript]
}

// Set records the offset of transcript; Save writes it.
func (o *Offsets) Set(transcript string, off int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m[transcript] != off {
		o.m[transcript] = off
		o.changed[transcript] = true
	}
}

// Save writes the offsets Set since the last Save into the file, merged
// with what the file holds now (another process may have saved other
// transcripts meanwhile): a temporary file, synced, renamed over it, then
// the folder synced.
func (o *Offsets) Save() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.changed) == 0 {
		return nil
	}
	cur, _ := readOffsets(o.path) // unreadable: ours replace it
	if cur == nil {
		cur = map[string]int64{}
	}
	for k := range o.changed {
		cur[k] = o.m[k]
	}
	b, err := json.MarshalIndent(offsetsFile{Version: 1, Transcripts: cur}, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(o.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(o.path, append(b, '\n'), 0o600); err != nil {
		return err
	}
	for k, v := range cur {
		o.m[k] = v
	}
	o.changed = map[string]bool{}
	return nil
}
