package openai

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engram-dev/engram"
)

func TestEmbed(t *testing.T) {
	p := newProxy(t)
	e, _ := mustEmbedder(t, EmbedderConfig{Config: Config{BaseURL: p.Base(), APIKey: "sk-test-key"}})
	in := []string{"The cat sat on the mat.", "A kitten is sleeping on the rug.", "Quarterly revenue grew by four percent."}
	vecs, err := e.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != 3 || e.Dim() == 0 || len(vecs[0]) != e.Dim() || len(vecs[2]) != e.Dim() {
		t.Fatalf("%d vectors, dim %d", len(vecs), e.Dim())
	}
	if near, far := cosine(vecs[0], vecs[1]), cosine(vecs[0], vecs[2]); near <= far {
		t.Errorf("cat/kitten %.3f not closer than cat/revenue %.3f", near, far)
	}
	reqs := p.Requests()
	if len(reqs) != 1 || reqs[0].Method != http.MethodPost || reqs[0].Path != "/v1/embeddings" || reqs[0].Auth != "Bearer sk-test-key" ||
		reqs[0].Body["model"] != e.Model() || reqs[0].Body["encoding_format"] != "float" || len(reqs[0].Body["input"].([]any)) != 3 {
		t.Fatalf("requests %+v", reqs)
	}
	// The same vectors as the server's own API gives.
	again, err := e.Embed(context.Background(), in[:1])
	if err != nil || math.Abs(cosine(again[0], vecs[0])-1) > 1e-4 {
		t.Errorf("the same text twice: cosine %.5f, %v", cosine(again[0], vecs[0]), err)
	}
	if dim, err := e.Check(context.Background()); err != nil || dim != e.Dim() {
		t.Errorf("Check = %d, %v", dim, err)
	}
	// No key, no header.
	e2, _ := mustEmbedder(t, EmbedderConfig{Config: Config{BaseURL: p.Base()}})
	if _, err := e2.Embed(context.Background(), in[:1]); err != nil {
		t.Fatal(err)
	}
	if reqs := p.Requests(); reqs[len(reqs)-1].Auth != "" {
		t.Errorf("Authorization %q sent without a key", reqs[len(reqs)-1].Auth)
	}
}

func TestEmbed_EmptyAndBatches(t *testing.T) {
	p := newProxy(t)
	e, _ := mustEmbedder(t, EmbedderConfig{Config: Config{BaseURL: p.Base()}, BatchSize: 2})
	if vecs, err := e.Embed(context.Background(), nil); err != nil || len(vecs) != 0 || len(p.Requests()) != 0 {
		t.Fatalf("no texts: %v, %v, %d requests", vecs, err, len(p.Requests()))
	}
	in := texts(5)
	vecs, err := e.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(p.Requests()); n != 3 {
		t.Fatalf("%d requests for 5 texts in batches of 2, want 3", n)
	}
	for i, text := range in {
		one, err := e.Embed(context.Background(), []string{text})
		if err != nil {
			t.Fatal(err)
		}
		if c := cosine(one[0], vecs[i]); math.Abs(c-1) > 1e-4 {
			t.Errorf("text %d: batched vector differs from its own (cosine %.5f): order lost", i, c)
		}
	}
}

// TestEmbed_OutOfOrder: a server may list the vectors in any order; each
// goes where its index says.
func TestEmbed_OutOfOrder(t *testing.T) {
	p := newProxy(t)
	e, _ := mustEmbedder(t, EmbedderConfig{Config: Config{BaseURL: p.Base()}})
	in := texts(3)
	want, err := e.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	p.Rewrite("", func(_ int, reply map[string]any) { slices.Reverse(reply["data"].([]any)) })
	got, err := e.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	for i := range in {
		if math.Abs(cosine(got[i], want[i])-1) > 1e-4 {
			t.Errorf("text %d got another text's vector", i)
		}
	}
}

// TestEmbed_BadReplies: a reply that lacks a vector, repeats one or gives
// an empty one fails the whole call; a failing batch in the middle fails
// it too, with no partial result.
func TestEmbed_BadReplies(t *testing.T) {
	p := newProxy(t)
	e, _ := mustEmbedder(t, EmbedderConfig{Config: Config{BaseURL: p.Base()}, BatchSize: 2})
	for name, rw := range map[string]func(map[string]any){
		"short":   func(r map[string]any) { r["data"] = r["data"].([]any)[:1] },
		"twice":   func(r map[string]any) { d := r["data"].([]any); d[1].(map[string]any)["index"] = 0 },
		"empty":   func(r map[string]any) { r["data"].([]any)[0].(map[string]any)["embedding"] = []any{} },
		"no data": func(r map[string]any) { delete(r, "data") },
	} {
		p.Rewrite("", func(_ int, reply map[string]any) { rw(reply) })
		vecs, err := e.Embed(context.Background(), texts(2))
		if vecs != nil {
			t.Errorf("%s: vectors returned", name)
		}
		mustCode(t, err, engram.EINTERNAL)
	}
	p.Rewrite("", nil)
	p.Fault(func(n int, w http.ResponseWriter, r *http.Request) bool {
		if strings.Contains(fmt.Sprint(p.Requests()[n-1].Body["input"]), "note 2:") {
			answer(w, http.StatusBadRequest, nil, "input too long")
			return true
		}
		return false
	})
	vecs, err := e.Embed(context.Background(), texts(5))
	if vecs != nil || !strings.Contains(engram.ErrorMessage(err), "400 Bad Request: input too long") {
		t.Fatalf("a failing second batch: %d vectors, %v", len(vecs), err)
	}
	mustCode(t, err, engram.EUNAVAILABLE)
}

