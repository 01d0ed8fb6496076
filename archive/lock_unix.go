//go:build darwin || linux

package archive

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/engram-dev/engram"
)

// lockName is the lock file inside the archive directory.
const lockName = "LOCK"

// lockFile is the held lock of an archive directory. It works on the real
// file system, not through FS: flock needs a real descriptor, and a lock
// that tests could fake would guard nothing.
type lockFile struct {
	f *os.File
}

// acquireLock takes an exclusive flock on <dir>/LOCK without waiting, and
// writes our pid into it so that the error the next process gets can say
// who holds the directory. flock locks belong to the open file description,
// so a second Open in the same process is refused like another process.
// The kernel drops the lock when the process dies, so a crash leaves no
// stale lock behind.
func acquireLock(dir string) (*lockFile, error) {
	path := filepath.Join(dir, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("archive: open lock: %w", err)
	}
	if err := flock(f, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		pid := "unknown"
		if b, rerr := os.ReadFile(path); rerr == nil {
			if n, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil {
				pid = strconv.Itoa(n)
			}
		}
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, &engram.Error{Code: engram.ELOCKED, Message: fmt.Sprintf(
				"archive %s is in use by another engram process (pid %s); stop it or use another --home", dir, pid)}
		}
		return nil, fmt.Errorf("archive: lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("archive: write pid into lock: %w", err)
	}
	return &lockFile{f: f}, nil
}

// release drops the lock. The file stays: removing it would let a third
// process lock a new file while a second still waits on the old one.
func (l *lockFile) release() error {
	err := flock(l.f, unix.LOCK_UN)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	return err
}

func flock(f *os.File, how int) error {
	for {
		err := unix.Flock(int(f.Fd()), how)
		if err != unix.EINTR {
			return err
		}
	}
}
