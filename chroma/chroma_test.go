package chroma

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v2 "github.com/amikos-tech/chroma-go/pkg/api/v2"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/remotetest"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/internal/vectortest"
)

// EnvURL names the environment variable that points the tests at a running
// server, e.g. ENGRAM_TEST_CHROMA_URL=http://127.0.0.1:8765 as printed by
// scripts/chroma.sh up 8765.
const EnvURL = "ENGRAM_TEST_CHROMA_URL"

// serverURL returns the test server's URL. Without one, -short skips the
// test and a full run fails: a missing server must never pass silently.
func serverURL(tb testing.TB) string {
	tb.Helper()
	return testutil.Servers(tb, EnvURL)[EnvURL]
}

var modelSeq atomic.Int64

// uniqueModel returns a model name no other test uses, so that each test
// gets its own collection, on a fresh server or a long-lived one.
func uniqueModel(tb testing.TB) string {
	name := strings.NewReplacer("/", "-", "_", "-").Replace(tb.Name())
	return fmt.Sprintf("test-%s-%s-%d", name, strconv.FormatInt(time.Now().UnixNano(), 36), modelSeq.Add(1))
}

// MustOpenIndex opens an index of dimension dim on a fresh collection of the
// test server. At the end of the test it checks that the server still
// answers, drops the collection and closes the index.
func MustOpenIndex(tb testing.TB, dim int) *Index {
	tb.Helper()
	return MustOpenIndexConfig(tb, Config{URL: serverURL(tb), Model: uniqueModel(tb), Dim: dim})
}

// MustOpenIndexConfig opens an index with cfg; see MustOpenIndex.
func MustOpenIndexConfig(tb testing.TB, cfg Config) *Index {
	tb.Helper()
	ctx := context.Background()
	ix, err := Open(ctx, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := ix.Heartbeat(ctx); err != nil {
			tb.Errorf("after the test: %v", err)
		}
		if err := ix.DropCollection(ctx); err != nil {
			tb.Errorf("drop %s: %v", ix.Collection(), err)
		}
		if err := ix.Close(); err != nil {
			tb.Error(err)
		}
	})
	return ix
}

func TestConformance(t *testing.T) {
	serverURL(t)
	vectortest.Run(t, func(t *testing.T, dim int) engram.VectorIndex {
		return MustOpenIndex(t, dim)
	})
}

func TestCollectionName(t *testing.T) {
	for _, c := range []struct {
		model string
		dim   int
		want  string
	}{
		{"bge-m3", 1024, "engram_bge-m3_1024"},
		{"builtin-v1", 256, "engram_builtin-v1_256"},
		{"BGE-M3", 1024, "engram_BGE-M3_1024"},
		{"nomic-embed-text:latest", 768, "engram_nomic-embed-text_latest-"},
		{"a.b", 3, "engram_a_b-"},
		{strings.Repeat("x", 100), 8, "engram_" + strings.Repeat("x", 64) + "-"},
	} {
		got := CollectionName(c.model, c.dim)
		if strings.HasSuffix(c.want, "-") {
			// Changed names end in 8 hex digits of the hash, then the dim.
			if !strings.HasPrefix(got, c.want) || !strings.HasSuffix(got, "_"+strconv.Itoa(c.dim)) ||
				len(got) != len(c.want)+8+1+len(strconv.Itoa(c.dim)) {
				t.Errorf("CollectionName(%q, %d) = %q, want %s<8 hex>_%d", c.model, c.dim, got, c.want, c.dim)
			}
		} else if got != c.want {
			t.Errorf("CollectionName(%q, %d) = %q, want %q", c.model, c.dim, got, c.want)
		}
		if len(got) > 512 || strings.Contains(got, "..") {
			t.Errorf("CollectionName(%q, %d) = %q: not a valid Chroma name", c.model, c.dim, got)
		}
	}
	// Names that sanitise alike stay apart, and so do dimensions.
	distinct := []string{
		CollectionName("a:b", 8), CollectionName("a/b", 8), CollectionName("a_b", 8),
		CollectionName("a-b", 8), CollectionName("a-b", 16),
	}
	seen := map[string]bool{}
	for _, n := range distinct {
		if seen[n] {
			t.Errorf("collection name %s given to two models", n)
		}
		seen[n] = true
	}
}

