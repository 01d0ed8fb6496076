package postgres_test

import (
	"fmt"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/internal/archivetest"
	"github.com/engram-dev/engram/internal/pgtest"
	"github.com/engram-dev/engram/postgres"
)

// BenchmarkAppend measures acknowledged turns per second of the
// PostgreSQL archive (committed) and of the file archive (fsynced), in
// the same process, with many concurrent callers as the HTTP server makes
// them, for calls of 1 and of 64 turns.
func BenchmarkAppend(b *testing.B) {
	for _, store := range []string{"file", "postgres"} {
		for _, perCall := range []int{1, 64} {
			b.Run(fmt.Sprintf("store=%s/turns=%d", store, perCall), func(b *testing.B) {
				var a engram.Archive
				if store == "file" {
					fa, err := archive.Open(b.TempDir(), archive.Options{Logger: quietLogger()})
					if err != nil {
						b.Fatal(err)
					}
					b.Cleanup(func() { fa.Close() })
					a = fa
				} else {
					a = mustOpen(b, pgtest.NewDatabase(b), postgres.Options{})
				}
				archivetest.BenchAppend(b, a, perCall)
			})
		}
	}
}
