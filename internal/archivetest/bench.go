package archivetest

import (
	"context"
	"testing"

	"github.com/engram-dev/engram"
)

// BenchAppend measures acknowledged turns per second of a with many
// concurrent callers, as the HTTP server makes them, each call of perCall
// turns. It reports turns/s and leaves the timer stopped, so that the
// caller can add what its archive counts.
func BenchAppend(b *testing.B, a engram.Archive, perCall int) {
	batch := make([]engram.Turn, perCall)
	for i := range batch {
		batch[i] = Turn("bench", "a turn of about the length of a short chat message, with some words in it")
	}
	b.SetParallelism(8) // 8 callers per CPU
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := a.Append(context.Background(), batch); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N*perCall)/b.Elapsed().Seconds(), "turns/s")
}
