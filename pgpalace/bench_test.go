package pgpalace

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/palacetest"
	"github.com/engram-dev/engram/internal/pgtest"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/palace"
)

// The benchmarks here run this palace beside package palace's SQLite file
// in one process, on the same generated turns (palacetest.Corpus), so that
// their figures compare: docs/benchmarks.md quotes the ratios.

// benchPalace is a palace under benchmark: its turn writes (what an
// acknowledgement waits for) and its search.
type benchPalace struct {
	name   string
	put    func(ctx context.Context, turns []engram.Turn) error // what an acknowledgement waits for
	build  func(ctx context.Context, turns []engram.Turn) error // every index
	search func(ctx context.Context, q engram.TextQuery) ([]engram.TurnHit, error)
	load   func(ctx context.Context) error // the keyword index
	tidy   func(ctx context.Context) error // the compact job's Optimize
}

// benchPalaces opens an empty SQLite palace and an empty PostgreSQL one.
func benchPalaces(b *testing.B) []benchPalace {
	b.Helper()
	lite, err := palace.Open(filepath.Join(b.TempDir(), "palace.db"), palace.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { lite.Close() })
	pg, err := Open(context.Background(), pgtest.NewDatabase(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { pg.Close() })
	return []benchPalace{
		{"sqlite", lite.PutTurnsSearchable, lite.PutTurns, lite.SearchTurns, lite.LoadKeywordIndex, lite.Optimize},
		{"postgres", pg.PutTurnsSearchable, pg.PutTurns, pg.SearchTurns, pg.LoadKeywordIndex, pg.Optimize},
	}
}

// BenchmarkPutTurns measures the writes of turns in batches of 100 (one op
// = one batch) into an empty palace: the first transaction of each
// palace's PutTurns (PutTurnsSearchable), which an acknowledgement waits
// for: in package palace the turns and their keyword tables, here the
// turns.
//
//	ENGRAM_TEST_POSTGRES_URL=... go test -run '^$' -bench PutTurns -benchtime 200x ./pgpalace/
func BenchmarkPutTurns(b *testing.B) {
	for _, p := range benchPalaces(b) {
		b.Run(p.name, func(b *testing.B) {
			c := palacetest.NewCorpus(2)
			ctx := context.Background()
			seq := int64(0)
			for b.Loop() {
				b.StopTimer()
				turns := make([]engram.Turn, 100)
				for i := range turns {
					seq++
					turns[i] = c.Turn(seq)
				}
				b.StartTimer()
				if err := p.put(ctx, turns); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(seq)/b.Elapsed().Seconds(), "turns/s")
		})
	}
}

// BenchmarkSearchTurns measures SearchTurns over 100,000 turns in every
// namespace, with every index written (PutTurns), the compact job run
// and the keyword indexes loaded, with the median and 99th percentile
// latency, by shape of query (palacetest.Corpus.Queries).
//
//	ENGRAM_TEST_POSTGRES_URL=... go test -run '^$' -bench SearchTurns -benchtime 1000x ./pgpalace/
func BenchmarkSearchTurns(b *testing.B) {
	const n = 100_000
	ctx := context.Background()
	palaces := benchPalaces(b)
	for _, p := range palaces {
		c := palacetest.NewCorpus(1)
		start := time.Now()
		turns := make([]engram.Turn, 0, 1000)
		for seq := int64(1); seq <= n; seq++ {
			turns = append(turns, c.Turn(seq))
			if len(turns) == cap(turns) {
				if err := p.build(ctx, turns); err != nil {
					b.Fatal(err)
				}
				turns = turns[:0]
			}
		}
		if err := p.tidy(ctx); err != nil {
			b.Fatal(err)
		}
		if err := p.load(ctx); err != nil {
			b.Fatal(err)
		}
		b.Logf("%s: %d turns stored and indexed in %v", p.name, n, time.Since(start).Round(time.Millisecond))
	}
	c := palacetest.NewCorpus(1)
	for _, shape := range []string{"words", "question", "identifier", "substring", "cjk-absent"} {
		queries := c.Queries(shape, 500)
		for _, p := range palaces {
			b.Run(shape+"/"+p.name, func(b *testing.B) {
				var lat []time.Duration
				var hits, i int
				for b.Loop() {
					start := time.Now()
					res, err := p.search(ctx, engram.TextQuery{Text: queries[i%len(queries)], Limit: 10})
					lat = append(lat, time.Since(start))
					if err != nil {
						b.Fatal(err)
					}
					hits += len(res)
					i++
				}
				testutil.ReportLatency(b, lat)
				b.ReportMetric(float64(hits)/float64(len(lat)), "hits/op")
			})
		}
	}
}
