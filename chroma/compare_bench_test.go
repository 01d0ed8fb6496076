package chroma_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/chroma"
	"github.com/engram-dev/engram/internal/vectortest"
	"github.com/engram-dev/engram/palace"
	"github.com/engram-dev/engram/vecindex"
)

// Settings of BenchmarkVectorSearchEmbeddedVsChroma.
const (
	cmpDim        = 512 // the built-in embedder's dimension
	cmpK          = 10
	cmpNear       = 128 // queries near a stored vector
	cmpRandom     = 128 // isotropic random queries
	cmpMinSamples = 300 // latencies behind p50/p99, even with -benchtime 3x
	cmpBatch      = 1000
	cmpModel      = "bench-cmp-v1-" // + n; bump v1 when the vectors change
)

// BenchmarkVectorSearchEmbeddedVsChroma compares top-10 vector search of the
// embedded index (package palace, exact) with Chroma (HNSW, server defaults)
// at 10k and 100k clustered unit vectors of 512 dimensions, the same vectors
// and the same 256 queries on both, in one process. One op is one query;
// p50-ms and p99-ms come from at least 300 queries. The chroma
// sub-benchmark also reports recall@10 against the embedded results (overall,
// and for the near and random halves of the query set), the embedded p50 of
// the same queries measured just before (emb-p50-ms), and p50-ratio, chroma
// p50 over that embedded p50.
//
// Each backend answers the whole query set once untimed before it is timed.
// The embedded index is rebuilt in b.TempDir for each -count run (seconds).
// The Chroma collection engram_bench-cmp-v1-<n>_512 is filled once per
// process; a collection of that name holding exactly n vectors, whose
// spot-checked vectors find themselves, is reused as it is, so a long-lived
// server pays the fill (about 80 s at 100k) only once and keeps one
// collection per n. Needs ENGRAM_TEST_CHROMA_URL:
//
//	scripts/testenv.sh go test -run '^$' -bench VectorSearchEmbeddedVsChroma -benchtime 300x -count 3 -timeout 30m ./chroma/
func BenchmarkVectorSearchEmbeddedVsChroma(b *testing.B) {
	url := os.Getenv(chroma.EnvURL)
	if url == "" {
		b.Skipf("%s not set: this benchmark needs a Chroma server (scripts/testenv.sh starts one)", chroma.EnvURL)
	}
	for _, n := range []int{10_000, 100_000} {
		b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
			data := cmpDataFor(n)
			emb := openEmbedded(b, data)
			b.Run("embedded", func(b *testing.B) {
				runQueries(b, data.queries, emb) // warm
				lat, _ := timeQueries(b, data.queries, emb)
				reportP50P99(b, lat)
			})
			b.Run("chroma", func(b *testing.B) {
				ch := chromaFor(b, url, data)
				exact := runQueries(b, data.queries, emb)
				embLat := make([]time.Duration, 0, cmpMinSamples)
				for i := range cmpMinSamples {
					embLat = append(embLat, timeQuery(b, emb, data.queries[i%len(data.queries)], nil))
				}
				runQueries(b, data.queries, ch) // warm
				lat, got := timeQueries(b, data.queries, ch)
				p50 := reportP50P99(b, lat)
				embP50 := percentile(embLat, 0.50)
				b.ReportMetric(ms(embP50), "emb-p50-ms")
				b.ReportMetric(float64(p50)/float64(embP50), "p50-ratio")
				b.ReportMetric(recall(got, exact, 0, len(data.queries)), "recall@10")
				b.ReportMetric(recall(got, exact, 0, cmpNear), "recall-near@10")
				b.ReportMetric(recall(got, exact, cmpNear, len(data.queries)), "recall-rand@10")
			})
		})
	}
}

// cmpData is the vectors and queries of one n, deterministic in n.
type cmpData struct {
	n       int
	items   []engram.VectorItem
	queries [][]float32
}

var cmpCache struct {
	mu     sync.Mutex
	data   map[int]*cmpOnce[*cmpData]
	chroma map[int]*cmpOnce[*chroma.Index]
}

// cmpOnce holds a value made once per process.
type cmpOnce[T any] struct {
	once sync.Once
	v    T
	err  error
}

