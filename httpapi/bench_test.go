package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engram-dev/engram/httpapi"
)

// benchClient is an HTTP client with enough idle connections for the
// parallel benchmarks.
var benchClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

func benchPost(b *testing.B, url string, body []byte) {
	resp, err := benchClient.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		b.Fatalf("status %d", resp.StatusCode)
	}
}

func batchBody(n int, seed int64) []byte {
	turns := make([]map[string]any, n)
	for i := range turns {
		turns[i] = map[string]any{
			"session": fmt.Sprintf("bench-%d", seed%97), "speaker": "Ana",
			"content": fmt.Sprintf("turn %d of batch %d: we discussed the release plan, the database migration and port %d", i, seed, 30000+i),
			"meta":    map[string]any{"i": i},
		}
	}
	body, _ := json.Marshal(map[string]any{"turns": turns})
	return body
}

// BenchmarkIngestBatched measures durable ingest over real HTTP: 8 clients
// POST batches of 100 turns; each 201 comes after the archive fsync and the
// palace index. Reports turns/s.
func BenchmarkIngestBatched(b *testing.B) {
	s := mustOpenStack(b, httpapi.Config{})
	const batch = 100
	var seed atomic.Int64
	b.SetParallelism(4) // 4 x GOMAXPROCS clients
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			benchPost(b, s.URL+"/v1/turns", batchBody(batch, seed.Add(1)))
		}
	})
	b.ReportMetric(float64(b.N*batch)/time.Since(start).Seconds(), "turns/s")
}

// BenchmarkPostSingleTurn measures the latency of one-turn POSTs from 4
// concurrent clients (an agent framework posting as turns happen). Reports
// p50 and p99 in ms.
func BenchmarkPostSingleTurn(b *testing.B) {
	s := mustOpenStack(b, httpapi.Config{})
	var seed atomic.Int64
	var mu sync.Mutex
	lat := make([]time.Duration, 0, b.N)
	b.SetParallelism(2)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var mine []time.Duration
		for pb.Next() {
			n := seed.Add(1)
			body := []byte(fmt.Sprintf(`{"session":"s%d","content":"single turn %d about the deployment window"}`, n%13, n))
			t0 := time.Now()
			benchPost(b, s.URL+"/v1/turns", body)
			mine = append(mine, time.Since(t0))
		}
		mu.Lock()
		lat = append(lat, mine...)
		mu.Unlock()
	})
	b.StopTimer()
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	}
}
