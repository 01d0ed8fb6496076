package ollama

import (
	"context"
	"testing"
)

// BenchmarkEmbed embeds batches of 32 sentence-length texts on the test
// server and reports texts per second.
//
//	go test -run '^$' -bench Embed -benchtime 20x ./ollama/
func BenchmarkEmbed(b *testing.B) {
	e := MustNewEmbedder(b, Config{BatchSize: 32})
	in := texts(32)
	if _, err := e.Check(context.Background()); err != nil { // loads the model
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := e.Embed(context.Background(), in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(in))/b.Elapsed().Seconds(), "texts/s")
}