func TestEmbed_DimensionChange(t *testing.T) {
	p := newProxy(t)
	e, _ := mustEmbedder(t, EmbedderConfig{Config: Config{BaseURL: p.Base()}})
	if _, err := e.Embed(context.Background(), texts(1)); err != nil {
		t.Fatal(err)
	}
	p.Rewrite("", func(_ int, reply map[string]any) {
		d := reply["data"].([]any)[0].(map[string]any)
		d["embedding"] = d["embedding"].([]any)[:3]
	})
	_, err := e.Embed(context.Background(), texts(1))
	mustCode(t, err, engram.ECONFLICT)
}

// TestEmbed_RetryAfter: 429 with Retry-After in seconds and as a date is
// waited for exactly (the client's clock and sleep are injected), then the
// request goes through; a wait longer than MaxRetryAfter is not waited
// for, and the error says why.
func TestEmbed_RetryAfter(t *testing.T) {
	p := newProxy(t)
	e, w := mustEmbedder(t, EmbedderConfig{Config: Config{BaseURL: p.Base()}})
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	e.c.now = func() time.Time { return now }
	p.Fault(func(n int, w http.ResponseWriter, _ *http.Request) bool {
		switch n {
		case 1:
			answer(w, http.StatusTooManyRequests, map[string]string{"Retry-After": "7"}, "Rate limit reached for requests")
		case 2:
			answer(w, http.StatusTooManyRequests, map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, "slow down")
		case 3:
			answer(w, http.StatusServiceUnavailable, nil, "overloaded")
		default:
			return false
		}
		return true
	})
	if _, err := e.Embed(context.Background(), texts(2)); err != nil {
		t.Fatal(err)
	}
	if got, want := w.all(), []time.Duration{7 * time.Second, 90 * time.Second, DefaultRetryDelay}; !slices.Equal(got, want) {
		t.Errorf("waits %v, want %v (Retry-After honoured, then the backoff)", got, want)
	}
	if n := len(p.Requests()); n != 4 {
		t.Errorf("%d requests, want 4", n)
	}

	p.Fault(func(_ int, w http.ResponseWriter, _ *http.Request) bool {
		answer(w, http.StatusTooManyRequests, map[string]string{"Retry-After": "3600"}, "daily quota")
		return true
	})
	before := len(w.all())
	_, err := e.Embed(context.Background(), texts(1))
	mustCode(t, err, engram.EUNAVAILABLE)
	if msg := engram.ErrorMessage(err); !strings.Contains(msg, "asks to wait 1h0m0s") || !strings.Contains(msg, "daily quota") {
		t.Errorf("message %q", msg)
	}
	if len(w.all()) != before {
		t.Error("waited for a Retry-After longer than MaxRetryAfter")
	}
}

// TestEmbed_5xxGivesUp: a server that keeps failing is retried with a
// doubling wait, MaxRetries times, and the error counts the attempts.
func TestEmbed_5xxGivesUp(t *testing.T) {
	p := newProxy(t)
	e, w := mustEmbedder(t, EmbedderConfig{Config: Config{BaseURL: p.Base(), MaxRetries: 3}})
	p.Fault(func(_ int, w http.ResponseWriter, _ *http.Request) bool {
		answer(w, http.StatusBadGateway, nil, "upstream down")
		return true
	})
	_, err := e.Embed(context.Background(), texts(1))
	mustCode(t, err, engram.EUNAVAILABLE)
	if msg := engram.ErrorMessage(err); !strings.Contains(msg, "502 Bad Gateway: upstream down after 4 attempts") {
		t.Errorf("message %q", msg)
	}
	if got, want := w.all(), []time.Duration{DefaultRetryDelay, 2 * DefaultRetryDelay, 4 * DefaultRetryDelay}; !slices.Equal(got, want) {
		t.Errorf("waits %v, want %v", got, want)
	}
}

