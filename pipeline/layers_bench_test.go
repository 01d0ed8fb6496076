package pipeline_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/extract"
	"github.com/engram-dev/engram/internal/layertest"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/palace"
	"github.com/engram-dev/engram/pipeline"
)

// BenchmarkLayerPipeline measures the layer workers with each offline
// extractor (nlp, the default, and rules as the baseline of the same run):
// every op runs L1 (extraction into the palace), L2, L3 and L4 over a fresh
// palace of the same archived conversation. turns/s is the rate of the
// whole pipeline; the per-worker rates follow, and turns/cpu-s, the turns
// per second of CPU time the process spent (all threads, GC included):
// unlike turns/s it barely moves when other processes share the machine,
// and it is a floor for the rate on one idle core.
//
// Two corpora: "team", the 14-turn conversation of layers_test.go repeated
// into 10,000 turns (nearly every memory a near-duplicate), and "locomo",
// the 788 turns of the LoCoMo development set as chat turns with their
// sessions' dates, when shared/bench/locomo-dev is found in the working
// folder or one above it (else skipped).
//
//	go test -run '^$' -bench LayerPipeline -benchtime 3x -count 3 -cpu 2 ./pipeline/
func BenchmarkLayerPipeline(b *testing.B) {
	const n = 10000
	team := team()
	turns := make([]engram.Turn, n)
	for i := range turns {
		t := team[i%len(team)]
		t.ID = fmt.Sprintf("b-%06d", i)
		t.Session = fmt.Sprintf("s%04d", i/40)
		t.TS = t.TS.Add(time.Duration(i) * time.Minute)
		turns[i] = t
	}
	extract.LoadTagger()
	corpora := []struct {
		name  string
		turns func(testing.TB) []engram.Turn
	}{{"team", func(testing.TB) []engram.Turn { return turns }}, {"locomo", layertest.LoCoMoTurns}}
	for _, c := range corpora {
		b.Run(c.name, func(b *testing.B) {
			turns := c.turns(b)
			a := benchArchive(b, turns)
			for _, x := range []struct {
				name string
				x    engram.Extractor
			}{{"nlp", &extract.NLPExtractor{}}, {"rules", extract.RulesExtractor{}}} {
				b.Run(x.name, func(b *testing.B) { benchLayerPipeline(b, a, x.x, len(turns)) })
			}
		})
	}
}

// benchArchive archives turns in a temporary folder.
func benchArchive(b *testing.B, turns []engram.Turn) *archive.Archive {
	b.Helper()
	a, err := archive.Open(filepath.Join(b.TempDir(), "archive"), archive.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = a.Close() })
	if _, err := a.Append(context.Background(), turns); err != nil {
		b.Fatal(err)
	}
	return a
}

func benchLayerPipeline(b *testing.B, a *archive.Archive, x engram.Extractor, n int) {
	dir := b.TempDir()
	ctx := context.Background()
	spent := map[string]time.Duration{}
	cpu0 := testutil.CPUTime()
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		p, err := palace.Open(filepath.Join(dir, fmt.Sprintf("palace-%d.db", i)), palace.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		for _, w := range []struct {
			name string
			run  func(context.Context) error
		}{
			{pipeline.WorkerMemories, (&pipeline.MemoryWorker{Archive: a, Extractor: x, Store: p}).Run},
			{pipeline.WorkerScenes, (&pipeline.SceneWorker{Archive: a, Store: p}).Run},
			{pipeline.WorkerPersona, (&pipeline.PersonaWorker{Store: p}).Run},
			{pipeline.WorkerGraph, (&pipeline.GraphWorker{Store: p}).Run},
		} {
			start := time.Now()
			if err := w.run(ctx); err != nil {
				b.Fatal(err)
			}
			spent[w.name] += time.Since(start)
		}
		b.StopTimer()
		p.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "turns/s")
	if cpu := testutil.CPUTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(n*b.N)/cpu.Seconds(), "turns/cpu-s")
	}
	for name, d := range spent {
		b.ReportMetric(float64(n*b.N)/d.Seconds(), name+"-turns/s")
	}
}
