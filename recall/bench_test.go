package recall_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engram-dev/engram"
)

// benchWords is a small English vocabulary; turns draw from it with Zipf
// frequencies so common words are common and topic words rare.
var benchWords = strings.Fields(`the a we to and of is in it that for on was with you this be have are not
but they at so do what can all about if there will just like get would one time know think people
project release database migration deploy port service api cluster backup cache index query latency
schedule meeting budget design review incident rollback config token vector search memory archive
postgres kafka redis docker kubernetes python golang rust typescript linux window laptop phone travel
weekend family dinner garden painting guitar running hiking camping book movie music school teacher
decided agreed planned promised postponed cancelled approved rejected chose prefer like love hate
monday tuesday friday morning evening yesterday tomorrow week month year summer winter spring`)

var benchFixture struct {
	once sync.Once
	f    *fixture
}

// benchTurns returns the 100k-turn fixture, built once per process.
func benchTurns(b *testing.B) *fixture {
	benchFixture.once.Do(func() {
		rng := rand.New(rand.NewPCG(1, 2))
		zipf := rand.NewZipf(rng, 1.1, 2, uint64(len(benchWords)-1))
		contents := make([]string, 100_000)
		for i := range contents {
			n := 8 + rng.IntN(20)
			w := make([]string, n)
			for j := range w {
				w[j] = benchWords[zipf.Uint64()]
			}
			contents[i] = strings.Join(w, " ") + fmt.Sprintf(" ticket-%d", i)
		}
		t0 := time.Now()
		benchFixture.f = mustOpenFixture(b, contents)
		b.Logf("built 100k turns with builtin vectors in %v", time.Since(t0))
	})
	if benchFixture.f == nil {
		b.Fatal("fixture failed")
	}
	return benchFixture.f
}

// BenchmarkRecall100k measures recall over 100k turns through the recall
// service (validation, query embedding, search, turn lookup, results):
// shallow (builtin embedder, embedded exact vector index) against keyword
// (BM25) in the same run. Reports p50/p99 per request.
func BenchmarkRecall100k(b *testing.B) {
	f := benchTurns(b)
	s := f.service()
	queries := []string{
		"what did we decide about the database migration",
		"when is the release review meeting",
		"kubernetes cluster backup",
		"who promised to fix the cache latency incident?",
		"dinner with family on friday evening",
	}
	for _, mode := range []string{engram.ModeShallow, engram.ModeDeep, engram.ModeKeyword} {
		b.Run("mode="+mode, func(b *testing.B) {
			ctx := context.Background()
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				resp, err := s.Recall(ctx, engram.RecallRequest{Query: queries[i%len(queries)], K: 10, Mode: mode})
				lat = append(lat, time.Since(t0))
				if err != nil || resp.Mode != mode || len(resp.Results) == 0 {
					b.Fatalf("%s: %v %v", mode, resp.Mode, err)
				}
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}
