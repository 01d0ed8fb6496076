package archive

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// FS is the file-ops seam of the archive. The default, OSFS, is the real
// file system; tests wrap it to make a disk fill up or an fsync fail, which
// no real disk does on demand. It is kept to what the archive calls.
type FS interface {
	OpenFile(name string, flag int, perm fs.FileMode) (File, error)
	MkdirAll(path string, perm fs.FileMode) error
	Rename(oldpath, newpath string) error
	Remove(name string) error
	Stat(name string) (fs.FileInfo, error)
	ReadDir(name string) ([]fs.DirEntry, error)
}

// File is an open file as FS returns it. Data files are opened with
// O_APPEND, so Write always lands at the end, also after a Truncate.
type File interface {
	io.Writer
	io.ReaderAt
	io.Closer
	Sync() error
	Truncate(size int64) error
	Stat() (fs.FileInfo, error)
}

// OSFS is the FS of the operating system.
type OSFS struct{}

var _ FS = OSFS{}

// OpenFile calls os.OpenFile.
func (OSFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		// A nil *os.File in a File interface would not compare equal to nil.
		return nil, err
	}
	return f, nil
}

// MkdirAll calls os.MkdirAll.
func (OSFS) MkdirAll(path string, perm fs.FileMode) error { return os.MkdirAll(path, perm) }

// Rename calls os.Rename.
func (OSFS) Rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }

// Remove calls os.Remove.
func (OSFS) Remove(name string) error { return os.Remove(name) }

// Stat calls os.Stat.
func (OSFS) Stat(name string) (fs.FileInfo, error) { return os.Stat(name) }

// ReadDir calls os.ReadDir.
func (OSFS) ReadDir(name string) ([]fs.DirEntry, error) { return os.ReadDir(name) }

// syncDir fsyncs a directory so that a file created or renamed in it
// survives a crash: without it the data can be on disk while the name is not.
func syncDir(fsys FS, dir string) error {
	d, err := fsys.OpenFile(dir, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	err = d.Sync()
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) {
		// Some systems cannot fsync a directory and say so; SQLite ignores
		// this too. There is nothing better to do on them.
		err = nil
	}
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