// TestEmbed_KeyRefused: 401 is not retried, says which variable holds the
// key, and never shows the key, even when the server echoes it.
func TestEmbed_KeyRefused(t *testing.T) {
	p := newProxy(t)
	const key = "sk-proj-SECRET-1234567890"
	e, w := mustEmbedder(t, EmbedderConfig{Config: Config{BaseURL: p.Base(), APIKey: key, KeyEnv: "MY_KEY"}})
	p.Fault(func(_ int, w http.ResponseWriter, _ *http.Request) bool {
		answer(w, http.StatusUnauthorized, nil, "Incorrect API key provided: "+key)
		return true
	})
	_, err := e.Embed(context.Background(), texts(1))
	mustCode(t, err, engram.EUNAVAILABLE)
	msg := err.Error()
	if strings.Contains(msg, key) || strings.Contains(msg, "SECRET") || !strings.Contains(msg, "$MY_KEY") || !strings.Contains(msg, "401 Unauthorized") {
		t.Errorf("message %q", msg)
	}
	if len(p.Requests()) != 1 || len(w.all()) != 0 {
		t.Errorf("401 retried: %d requests", len(p.Requests()))
	}
	e2, _ := mustEmbedder(t, EmbedderConfig{Config: Config{BaseURL: p.Base()}})
	if _, err := e2.Embed(context.Background(), texts(1)); !strings.Contains(engram.ErrorMessage(err), "set the API key in $OPENAI_API_KEY") {
		t.Errorf("no key: %v", err)
	}
}

// TestEmbed_UnknownModel: the real server's 404 for a model it lacks.
func TestEmbed_UnknownModel(t *testing.T) {
	e, w := mustEmbedder(t, EmbedderConfig{Config: Config{Model: "no-such-embedder"}})
	_, err := e.Embed(context.Background(), texts(1))
	mustCode(t, err, engram.EUNAVAILABLE)
	if msg := engram.ErrorMessage(err); !strings.Contains(msg, `model "no-such-embedder" is not available at http://`) || !strings.Contains(msg, "404") {
		t.Errorf("message %q", msg)
	}
	if len(w.all()) != 0 {
		t.Error("404 retried")
	}
}

func TestEmbed_Unreachable(t *testing.T) {
	e, w := mustEmbedder(t, EmbedderConfig{Config: Config{BaseURL: "http://" + closedPort(t) + "/v1", MaxRetries: 2}})
	_, err := e.Embed(context.Background(), texts(1))
	mustCode(t, err, engram.EUNAVAILABLE)
	if msg := engram.ErrorMessage(err); !strings.Contains(msg, "is not reachable after 3 attempts") {
		t.Errorf("message %q", msg)
	}
	if len(w.all()) != 2 {
		t.Errorf("waits %v", w.all())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Embed(ctx, texts(1)); !strings.Contains(fmt.Sprint(err), "context canceled") {
		t.Errorf("canceled: %v", err)
	}
}

func TestNewEmbedder_Invalid(t *testing.T) {
	for _, tc := range []struct {
		cfg   EmbedderConfig
		field string
	}{
		{EmbedderConfig{Config: Config{BaseURL: "ftp://x/v1", Model: "m"}}, "openai.base_url"},
		{EmbedderConfig{Config: Config{BaseURL: "http:///v1", Model: "m"}}, "openai.base_url"},
		{EmbedderConfig{Config: Config{BaseURL: "https://user:pw@api.example.com/v1", Model: "m"}}, "openai.base_url"},
		{EmbedderConfig{Config: Config{BaseURL: "https://api.example.com/v1?x=1", Model: "m"}}, "openai.base_url"},
		{EmbedderConfig{Config: Config{BaseURL: "http://localhost:99999/v1", Model: "m"}}, "openai.base_url"},
		{EmbedderConfig{Config: Config{Model: " "}}, "openai.model"},
		{EmbedderConfig{Config: Config{Model: "m", Timeout: -1}}, "openai.timeout"},
		{EmbedderConfig{Config: Config{Model: "m", APIKey: "a\nb"}}, "openai.api_key"},
		{EmbedderConfig{Config: Config{Model: "m"}, BatchSize: -1}, "openai.batch_size"},
	} {
		_, err := NewEmbedder(tc.cfg)
		if engram.ErrorCode(err) != engram.EINVALID || engram.ErrorField(err) != tc.field {
			t.Errorf("NewEmbedder(%+v) = %v, want EINVALID on %s", tc.cfg, err, tc.field)
		}
	}
	e, err := NewEmbedder(EmbedderConfig{Config: Config{Model: "text-embedding-3-small", BaseURL: "https://api.example.com/v1/"}})
	if err != nil || e.Host() != "https://api.example.com/v1" || e.batchSize != DefaultBatchSize {
		t.Fatalf("defaults: %v, %v", e, err)
	}
}
