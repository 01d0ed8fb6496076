// Package atomicfile replaces small files so that a crash leaves either the
// old content or the new one, never a mix: the data goes to a temporary
// file in the same folder, which is synced, renamed over the target, and
// the folder synced so that the rename is durable too.
//
// The temporary file is named "."+name+".tmp-" and a random suffix, so that
// a program that loads every file of a folder by its extension (launchd,
// systemd) never loads a leftover one; RemoveTemps removes what a crash left.
package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFile replaces path with data, with permissions perm (set
// explicitly: the umask does not cut them). The folder must exist. On an
// error the temporary file is removed and path is left as it was.
//
// A path that names something other than a regular file (after symbolic
// links), such as /dev/null, a pipe or a terminal, is written to as it is:
// renaming over it would replace the device or pipe with a file.
func WriteFile(path string, data []byte, perm fs.FileMode) (err error) {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		if fi.IsDir() {
			return &fs.PathError{Op: "write", Path: path, Err: errIsDir}
		}
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		if _, err := f.Write(data); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
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
	if err = f.Chmod(perm); err != nil {
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
	return SyncDir(dir)
}

var errIsDir = errors.New("is a folder")

// SyncDir fsyncs the folder dir, so that the names created, renamed or
// removed in it are durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// RemoveTemps removes the temporary files that an interrupted WriteFile of
// dir/name left behind.
func RemoveTemps(dir, name string) {
	stale, _ := filepath.Glob(filepath.Join(dir, "."+name+".tmp-*"))
	for _, p := range stale {
		os.Remove(p)
	}
}
