package ollama

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/backoff"
)

// sameVector reports whether a and b are the same vector up to float noise
// (the server may sum in another order in a batch than alone).
func sameVector(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(float64(a[i]-b[i])) > 1e-4 {
			return false
		}
	}
	return true
}

func TestEmbed(t *testing.T) {
	e := MustNewEmbedder(t, Config{})
	if e.Dim() != 0 {
		t.Fatalf("Dim before the first Embed = %d, want 0", e.Dim())
	}
	vecs, err := e.Embed(context.Background(), []string{"The cat sat on the mat.", "", "Ünïcödé, emoji 🙂 and 中文"})
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != 3 {
		t.Fatalf("got %d vectors for 3 texts", len(vecs))
	}
	dim := e.Dim()
	if dim <= 0 {
		t.Fatalf("Dim after Embed = %d", dim)
	}
	t.Logf("model %s: %d dimensions", e.Model(), dim)
	for i, v := range vecs {
		if len(v) != dim {
			t.Fatalf("vector %d has %d dimensions, Dim() = %d", i, len(v), dim)
		}
		var norm float64
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				t.Fatalf("vector %d holds %v", i, x)
			}
			norm += float64(x) * float64(x)
		}
		if norm == 0 {
			t.Fatalf("vector %d is zero", i)
		}
	}
}

func TestEmbed_Empty(t *testing.T) {
	p := newProxy(t)
	e := MustNewEmbedder(t, Config{Host: p.Host()})
	for _, in := range [][]string{nil, {}} {
		vecs, err := e.Embed(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		if vecs == nil || len(vecs) != 0 {
			t.Fatalf("Embed(%#v) = %#v, want an empty, non-nil result", in, vecs)
		}
	}
	if n := len(p.Requests()); n != 0 {
		t.Fatalf("empty input sent %d requests", n)
	}
}

func TestEmbed_BatchesKeepOrder(t *testing.T) {
	p := newProxy(t)
	e := MustNewEmbedder(t, Config{Host: p.Host(), BatchSize: 32})
	in := texts(70)
	vecs, err := e.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	reqs := p.Requests()
	if len(reqs) != 3 {
		t.Fatalf("70 texts with BatchSize 32 sent %d requests, want 3", len(reqs))
	}
	var sent []string
	for i, want := range []int{32, 32, 6} {
		inputs := reqs[i].Strings("input")
		if reqs[i].Path != "/api/embed" || len(inputs) != want {
			t.Fatalf("request %d: %s with %d texts, want /api/embed with %d", i+1, reqs[i].Path, len(inputs), want)
		}
		sent = append(sent, inputs...)
	}
	for i := range in {
		if sent[i] != in[i] {
			t.Fatalf("text %d sent as %q, want %q", i, sent[i], in[i])
		}
	}

	// Each vector must be its own text's: embed every text alone and compare.
	single := MustNewEmbedder(t, Config{BatchSize: 1})
	alone, err := single.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	for i := range in {
		if !sameVector(vecs[i], alone[i]) {
			t.Fatalf("vector %d of the batched call differs from text %d embedded alone (cosine %.6f)", i, i, cosine(vecs[i], alone[i]))
		}
	}
	if cosine(vecs[0], vecs[1]) > 0.9999 {
		t.Fatal("distinct texts got the same vector: the order check proves nothing")
	}
}

func TestEmbed_Deterministic(t *testing.T) {
	e := MustNewEmbedder(t, Config{})
	in := texts(5)
	a, err := e.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if !sameVector(a[i], b[i]) {
			t.Fatalf("text %d: two calls gave different vectors (cosine %.6f)", i, cosine(a[i], b[i]))
		}
	}
}