func TestConfigValidate(t *testing.T) {
	ok := Config{URL: "http://127.0.0.1:8000", Model: "m", Dim: 4}
	if err := ok.withDefaults().Validate(); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	for _, c := range []struct {
		field string
		edit  func(*Config)
	}{
		{"chroma.url", func(c *Config) { c.URL = "" }},
		{"chroma.url", func(c *Config) { c.URL = "127.0.0.1:8000" }},
		{"chroma.url", func(c *Config) { c.URL = "ftp://host" }},
		{"chroma.model", func(c *Config) { c.Model = "" }},
		{"chroma.dim", func(c *Config) { c.Dim = 0 }},
		{"chroma.timeout", func(c *Config) { c.Timeout = -time.Second }},
	} {
		cfg := ok
		c.edit(&cfg)
		_, err := Open(context.Background(), cfg)
		if engram.ErrorCode(err) != engram.EINVALID || engram.ErrorField(err) != c.field {
			t.Errorf("%+v: got %v (field %q), want EINVALID on %s", cfg, err, engram.ErrorField(err), c.field)
		}
	}
}

// closedPortURL returns the URL of a loopback port where nothing listens.
func closedPortURL(t *testing.T) string {
	t.Helper()
	return "http://" + remotetest.ClosedPort(t)
}

// checkUnavailable checks that err is EUNAVAILABLE naming url. How long the
// call took is not checked: a refused connection fails at once, and a
// silent server after Config.Timeout, which TestServerSilent checks by the
// error instead of the clock.
func checkUnavailable(t *testing.T, what string, err error, url string) {
	t.Helper()
	if engram.ErrorCode(err) != engram.EUNAVAILABLE {
		t.Fatalf("%s: got %v (code %q), want EUNAVAILABLE", what, err, engram.ErrorCode(err))
	}
	if !strings.Contains(engram.ErrorMessage(err), url) {
		t.Fatalf("%s: message %q does not name %s", what, engram.ErrorMessage(err), url)
	}
}

// TestServerDown needs no server: nothing listens on the port.
func TestServerDown(t *testing.T) {
	url := closedPortURL(t)
	_, err := Open(context.Background(), Config{URL: url, Model: "m", Dim: 4})
	checkUnavailable(t, "Open", err, url)
	if !strings.Contains(err.Error(), "connection refused") { // chroma-go flattens the cause into text
		t.Fatalf("Open: %v, want the refused connection named", err)
	}
}

// TestServerSilent: a server that accepts connections and never answers
// fails after Config.Timeout, not never.
func TestServerSilent(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	})
	t.Cleanup(func() {
		_ = ln.Close()
		wg.Wait()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	url := "http://" + ln.Addr().String()
	// Untimed: without the timeout Open would wait for ever.
	_, err = Open(context.Background(), Config{URL: url, Model: "m", Dim: 4, Timeout: 300 * time.Millisecond})
	checkUnavailable(t, "Open against a silent server", err, url)
	if !strings.Contains(err.Error(), "deadline exceeded") { // chroma-go flattens the cause into text
		t.Fatalf("Open against a silent server: %v, want the timeout named", err)
	}
}

// proxy forwards TCP connections to a target until stopped: it lets a test
// take the server away from an open index.
type proxy struct {
	ln    net.Listener
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]bool
}

func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, conns: map[net.Conn]bool{}}
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				_ = c.Close()
				continue
			}
			p.mu.Lock()
			p.conns[c], p.conns[up] = true, true
			p.mu.Unlock()
			p.wg.Go(func() { _, _ = io.Copy(up, c); _ = up.Close() })
			p.wg.Go(func() { _, _ = io.Copy(c, up); _ = c.Close() })
		}
	})
	t.Cleanup(p.stop)
	return p
}

func (p *proxy) url() string { return "http://" + p.ln.Addr().String() }

