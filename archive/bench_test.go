package archive_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/internal/archivetest"
)

// BenchmarkAppend measures acknowledged (fsynced) turns per second with
// many concurrent callers, as the HTTP server makes them, for calls of 1
// and of 100 turns. fsyncs/op shows how much group commit saves.
func BenchmarkAppend(b *testing.B) {
	for _, perCall := range []int{1, 100} {
		b.Run(fmt.Sprintf("turns=%d", perCall), func(b *testing.B) {
			a := MustOpen(b, b.TempDir(), archive.Options{}, false)
			archivetest.BenchAppend(b, a, perCall)
			s := a.Stats()
			b.ReportMetric(float64(s.Fsyncs)/float64(b.N), "fsyncs/op")
		})
	}
}

// BenchmarkDecodeLine measures reading a line back, the cost of Open and
// of Stream from files; "json" is encoding/json's read of the same line,
// which DecodeLine leaves to it only for lines of another shape.
func BenchmarkDecodeLine(b *testing.B) {
	line, err := archive.EncodeLine(fullTurn())
	if err != nil {
		b.Fatal(err)
	}
	b.Run("direct", func(b *testing.B) {
		b.SetBytes(int64(len(line)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := archive.DecodeLine(line); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json", func(b *testing.B) {
		b.SetBytes(int64(len(line)))
		b.ReportAllocs()
		for b.Loop() {
			var t engram.Turn
			if err := json.Unmarshal(line, &t); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkEncodeLine measures writing a line, done by the writer goroutine
// for every turn.
func BenchmarkEncodeLine(b *testing.B) {
	tn := fullTurn()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := archive.EncodeLine(tn); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStreamBehindTail measures a Stream of the last 100 turns of a
// day file of 30,000, by a reader behind the tail cache (the vector
// indexer under a steady ingest): the lines before its seq are skipped
// unread.
func BenchmarkStreamBehindTail(b *testing.B) {
	a := MustOpen(b, b.TempDir(), archive.Options{TailCache: 16}, false)
	batch := make([]engram.Turn, 1000)
	for range 30 {
		for i := range batch {
			batch[i] = turn("bench", "a turn of about the length of a short chat message, with some words in it")
		}
		if _, err := a.Append(context.Background(), batch); err != nil {
			b.Fatal(err)
		}
	}
	after := a.LastSeq() - 100
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		if err := a.Stream(context.Background(), after, func(engram.Turn) error { n++; return nil }); err != nil {
			b.Fatal(err)
		}
		if n != 100 {
			b.Fatalf("%d turns, want 100", n)
		}
	}
}

// BenchmarkOpen measures reading an archive of 50,000 turns at Open (the
// start of a server, of a rebuild), with one goroutine decoding its lines
// and with the default of one per core.
func BenchmarkOpen(b *testing.B) {
	dir := b.TempDir()
	a := MustOpen(b, dir, archive.Options{}, false)
	batch := make([]engram.Turn, 1000)
	for n := 0; n < 50; n++ {
		for i := range batch {
			batch[i] = turn(fmt.Sprintf("s%d", n), fmt.Sprintf("turn %d of session %d: a chat message of about the length people write, with a few words in it", i, n))
		}
		mustAppend(b, a, batch...)
	}
	if err := a.Close(); err != nil {
		b.Fatal(err)
	}
	for _, workers := range []int{1, 0} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				a, err := archive.Open(dir, archive.Options{LoadWorkers: workers, Logger: quietLogger()})
				if err != nil {
					b.Fatal(err)
				}
				if got := a.Stats().Turns; got != 50000 {
					b.Fatalf("%d turns read, want 50000", got)
				}
				if err := a.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