// The test model's vectors are weighted means of word vectors (see
// scripts/mkmodel), and a real model does better: texts sharing their
// content words must be closer than unrelated texts.
func TestEmbed_SimilarTextsAreCloser(t *testing.T) {
	e := MustNewEmbedder(t, Config{})
	vecs, err := e.Embed(context.Background(), []string{
		"The quarterly earnings report of the company was published today.",
		"Today the company published its quarterly earnings report.",
		"My cat likes to sleep on the warm kitchen floor.",
	})
	if err != nil {
		t.Fatal(err)
	}
	related, unrelated := cosine(vecs[0], vecs[1]), cosine(vecs[0], vecs[2])
	t.Logf("related %.3f, unrelated %.3f", related, unrelated)
	if related <= unrelated+0.2 {
		t.Fatalf("related texts at cosine %.3f, unrelated at %.3f: want related clearly closer", related, unrelated)
	}
}

func TestEmbed_Concurrent(t *testing.T) {
	e := MustNewEmbedder(t, Config{BatchSize: 4})
	in := texts(10)
	want, err := e.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			got, err := e.Embed(context.Background(), in)
			if err != nil {
				errs <- err
				return
			}
			for i := range got {
				if !sameVector(got[i], want[i]) {
					errs <- fmt.Errorf("text %d: concurrent call gave another vector", i)
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
}

func TestCheck(t *testing.T) {
	e := MustNewEmbedder(t, Config{})
	dim, err := e.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if dim <= 0 || dim != e.Dim() {
		t.Fatalf("Check = %d, Dim = %d", dim, e.Dim())
	}
}

func TestPing(t *testing.T) {
	e := MustNewEmbedder(t, Config{})
	v, err := e.Ping(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if v == "" {
		t.Fatal("Ping returned an empty version")
	}
	t.Logf("server version %s", v)

	down := MustNewEmbedder(t, Config{Host: closedPort(t), Model: "any"})
	_, err = down.Ping(context.Background())
	mustCode(t, err, engram.EUNAVAILABLE)
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("Ping to a closed port: %v, want ECONNREFUSED in the chain", err)
	}
}

func TestEmbed_UnknownModel(t *testing.T) {
	p := newProxy(t)
	const model = "engram-no-such-model"
	e := MustNewEmbedder(t, Config{Host: p.Host(), Model: model})
	_, err := e.Embed(context.Background(), []string{"hello"})
	mustCode(t, err, engram.EUNAVAILABLE)
	want := fmt.Sprintf(`model "%s" is not available on the ollama server at http://%s; run: ollama pull %s`, model, p.Host(), model)
	if err.Error() != want || engram.ErrorMessage(err) != want {
		t.Fatalf("error:\n got %q\nwant %q\n(ErrorMessage %q)", err, want, engram.ErrorMessage(err))
	}
	var se api.StatusError
	if !errors.As(err, &se) || se.StatusCode != http.StatusNotFound {
		t.Fatalf("cause %v: want api.StatusError 404 in the chain", err)
	}
	if n := len(p.Requests()); n != 1 {
		t.Fatalf("a 404 was sent %d times, want once (no retry)", n)
	}
	if e.Dim() != 0 {
		t.Fatalf("Dim = %d after a failed call, want 0", e.Dim())
	}
}

func TestEmbed_Unreachable(t *testing.T) {
	addr := closedPort(t)
	// Default retries: 3, after 250, 500 and 1000 ms; the waits are
	// recorded instead of lived.
	e := MustNewEmbedder(t, Config{Host: addr, Model: "bge-m3", Timeout: 2 * time.Second})
	var waits []time.Duration
	e.pause = func(_ context.Context, d time.Duration) error {
		waits = append(waits, d)
		return nil
	}
	_, err := e.Embed(context.Background(), []string{"hello"})
	mustCode(t, err, engram.EUNAVAILABLE)
	prefix := fmt.Sprintf("ollama server at http://%s not reachable (4 attempts): ", addr)
	suffix := `; start it with "ollama serve" or set OLLAMA_HOST`
	if msg := err.Error(); !strings.HasPrefix(msg, prefix) || !strings.HasSuffix(msg, suffix) || !strings.Contains(msg, "connection refused") {
		t.Fatalf("error %q: want %q ... connection refused ... %q", msg, prefix, suffix)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("error %v: want ECONNREFUSED in the chain", err)
	}
	if want := []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second}; !slices.Equal(waits, want) {
		t.Fatalf("backoff %v, want %v", waits, want)
	}
}

// A server that comes up while the Embedder retries (a restart) is used as
// soon as it answers.
func TestEmbed_RetryUntilServerUp(t *testing.T) {
	addr, target := closedPort(t), testTarget(t)
	e := MustNewEmbedder(t, Config{Host: addr, MaxRetries: 10, RetryDelay: 50 * time.Millisecond})
	var up *proxy
	pauses := 0
	e.pause = func(_ context.Context, _ time.Duration) error {
		// The first two attempts found nothing listening; the server
		// comes up during the second backoff.
		if pauses++; pauses == 2 {
			l, err := net.Listen("tcp", addr)
			if err != nil {
				t.Skipf("could not listen on %s again: %v", addr, err)
			}
			up = startProxy(target, l)
			t.Cleanup(up.Close)
		}
		return nil
	}
	vecs, err := e.Embed(context.Background(), []string{"hello"})
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != 1 || len(vecs[0]) == 0 {
		t.Fatalf("got %v", vecs)
	}
	if n := len(up.Requests()); n != 1 || pauses != 2 {
		t.Fatalf("the server saw %d requests after %d backoffs, want 1 after 2", n, pauses)
	}
}

func TestEmbed_RetryOn503(t *testing.T) {
	p := newProxy(t)
	p.Fault(func(n int, w http.ResponseWriter, _ *http.Request) bool {
		if n == 1 {
			http.Error(w, `{"error":"server busy, please try again"}`, http.StatusServiceUnavailable)
			return true
		}
		return false
	})
	e := MustNewEmbedder(t, Config{Host: p.Host(), RetryDelay: time.Millisecond})
	vecs, err := e.Embed(context.Background(), []string{"retry me"})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(p.Requests()); n != 2 {
		t.Fatalf("%d requests, want 2 (a 503, then the retry)", n)
	}
	direct, err := MustNewEmbedder(t, Config{}).Embed(context.Background(), []string{"retry me"})
	if err != nil {
		t.Fatal(err)
	}
	if !sameVector(vecs[0], direct[0]) {
		t.Fatal("the retried request returned another vector")
	}
}

func TestEmbed_5xxGivesUp(t *testing.T) {
	p := newProxy(t)
	p.Fault(func(_ int, w http.ResponseWriter, _ *http.Request) bool {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"error":"llama runner process has terminated"}`))
		return true
	})
	e := MustNewEmbedder(t, Config{Host: p.Host(), MaxRetries: 2, RetryDelay: time.Millisecond})
	_, err := e.Embed(context.Background(), []string{"hello"})
	mustCode(t, err, engram.EUNAVAILABLE)
	want := fmt.Sprintf("ollama server at http://%s answered 500 Internal Server Error (3 attempts): llama runner process has terminated", p.Host())
	if err.Error() != want {
		t.Fatalf("error:\n got %q\nwant %q", err, want)
	}
	if n := len(p.Requests()); n != 3 {
		t.Fatalf("%d requests, want 3 (MaxRetries 2)", n)
	}
}

func TestEmbed_No4xxRetry(t *testing.T) {
	p := newProxy(t)
	p.Fault(func(_ int, w http.ResponseWriter, _ *http.Request) bool {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":"this model does not support embeddings"}`))
		return true
	})
	e := MustNewEmbedder(t, Config{Host: p.Host(), RetryDelay: time.Millisecond})
	_, err := e.Embed(context.Background(), []string{"hello"})
	mustCode(t, err, engram.EUNAVAILABLE)
	if !strings.Contains(err.Error(), "answered 400 Bad Request: this model does not support embeddings") {
		t.Fatalf("error %q does not carry the status and the server's message", err)
	}
	if n := len(p.Requests()); n != 1 {
		t.Fatalf("a 400 was sent %d times, want once", n)
	}
}