// onceFor returns m[n], creating it.
func onceFor[T any](m *map[int]*cmpOnce[T], n int) *cmpOnce[T] {
	cmpCache.mu.Lock()
	defer cmpCache.mu.Unlock()
	if *m == nil {
		*m = make(map[int]*cmpOnce[T])
	}
	if (*m)[n] == nil {
		(*m)[n] = &cmpOnce[T]{}
	}
	return (*m)[n]
}

// cmpDataFor generates the vectors of n once per process: n/100 clusters,
// as palace's BenchmarkVectorQuery draws them, normalised to unit length.
// The queries are cmpNear stored vectors plus noise of length 0.3 (cosine
// about 0.96 with their source, which is then their nearest neighbour),
// then cmpRandom isotropic random unit vectors.
func cmpDataFor(n int) *cmpData {
	o := onceFor(&cmpCache.data, n)
	o.once.Do(func() {
		c := vectortest.NewClusters(uint64(n), cmpDim, n/100)
		d := &cmpData{n: n, items: make([]engram.VectorItem, n)}
		base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
		for i := range d.items {
			d.items[i] = engram.VectorItem{
				ID:        "t" + strconv.Itoa(i),
				Kind:      engram.KindTurn,
				Namespace: "ns" + strconv.Itoa(i%10),
				TS:        base.Add(time.Duration(i) * time.Minute),
				Vector:    unit(c.Vector()),
			}
		}
		rng := rand.New(rand.NewPCG(uint64(n), 0xc0ffee))
		for range cmpNear {
			src := d.items[rng.IntN(n)].Vector
			q := make([]float32, cmpDim)
			for i := range q {
				q[i] = src[i] + float32(rng.NormFloat64()*0.3/math.Sqrt(cmpDim))
			}
			d.queries = append(d.queries, unit(q))
		}
		for range cmpRandom {
			q := make([]float32, cmpDim)
			for i := range q {
				q[i] = float32(rng.NormFloat64())
			}
			d.queries = append(d.queries, unit(q))
		}
		o.v = d
	})
	return o.v
}

func unit(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	inv := 1 / math.Sqrt(s)
	for i := range v {
		v[i] = float32(float64(v[i]) * inv)
	}
	return v
}

// openEmbedded fills a palace in b.TempDir with data's vectors and loads
// them into memory; the palace closes when b ends.
func openEmbedded(b *testing.B, data *cmpData) *vecindex.Index {
	b.Helper()
	ctx := context.Background()
	db, err := palace.Open(filepath.Join(b.TempDir(), "palace.db"), palace.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := db.Close(); err != nil {
			b.Error(err)
		}
	})
	s, err := db.Vectors(ctx, "bench-512", cmpDim)
	if err != nil {
		b.Fatal(err)
	}
	v := vecindex.New(s)
	start := time.Now()
	for i := 0; i < data.n; i += cmpBatch {
		if err := v.Upsert(ctx, data.items[i:min(i+cmpBatch, data.n)]); err != nil {
			b.Fatal(err)
		}
	}
	if err := v.Load(ctx); err != nil {
		b.Fatal(err)
	}
	b.Logf("embedded: wrote and loaded %d vectors in %v", data.n, time.Since(start).Round(time.Millisecond))
	return v
}

// chromaFor returns the Chroma index holding data's vectors, filling its
// collection once per process (see the benchmark's doc for reuse). The
// index stays open for the life of the process.
func chromaFor(b *testing.B, url string, data *cmpData) *chroma.Index {
	b.Helper()
	o := onceFor(&cmpCache.chroma, data.n)
	o.once.Do(func() { o.v, o.err = fillChroma(b, url, data) })
	if o.err != nil {
		b.Fatal(o.err)
	}
	return o.v
}