// stop refuses new connections and cuts the open ones.
func (p *proxy) stop() {
	_ = p.ln.Close()
	p.mu.Lock()
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

func TestServerGoesAway(t *testing.T) {
	target := strings.TrimPrefix(serverURL(t), "http://")
	p := startProxy(t, target)
	ctx := context.Background()
	model := uniqueModel(t)
	// The direct index drops the collection at cleanup, when the proxy is gone.
	direct := MustOpenIndexConfig(t, Config{URL: serverURL(t), Model: model, Dim: 4})
	ix, err := Open(ctx, Config{URL: p.url(), Model: model, Dim: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ix.Close() })
	if err := ix.Upsert(ctx, []engram.VectorItem{{ID: "a", Kind: engram.KindTurn, TS: time.Now(), Vector: []float32{1, 0, 0, 0}}}); err != nil {
		t.Fatal(err)
	}
	p.stop()

	_, err = ix.Query(ctx, engram.VectorQuery{Vector: []float32{1, 0, 0, 0}, K: 1})
	checkUnavailable(t, "Query", err, p.url())
	err = ix.Upsert(ctx, []engram.VectorItem{{ID: "b", Kind: engram.KindTurn, TS: time.Now(), Vector: []float32{0, 1, 0, 0}}})
	checkUnavailable(t, "Upsert", err, p.url())
	_, err = ix.Count(ctx)
	checkUnavailable(t, "Count", err, p.url())
	err = ix.Heartbeat(ctx)
	checkUnavailable(t, "Heartbeat", err, p.url())

	if n, err := direct.Count(ctx); err != nil || n != 1 {
		t.Fatalf("direct Count = %d, %v; want 1", n, err)
	}
}

func TestCanceledContext(t *testing.T) {
	ix := MustOpenIndex(t, 4)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := ix.Count(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Count with a canceled context: %v, want context.Canceled", err)
	}
}

func TestModelSwitch(t *testing.T) {
	ctx := context.Background()
	url := serverURL(t)
	a := MustOpenIndexConfig(t, Config{URL: url, Model: uniqueModel(t), Dim: 8})
	b := MustOpenIndexConfig(t, Config{URL: url, Model: uniqueModel(t), Dim: 4})
	// The same model at another dimension is another collection too.
	c := MustOpenIndexConfig(t, Config{URL: url, Model: a.Model(), Dim: 4})
	if a.Collection() == c.Collection() {
		t.Fatalf("dimensions 8 and 4 share collection %s", a.Collection())
	}
	mustUpsert(t, a, item("x", 8, 0))
	mustUpsert(t, b, item("x", 4, 1), item("y", 4, 2))
	mustUpsert(t, c, item("z", 4, 3))
	for _, want := range []struct {
		ix *Index
		n  int
	}{{a, 1}, {b, 2}, {c, 1}} {
		if n, err := want.ix.Count(ctx); err != nil || n != want.n {
			t.Fatalf("%s: Count = %d, %v; want %d", want.ix.Collection(), n, err, want.n)
		}
	}
}

func TestDropCollection(t *testing.T) {
	ctx := context.Background()
	ix := MustOpenIndex(t, 4)
	other := MustOpenIndexConfig(t, Config{URL: ix.URL(), Model: ix.Model(), Dim: 4})
	mustUpsert(t, ix, item("a", 4, 0), item("b", 4, 1))
	if err := ix.DropCollection(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ix.DropCollection(ctx); err != nil {
		t.Fatalf("dropping a dropped collection: %v", err)
	}
	if n, err := ix.Count(ctx); err != nil || n != 0 {
		t.Fatalf("Count after drop = %d, %v; want 0", n, err)
	}
	// other still holds a handle on the dropped collection: it must follow.
	mustUpsert(t, other, item("c", 4, 2))
	if n, err := ix.Count(ctx); err != nil || n != 1 {
		t.Fatalf("Count = %d, %v; want 1", n, err)
	}
}

func TestDatabase(t *testing.T) {
	ctx := context.Background()
	db := "engram_test_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	ix := MustOpenIndexConfig(t, Config{URL: serverURL(t), Model: uniqueModel(t), Dim: 4, Database: db})
	mustUpsert(t, ix, item("a", 4, 0))
	// The same collection name in the default database is another one.
	def := MustOpenIndexConfig(t, Config{URL: ix.URL(), Model: ix.Model(), Dim: 4})
	if n, err := def.Count(ctx); err != nil || n != 0 {
		t.Fatalf("default database: Count = %d, %v; want 0", n, err)
	}
	again := MustOpenIndexConfig(t, Config{URL: ix.URL(), Model: ix.Model(), Dim: 4, Database: db})
	if n, err := again.Count(ctx); err != nil || n != 1 {
		t.Fatalf("database %s reopened: Count = %d, %v; want 1", db, n, err)
	}
}

func TestBatches(t *testing.T) {
	ctx := context.Background()
	ix := MustOpenIndexConfig(t, Config{URL: serverURL(t), Model: uniqueModel(t), Dim: 4, BatchSize: 7})
	var items []engram.VectorItem
	var ids []string
	for i := range 50 {
		items = append(items, item("b"+strconv.Itoa(i), 4, i))
		ids = append(ids, items[i].ID)
	}
	mustUpsert(t, ix, items...)
	if n, err := ix.Count(ctx); err != nil || n != 50 {
		t.Fatalf("Count = %d, %v; want 50", n, err)
	}
	if err := ix.Delete(ctx, ids[:45]); err != nil {
		t.Fatal(err)
	}
	if n, err := ix.Count(ctx); err != nil || n != 5 {
		t.Fatalf("Count = %d, %v; want 5", n, err)
	}
}

// TestServerBatchLimit sends more records than the server takes in one
// request.
func TestServerBatchLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 6,000 vectors take seconds")
	}
	ctx := context.Background()
	ix := MustOpenIndex(t, 4)
	const n = DefaultBatchSize + 539
	items := make([]engram.VectorItem, n)
	ids := make([]string, n)
	for i := range items {
		items[i] = item("s"+strconv.Itoa(i), 4, i)
		ids[i] = items[i].ID
	}
	mustUpsert(t, ix, items...)
	if got, err := ix.Count(ctx); err != nil || got != n {
		t.Fatalf("Count = %d, %v; want %d", got, err, n)
	}
	if err := ix.Delete(ctx, ids); err != nil {
		t.Fatal(err)
	}
	if got, err := ix.Count(ctx); err != nil || got != 0 {
		t.Fatalf("Count = %d, %v; want 0", got, err)
	}
}

