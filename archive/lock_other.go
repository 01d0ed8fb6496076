//go:build !darwin && !linux

package archive

import "github.com/engram-dev/engram"

type lockFile struct{}

// acquireLock refuses: engram runs on Linux and macOS, where flock keeps two
// processes from writing one archive; elsewhere nothing would.
func acquireLock(dir string) (*lockFile, error) {
	return nil, engram.Errorf(engram.EUNSUPPORTED, "archive %s: locking is supported on Linux and macOS only", dir)
}

func (l *lockFile) release() error { return nil }