func fillChroma(b *testing.B, url string, data *cmpData) (*chroma.Index, error) {
	ctx := context.Background()
	ix, err := chroma.Open(ctx, chroma.Config{URL: url, Model: cmpModel + strconv.Itoa(data.n), Dim: cmpDim, Timeout: 2 * time.Minute})
	if err != nil {
		return nil, err
	}
	if have, err := ix.Count(ctx); err != nil {
		_ = ix.Close()
		return nil, err
	} else if have == data.n && findsItself(ctx, ix, data) {
		b.Logf("chroma: reusing %s (%d vectors)", ix.Collection(), data.n)
		return ix, nil
	}
	if err := ix.DropCollection(ctx); err != nil {
		_ = ix.Close()
		return nil, err
	}
	start := time.Now()
	if err := ix.Upsert(ctx, data.items); err != nil {
		_ = ix.Close()
		return nil, err
	}
	took := time.Since(start)
	if have, err := ix.Count(ctx); err != nil || have != data.n {
		_ = ix.Close()
		return nil, fmt.Errorf("chroma: %s holds %d vectors after the fill, want %d (%v)", ix.Collection(), have, data.n, err)
	}
	b.Logf("chroma: filled %s with %d vectors in %v (%.0f vectors/s)",
		ix.Collection(), data.n, took.Round(time.Millisecond), float64(data.n)/took.Seconds())
	return ix, nil
}

// findsItself spot-checks a collection left by an earlier run: the first,
// middle and last stored vectors must find themselves first.
func findsItself(ctx context.Context, ix *chroma.Index, data *cmpData) bool {
	for _, i := range []int{0, data.n / 2, data.n - 1} {
		it := data.items[i]
		hits, err := ix.Query(ctx, engram.VectorQuery{Vector: it.Vector, K: 1})
		if err != nil || len(hits) == 0 || hits[0].ID != it.ID || hits[0].Score < 0.999 {
			return false
		}
	}
	return true
}

// runQueries answers every query once, untimed, and returns the ids found.
func runQueries(b *testing.B, queries [][]float32, ix engram.VectorIndex) [][]string {
	b.Helper()
	out := make([][]string, len(queries))
	for i, q := range queries {
		timeQuery(b, ix, q, &out[i])
	}
	return out
}

// timeQueries times queries cycled through the set, b.N of them under the
// benchmark's timer and more untimed up to cmpMinSamples. It returns the
// latencies and the ids found for each query, from its first answer.
func timeQueries(b *testing.B, queries [][]float32, ix engram.VectorIndex) ([]time.Duration, [][]string) {
	b.Helper()
	lat := make([]time.Duration, 0, cmpMinSamples)
	got := make([][]string, len(queries))
	i := 0
	next := func() {
		q := i % len(queries)
		var ids *[]string
		if got[q] == nil {
			ids = &got[q]
		}
		lat = append(lat, timeQuery(b, ix, queries[q], ids))
		i++
	}
	for b.Loop() {
		next()
	}
	for len(lat) < cmpMinSamples {
		next()
	}
	return lat, got
}

// timeQuery runs one top-10 query and returns how long it took; ids, if
// not nil, receives the ids found.
func timeQuery(b *testing.B, ix engram.VectorIndex, q []float32, ids *[]string) time.Duration {
	start := time.Now()
	hits, err := ix.Query(context.Background(), engram.VectorQuery{Vector: q, K: cmpK})
	took := time.Since(start)
	if err != nil {
		b.Fatal(err)
	}
	if len(hits) != cmpK {
		b.Fatalf("%d hits, want %d", len(hits), cmpK)
	}
	if ids != nil {
		*ids = make([]string, len(hits))
		for i, h := range hits {
			(*ids)[i] = h.ID
		}
	}
	return took
}

// recall is the mean recall@10 of got against exact over queries from..to-1.
func recall(got, exact [][]string, from, to int) float64 {
	var sum float64
	for q := from; q < to; q++ {
		found := 0
		for _, id := range exact[q] {
			if slices.Contains(got[q], id) {
				found++
			}
		}
		sum += float64(found) / float64(len(exact[q]))
	}
	return sum / float64(to-from)
}

// reportP50P99 reports the median and 99th percentile of lat and returns
// the median.
func reportP50P99(b *testing.B, lat []time.Duration) time.Duration {
	p50 := percentile(lat, 0.50)
	b.ReportMetric(ms(p50), "p50-ms")
	b.ReportMetric(ms(percentile(lat, 0.99)), "p99-ms")
	return p50
}

// percentile returns the p-quantile of lat (nearest rank, as palace's
// reportLatency), sorting lat.
func percentile(lat []time.Duration, p float64) time.Duration {
	slices.Sort(lat)
	return lat[min(len(lat)-1, int(p*float64(len(lat))))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
