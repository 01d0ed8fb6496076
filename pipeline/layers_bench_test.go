package pipeline_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/palace"
	"github.com/engram-dev/engram/pipeline"
)

// BenchmarkLayerPipeline measures the layer workers with each offline
// extractor (nlp, the default, and rules as the baseline of the same run):
// every op runs L1 (extraction into the palace), L2, L3 and L4 over a fresh
// palace of the same archived conversation. turns/s is the rate of the
// whole pipeline; the per-worker rates follow.
//
//	go test -run '^$' -bench LayerPipeline -benchtime 3x -cpu 2 ./pipeline/
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
	dir := b.TempDir()
	a, err := archive.Open(filepath.Join(dir, "archive"), archive.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	if _, err := a.Append(context.Background(), turns); err != nil {
		b.Fatal(err)
	}
	pipeline.LoadTagger()
	for _, x := range []struct {
		name string
		x    engram.Extractor
	}{{"nlp", &pipeline.NLPExtractor{}}, {"rules", pipeline.RulesExtractor{}}} {
		b.Run(x.name, func(b *testing.B) { benchLayerPipeline(b, a, x.x, n) })
	}
}

func benchLayerPipeline(b *testing.B, a *archive.Archive, x engram.Extractor, n int) {
	dir := b.TempDir()
	ctx := context.Background()
	spent := map[string]time.Duration{}
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
	for name, d := range spent {
		b.ReportMetric(float64(n*b.N)/d.Seconds(), name+"-turns/s")
	}
}
