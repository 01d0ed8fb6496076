package launchd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// writeFile replaces path with data atomically: a temporary file in the same
// folder, synced, renamed over path, then the folder synced. The temporary
// name starts with a dot and ends in neither .plist nor a unit suffix, so
// neither launchd nor systemd loads a leftover one.
func writeFile(path string, data []byte) (err error) {
	dir, name := filepath.Split(path)
	f, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return err
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// removeStaleTemps removes the temporary files an interrupted writeFile of
// name left in dir.
func removeStaleTemps(dir, name string) {
	stale, _ := filepath.Glob(filepath.Join(dir, "."+name+".tmp-*"))
	for _, p := range stale {
		os.Remove(p)
	}
}

// writeFiles writes files into dir (created if missing) and reports which
// existed before with other content.
func writeFiles(dir string, files []File, res *Result) (changed map[string]bool, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	changed = map[string]bool{}
	for _, f := range files {
		path := filepath.Join(dir, f.Name)
		removeStaleTemps(dir, f.Name)
		old, err := os.ReadFile(path)
		if err == nil && string(old) != string(f.Data) {
			changed[f.Name] = true
		}
		if err := writeFile(path, f.Data); err != nil {
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
