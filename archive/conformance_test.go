package archive_test

import (
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/internal/archivetest"
)

// TestConformance runs the suite every engram.Archive passes (the
// PostgreSQL archive's tests run it too).
func TestConformance(t *testing.T) {
	archivetest.Run(t, func(t *testing.T) archivetest.Opener {
		dir := t.TempDir()
		return func() (engram.Archive, error) {
			return archive.Open(dir, archive.Options{Logger: quietLogger()})
		}
	})
}