// TestTimeResolution pins down the one-second resolution of time filters:
// a range never drops an item inside it.
func TestTimeResolution(t *testing.T) {
	ctx := context.Background()
	ix := MustOpenIndex(t, 4)
	base := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	it := engram.VectorItem{ID: "a", Kind: engram.KindTurn, TS: base.Add(500 * time.Millisecond), Vector: []float32{1, 0, 0, 0}}
	mustUpsert(t, ix, it)
	for _, c := range []struct {
		from, to time.Time
		found    bool
	}{
		{base.Add(400 * time.Millisecond), base.Add(600 * time.Millisecond), true},
		{base, base.Add(time.Second), true},
		{base.Add(700 * time.Millisecond), time.Time{}, true},        // same second: kept
		{time.Time{}, base.Add(200 * time.Millisecond), true},        // same second: kept
		{base.Add(time.Second), time.Time{}, false},                  // next second
		{time.Time{}, base, false},                                   // To excludes the whole second
		{base.Add(-time.Second), base.Add(-time.Millisecond), false}, // To rounds up to the item's second, exclusive
	} {
		hits, err := ix.Query(ctx, engram.VectorQuery{Vector: it.Vector, K: 1, From: c.from, To: c.to})
		if err != nil {
			t.Fatal(err)
		}
		if (len(hits) == 1) != c.found {
			t.Errorf("From %v To %v: hits %v, want found=%v", c.from, c.to, hits, c.found)
		}
	}
}

