package vecindex_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/internal/vectortest"
	"github.com/engram-dev/engram/palace"
	"github.com/engram-dev/engram/vecindex"
)

// vecCorpus generates clustered vectors (vectortest.Clusters) as items.
type vecCorpus struct{ *vectortest.Clusters }

func newVecCorpus(seed uint64, dim, clusters int) *vecCorpus {
	return &vecCorpus{vectortest.NewClusters(seed, dim, clusters)}
}

// items returns the items seq from..to-1: ten namespaces ns0..ns9 in turn,
// one a minute from 2025.
func (c *vecCorpus) items(from, to int) []engram.VectorItem {
	items := make([]engram.VectorItem, 0, to-from)
	for i := from; i < to; i++ {
		items = append(items, engram.VectorItem{
			ID:        "t" + strconv.Itoa(i),
			Kind:      engram.KindTurn,
			Namespace: "ns" + strconv.Itoa(i%10),
			TS:        time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute),
			Vector:    c.Vector(),
		})
	}
	return items
}

// fillVectors writes n corpus vectors to model in batches of 1000.
func fillVectors(b *testing.B, v engram.VectorIndex, c *vecCorpus, n int) {
	b.Helper()
	start := time.Now()
	for i := 0; i < n; i += 1000 {
		if err := v.Upsert(context.Background(), c.items(i, min(i+1000, n))); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("wrote %d vectors in %v", n, time.Since(start).Round(time.Millisecond))
}

// BenchmarkVectorQuery measures an exact top-10 query of the embedded index
// at 10,000 and 100,000 vectors of 512 (the builtin embedder) and 1024
// dimensions (bge-m3), over all vectors and with a namespace filter that
// matches a tenth, reporting the median and 99th percentile latency besides
// the mean (ns/op).
//
//	go test -run '^$' -bench VectorQuery -benchtime 200x ./vecindex/
func BenchmarkVectorQuery(b *testing.B) {
	ctx := context.Background()
	for _, dim := range []int{512, 1024} {
		for _, n := range []int{10_000, 100_000} {
			b.Run(fmt.Sprintf("dim=%d/n=%d", dim, n), func(b *testing.B) {
				v := openIndex(b, openDB(b), "bench", dim)
				c := newVecCorpus(1, dim, n/100)
				fillVectors(b, v, c, n)
				if err := v.Load(ctx); err != nil {
					b.Fatal(err)
				}
				queries := make([][]float32, 256)
				for i := range queries {
					queries[i] = c.Vector()
				}
				for _, ns := range []string{"", "ns3"} {
					name := "all"
					if ns != "" {
						name = "ns10pct"
					}
					b.Run(name, func(b *testing.B) {
						var lat []time.Duration
						i := 0
						for b.Loop() {
							start := time.Now()
							hits, err := v.Query(ctx, engram.VectorQuery{Vector: queries[i%len(queries)], K: 10, Namespace: ns})
							lat = append(lat, time.Since(start))
							if err != nil {
								b.Fatal(err)
							}
							if len(hits) != 10 {
								b.Fatalf("%d hits", len(hits))
							}
							i++
						}
						testutil.ReportLatency(b, lat)
					})
				}
			})
		}
	}
}

// BenchmarkVectorUpsert measures writes to a loaded index in batches of 500
// vectors of 512 dimensions (one op = one batch): the SQLite transaction,
// then the matrix, whose growth copies it now and then.
//
//	go test -run '^$' -bench VectorUpsert -benchtime 200x ./vecindex/
func BenchmarkVectorUpsert(b *testing.B) {
	ctx := context.Background()
	db, v := openLoaded(b, filepath.Join(b.TempDir(), "palace.db"), 512)
	defer db.Close()
	c := newVecCorpus(2, 512, 1000)
	const batch = 500
	n := 0
	var elapsed time.Duration
	for b.Loop() {
		b.StopTimer()
		items := c.items(n, n+batch)
		b.StartTimer()
		start := time.Now()
		if err := storeOf(v).PutTurnVectors(ctx, items, int64(n+batch)); err != nil {
			b.Fatal(err)
		}
		elapsed += time.Since(start)
		n += batch
	}
	b.ReportMetric(float64(n)/elapsed.Seconds(), "vectors/s")
}

// BenchmarkVectorLoad measures opening a palace of 100,000 vectors of 512
// dimensions and loading them into memory (one op = Open, Vectors, Load),
// and reports the heap the matrix takes and the process's resident size.
//
//	go test -run '^$' -bench VectorLoad -benchtime 5x ./vecindex/
func BenchmarkVectorLoad(b *testing.B) {
	ctx := context.Background()
	const n, dim = 100_000, 512
	path := filepath.Join(b.TempDir(), "palace.db")
	db, err := palace.Open(path, palace.Options{})
	if err != nil {
		b.Fatal(err)
	}
	v, err := db.Vectors(ctx, "bench", dim)
	if err != nil {
		b.Fatal(err)
	}
	fillVectors(b, vecindex.New(v), newVecCorpus(3, dim, n/100), n)
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	var heap float64
	for b.Loop() {
		b.StopTimer()
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		b.StartTimer()
		db, v := openLoaded(b, path, dim)
		b.StopTimer()
		if got, _ := v.Count(ctx); got != n {
			b.Fatalf("loaded %d vectors, want %d", got, n)
		}
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		heap = float64(after.HeapAlloc-before.HeapAlloc) / (1 << 20)
		runtime.KeepAlive(v)
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(heap, "heap-MB")
	if fi, err := os.Stat(path); err == nil {
		b.ReportMetric(float64(fi.Size())/(1<<20), "file-MB")
	}
	// The resident size of a fresh process that opens the palace and loads
	// the vectors, and its peak: this process's own is blurred by the
	// vectors it generated.
	cmd := exec.Command(os.Args[0], "-test.run=^TestVectorLoadProcess$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), envVectorLoadPath+"="+path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("load in a child process: %v\n%s", err, out)
	}
	var rss, hwm float64
	if _, err := fmt.Sscanf(string(out[bytes.Index(out, []byte("rss-MB")):]), "rss-MB %g hwm-MB %g", &rss, &hwm); err != nil {
		b.Fatalf("child process output %q: %v", out, err)
	}
	b.ReportMetric(rss, "rss-MB")
	b.ReportMetric(hwm, "peak-rss-MB")
}

// TestVectorLoadProcess is BenchmarkVectorLoad's child process: it loads the
// palace named by the environment and prints its resident and peak sizes.
func TestVectorLoadProcess(t *testing.T) {
	path := os.Getenv(envVectorLoadPath)
	if path == "" {
		t.Skip("run by BenchmarkVectorLoad")
	}
	db, _ := openLoaded(t, path, 0)
	defer db.Close()
	runtime.GC()
	fmt.Printf("rss-MB %.1f hwm-MB %.1f\n", procStatusMB("VmRSS:"), procStatusMB("VmHWM:"))
}

const envVectorLoadPath = "ENGRAM_BENCH_VECTOR_PALACE"

// openLoaded opens the palace at path and loads the vectors of its model
// "bench" (dim 0: of the stored dimension) into memory. The caller closes
// the palace.
func openLoaded(tb testing.TB, path string, dim int) (*palace.DB, *vecindex.Index) {
	tb.Helper()
	ctx := context.Background()
	db, err := palace.Open(path, palace.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	s, err := db.Vectors(ctx, "bench", dim)
	if err != nil {
		tb.Fatal(err)
	}
	v := vecindex.New(s)
	if err := v.Load(ctx); err != nil {
		tb.Fatal(err)
	}
	return db, v
}

// procStatusMB returns a size in MiB from /proc/self/status, such as
// "VmRSS:", 0 where there is none.
func procStatusMB(key string) float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if rest, ok := bytes.CutPrefix(sc.Bytes(), []byte(key)); ok {
			kb, err := strconv.ParseFloat(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte("kB")))), 64)
			if err == nil {
				return kb / 1024
			}
		}
	}
	return 0
}
