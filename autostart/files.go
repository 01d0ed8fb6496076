package autostart

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/engram-dev/engram/internal/atomicfile"
)

// writeFiles writes files into dir (created if missing) and reports which
// existed before with other content.
func writeFiles(dir string, files []File, res *Result) (changed map[string]bool, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	changed = map[string]bool{}
	for _, f := range files {
		path := filepath.Join(dir, f.Name)
		// The temporary name (atomicfile) starts with a dot and ends in
		// neither .plist nor a unit suffix: neither launchd nor systemd
		// loads a leftover one, and this removes it.
		atomicfile.RemoveTemps(dir, f.Name)
		old, err := os.ReadFile(path)
		if err == nil && string(old) != string(f.Data) {
			changed[f.Name] = true
		}
		if err := atomicfile.WriteFile(path, f.Data, 0o644); err != nil {
			return nil, fmt.Errorf("write %s: %w", path, err)
		}
		res.Written = append(res.Written, path)
	}
	return changed, nil
}

// removeFile removes path and records it; a missing file is no error.
func removeFile(path string, res *Result) error {
	err := os.Remove(path)
	switch {
	case err == nil:
		res.Removed = append(res.Removed, path)
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("remove %s: %w", path, err)
	}
	return nil
}

// exists reports whether path exists.
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
