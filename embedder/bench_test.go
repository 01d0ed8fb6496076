package embedder_test

import (
	"context"
	"testing"

	"github.com/engram-dev/engram/embedder"
)

// benchTurns are typical conversation turns of about 20 words.
var benchTurns = []string{
	"Hey Mel, I finally went to that LGBTQ support group yesterday and it was really powerful for me.",
	"We decided to keep the API on port 30001 because the old one clashed with the metrics exporter.",
	"Can you remind me what we agreed about the database migration plan for next Tuesday's release?",
	"I painted a sunrise over the lake last weekend; it's my favourite thing to do when I need calm.",
	"The deploy failed again with a connection reset on node seven, so I rolled back to yesterday's build.",
	"My kids loved the pottery class, and we are thinking about signing up for the summer camp too.",
	"Let's move the standup to ten thirty, the design review keeps running over on Mondays anyway.",
	"I don't think the caching layer is the problem; the latency spike started before we enabled it.",
}

var benchCJK = []string{
	"我们决定把接口保留在端口30001，因为旧端口和监控导出器冲突了。",
	"会議でポート30001を使うことに決めました。古いポートは監視ツールと衝突していたからです。",
}

func benchmarkEmbed(b *testing.B, texts []string) {
	e := embedder.New()
	ctx := context.Background()
	if _, err := e.Embed(ctx, texts); err != nil { // loads the word vectors
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := e.Embed(ctx, texts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(texts))/b.Elapsed().Seconds(), "texts/s")
}

// BenchmarkEmbed embeds typical 20-word English turns, one batch of eight
// per call, on one goroutine.
func BenchmarkEmbed(b *testing.B) { benchmarkEmbed(b, benchTurns) }

// BenchmarkEmbedOne embeds one turn per call, as a recall query does.
func BenchmarkEmbedOne(b *testing.B) { benchmarkEmbed(b, benchTurns[:1]) }

// BenchmarkEmbedCJK embeds Chinese and Japanese turns.
func BenchmarkEmbedCJK(b *testing.B) { benchmarkEmbed(b, benchCJK) }

// BenchmarkEmbedParallel embeds from GOMAXPROCS goroutines at once.
func BenchmarkEmbedParallel(b *testing.B) {
	e := embedder.New()
	ctx := context.Background()
	if _, err := e.Embed(ctx, benchTurns); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := e.Embed(ctx, benchTurns); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N*len(benchTurns))/b.Elapsed().Seconds(), "texts/s")
}

// BenchmarkLoad measures parsing the embedded word vectors, which the first
// Embed of a process pays.
func BenchmarkLoad(b *testing.B) {
	for b.Loop() {
		embedder.ParseVocabForBench()
	}
}