func TestEmbed_Timeout(t *testing.T) {
	p := newProxy(t)
	p.Fault(hang)
	e := MustNewEmbedder(t, Config{Host: p.Host(), Timeout: 200 * time.Millisecond, MaxRetries: 1, RetryDelay: time.Millisecond})
	_, err := e.Embed(context.Background(), []string{"hello"})
	mustCode(t, err, engram.EUNAVAILABLE)
	want := fmt.Sprintf("ollama server at http://%s did not answer within 200ms (2 attempts)", p.Host())
	if !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("error %q: want it to start with %q", err, want)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v: want context.DeadlineExceeded in the chain", err)
	}
	if n := len(p.Requests()); n != 2 {
		t.Fatalf("%d requests, want 2", n)
	}
}

// TestEmbed_ContextCanceled: a cancel ends a request in flight and a
// backoff. Neither is timed: a request or a backoff that ignored the
// cancel would never return (the server hangs until the client goes; the
// backoff is an hour), and the test would fail by the suite's timeout.
func TestEmbed_ContextCanceled(t *testing.T) {
	p := newProxy(t)
	ctx, cancel := context.WithCancel(context.Background())
	p.Fault(func(n int, w http.ResponseWriter, r *http.Request) bool {
		cancel() // the request is in flight: cancel it, and hang
		return hang(n, w, r)
	})
	e := MustNewEmbedder(t, Config{Host: p.Host()})
	_, err := e.Embed(ctx, []string{"hello"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v: want context.Canceled", err)
	}
	if n := len(p.Requests()); n != 1 {
		t.Fatalf("%d requests, want 1 (no retry after a cancel)", n)
	}

	// Already canceled: no retries, no wait.
	_, err = e.Embed(ctx, []string{"hello"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v: want context.Canceled", err)
	}

	// Canceled during the backoff between two attempts.
	down := MustNewEmbedder(t, Config{Host: closedPort(t), Model: "any", RetryDelay: time.Hour})
	ctx, cancel = context.WithCancel(context.Background())
	pauses := 0
	down.pause = func(ctx context.Context, d time.Duration) error {
		pauses++
		cancel()
		return backoff.Sleep(ctx, d) // the real wait, an hour, which the cancel must end
	}
	_, err = down.Embed(ctx, []string{"hello"})
	if !errors.Is(err, context.Canceled) || pauses != 1 {
		t.Fatalf("error %v after %d backoffs: want context.Canceled after 1", err, pauses)
	}
}

// A model replaced on the server under the same name returns vectors of
// another dimension: the Embedder must refuse them.
func TestEmbed_DimensionChange(t *testing.T) {
	p := newProxy(t)
	e := MustNewEmbedder(t, Config{Host: p.Host()})
	if _, err := e.Embed(context.Background(), []string{"first"}); err != nil {
		t.Fatal(err)
	}
	dim := e.Dim()
	p.Rewrite("/api/embed", func(_ int, reply map[string]any) {
		for i, v := range reply["embeddings"].([]any) {
			reply["embeddings"].([]any)[i] = v.([]any)[:dim-1]
		}
	})
	_, err := e.Embed(context.Background(), []string{"second"})
	mustCode(t, err, engram.ECONFLICT)
	if !strings.Contains(err.Error(), fmt.Sprintf("returned %d-dimensional vectors, %d before", dim-1, dim)) {
		t.Fatalf("error %q does not name both dimensions", err)
	}
	if e.Dim() != dim {
		t.Fatalf("Dim changed to %d", e.Dim())
	}
}

func TestEmbed_ShortReply(t *testing.T) {
	p := newProxy(t)
	p.Rewrite("/api/embed", func(_ int, reply map[string]any) {
		reply["embeddings"] = reply["embeddings"].([]any)[1:]
	})
	e := MustNewEmbedder(t, Config{Host: p.Host()})
	_, err := e.Embed(context.Background(), []string{"one", "two"})
	mustCode(t, err, engram.EINTERNAL)
	if !strings.Contains(err.Error(), "returned 1 vectors for 2 texts") {
		t.Fatalf("error %q", err)
	}
}