func item(id string, dim, seed int) engram.VectorItem {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32((seed*31+i*17)%23) + 1
	}
	v[seed%dim] += 50
	return engram.VectorItem{ID: id, Kind: engram.KindTurn, Namespace: "default", TS: time.Unix(1_700_000_000+int64(seed), 0), Vector: v}
}

func mustUpsert(t *testing.T, ix *Index, items ...engram.VectorItem) {
	t.Helper()
	if err := ix.Upsert(context.Background(), items); err != nil {
		t.Fatal(err)
	}
}

func TestHNSWSettings(t *testing.T) {
	ctx := context.Background()
	ix := MustOpenIndexConfig(t, Config{URL: serverURL(t), Model: uniqueModel(t), Dim: 4, HNSW: HNSW{M: 24, ConstructionEF: 150, SearchEF: 120}})
	col, err := ix.collection(ctx)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := col.Configuration().GetRaw("hnsw")
	got, _ := raw.(map[string]any)
	for k, want := range map[string]any{"space": "cosine", "max_neighbors": 24.0, "ef_construction": 150.0, "ef_search": 120.0} {
		if got[k] != want {
			t.Errorf("hnsw.%s = %v (%T), want %v; configuration %v", k, got[k], got[k], want, got)
		}
	}
}

// TestForeignCollection: a collection under engram's name with another
// distance function is refused, not used with wrong scores.
func TestForeignCollection(t *testing.T) {
	ctx := context.Background()
	ix := MustOpenIndex(t, 4)
	if err := ix.DropCollection(ctx); err != nil {
		t.Fatal(err)
	}
	conf := v2.NewCollectionConfiguration()
	conf.SetRaw("hnsw", map[string]any{"space": "l2"})
	if _, err := ix.client.CreateCollection(ctx, ix.Collection(), v2.WithEmbeddingFunctionCreate(refuseEmbedding{}),
		v2.WithDisableEFConfigStorage(), v2.WithConfigurationCreate(conf)); err != nil {
		t.Fatal(err)
	}
	_, err := Open(ctx, Config{URL: ix.URL(), Model: ix.Model(), Dim: 4})
	if engram.ErrorCode(err) != engram.ECONFLICT || !strings.Contains(engram.ErrorMessage(err), "l2") {
		t.Fatalf("Open over an l2 collection: %v, want ECONFLICT naming l2", err)
	}
}

// TestConcurrent runs writers and readers on one index at once, first use of
// the collection included (run it with -race).
func TestConcurrent(t *testing.T) {
	ctx := context.Background()
	url := serverURL(t)
	model := uniqueModel(t)
	MustOpenIndexConfig(t, Config{URL: url, Model: model, Dim: 4}) // drops the collection at the end
	ix, err := Open(ctx, Config{URL: url, Model: model, Dim: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ix.Close() })
	ix.forget(ix.col) // every goroutine races to get the collection
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 4 {
		wg.Go(func() {
			for i := range 10 {
				it := item(fmt.Sprintf("g%d-%d", g, i), 4, g*10+i)
				if err := ix.Upsert(ctx, []engram.VectorItem{it}); err != nil {
					errs <- err
					return
				}
				if _, err := ix.Query(ctx, engram.VectorQuery{Vector: it.Vector, K: 3}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n, err := ix.Count(ctx); err != nil || n != 40 {
		t.Fatalf("Count = %d, %v; want 40", n, err)
	}
}

func TestHolding(t *testing.T) {
	ctx := context.Background()
	ix := MustOpenIndexConfig(t, Config{URL: serverURL(t), Model: uniqueModel(t), Dim: 4, BatchSize: 2})
	mustUpsert(t, ix, item("a", 4, 0), item("b", 4, 1), item("c", 4, 2))
	if err := ix.Delete(ctx, []string{"b"}); err != nil {
		t.Fatal(err)
	}
	got, err := ix.Holding(ctx, []string{"c", "b", "nope", "a", "x"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != "c,a" {
		t.Fatalf("Holding = %v, want [c a]", got)
	}
	if got, err := ix.Holding(ctx, nil); err != nil || len(got) != 0 {
		t.Fatalf("Holding(nil) = %v, %v", got, err)
	}
}
