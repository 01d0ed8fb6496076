package recall_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/pipeline"
	"github.com/engram-dev/engram/recall"
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
		benchFixture.f.addScenesAndUnitVectors(b)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		t1 := time.Now()
		if err := benchFixture.f.db.LoadKeywordIndex(context.Background()); err != nil {
			b.Fatal(err)
		}
		took := time.Since(t1)
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.Logf("loaded the keyword indexes of the turns and units in %v, %.1f MB of heap", took, float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/1e6)
		b.Logf("built 100k turns with builtin vectors, scenes and unit vectors in %v", time.Since(t0))
	})
	if benchFixture.f == nil {
		b.Fatal("fixture failed")
	}
	return benchFixture.f
}

// BenchmarkRecall100k measures recall over 100k turns through the recall
// service (validation, query embedding, search, turn lookup, results) in
// every mode, in the same run: hybrid (the default), shallow (builtin
// embedder, embedded exact vector index), deep (with the sessions' and
// scenes' units and their vectors) and keyword (BM25). Reports p50/p99 per
// request.
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
	s.Units = f.db
	// The same paths with single-turn results: what looking up each hit's
	// burst costs.
	single := f.service()
	single.Units = f.db
	single.Deep.BurstTurns = -1
	for _, run := range []struct {
		name, mode string
		s          *recall.Service
	}{
		{"mode=" + engram.ModeHybrid, engram.ModeHybrid, s},
		{"mode=" + engram.ModeHybrid + "/bursts=off", engram.ModeHybrid, single},
		{"mode=" + engram.ModeShallow, engram.ModeShallow, s},
		{"mode=" + engram.ModeDeep, engram.ModeDeep, s},
		{"mode=" + engram.ModeDeep + "/bursts=off", engram.ModeDeep, single},
		{"mode=" + engram.ModeKeyword, engram.ModeKeyword, s},
	} {
		mode, s := run.mode, run.s
		b.Run(run.name, func(b *testing.B) {
			ctx := context.Background()
			lat := make([]time.Duration, 0, b.N)
			cpu0 := testutil.CPUTime()
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
			// The process's CPU time a recall: the work, which barely
			// moves when other processes share the machine, as latency does.
			if cpu := testutil.CPUTime() - cpu0; cpu > 0 {
				b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}

// addScenesAndUnitVectors segments the fixture's turns into scenes (their
// units written with them) and embeds every unit, as the layer workers of
// a serving engram do.
func (f *fixture) addScenesAndUnitVectors(tb testing.TB) {
	ctx := context.Background()
	var cfg pipeline.SceneConfig
	open := map[engram.SessionKey]*pipeline.SceneDraft{}
	var writes []engram.SceneWrite
	flush := func(through int64) {
		if err := f.db.PutScenes(ctx, pipeline.WorkerScenes, writes, through); err != nil {
			tb.Fatal(err)
		}
		writes = writes[:0]
	}
	for i, t := range f.turns {
		k := engram.SessionKey{Namespace: t.Namespace, Session: t.Session}
		prev := open[k]
		cur, started := cfg.AddTurn(prev, t)
		if started && prev != nil {
			writes = append(writes, engram.SceneWrite{Scene: prev.Scene})
		}
		open[k] = cur
		if len(writes) >= 500 || i == len(f.turns)-1 {
			flush(t.Seq)
		}
	}
	for _, d := range open {
		writes = append(writes, engram.SceneWrite{Scene: d.Scene})
	}
	flush(f.turns[len(f.turns)-1].Seq)
	w := &pipeline.LayerVectorWorker{Layers: f.db, Embedder: f.emb, Store: f.vecs, Units: f.db}
	if err := w.Run(ctx); err != nil {
		tb.Fatal(err)
	}
}
