package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/engram-dev/engram"
)

// The tests run against the real Ollama server of scripts/testenv.sh, whose
// /v1 endpoints are OpenAI-compatible, with the generated test models.
const (
	envHost      = "ENGRAM_TEST_OLLAMA_HOST"       // e.g. 127.0.0.1:11435
	envModel     = "ENGRAM_TEST_OLLAMA_MODEL"      // the embedding model
	envChatModel = "ENGRAM_TEST_OLLAMA_CHAT_MODEL" // the chat model (random weights)
)

// testServer returns the test server's /v1 base URL and its embedding and
// chat models. Without them, -short skips the test and a full run fails: a
// missing server must never pass silently.
func testServer(tb testing.TB) (base, embedModel, chatModel string) {
	tb.Helper()
	host, embedModel, chatModel := os.Getenv(envHost), os.Getenv(envModel), os.Getenv(envChatModel)
	if host != "" && embedModel != "" && chatModel != "" {
		return "http://" + host + "/v1", embedModel, chatModel
	}
	if testing.Short() {
		tb.Skipf("%s, %s and %s not set: tests against the Ollama server skipped in -short mode", envHost, envModel, envChatModel)
	}
	tb.Fatalf("Ollama test server not configured: run `make test` (it starts one) or scripts/ollama.sh up PORT and export %s, %s and %s; -short skips",
		envHost, envModel, envChatModel)
	return "", "", ""
}

// waits records the waits of a client instead of sleeping: the injected
// clock of the retry tests.
type waits struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waits) sleep(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.d = append(w.d, d)
	return ctx.Err()
}

func (w *waits) all() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.d...)
}

// mustEmbedder returns an Embedder for cfg, its server and model the test
// server's where cfg leaves them empty, that records its waits.
func mustEmbedder(tb testing.TB, cfg EmbedderConfig) (*Embedder, *waits) {
	tb.Helper()
	base, model, _ := testServer(tb)
	if cfg.BaseURL == "" {
		cfg.BaseURL = base
	}
	if cfg.Model == "" {
		cfg.Model = model
	}
	e, err := NewEmbedder(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	w := &waits{}
	e.c.sleep = w.sleep
	tb.Cleanup(func() { _ = e.Close() })
	return e, w
}

// proxy is a real HTTP server in front of the test server that records the
// requests it sees and, through fault, can misbehave on any of them: it
// stands for an API that limits, fails or refuses, the process edge the
// retry and error tests need to break. Everything it does not answer
// itself goes to the real server.
type proxy struct {
	srv *httptest.Server
	rp  *httputil.ReverseProxy

	mu       sync.Mutex
	requests []proxied
	// fault, when set, sees every request first (n counts from 1); when it
	// returns true it has answered and the request is not forwarded.
	fault func(n int, w http.ResponseWriter, r *http.Request) bool
	// rewrite, when set, may change the server's decoded JSON reply.
	rewrite func(n int, path string, reply map[string]any)
}

// proxied is what the proxy saw of one request.
type proxied struct {
	Method, Path, Auth string
	Body               map[string]any
}

// newProxy starts a proxy to the test server; it stops at the end of the
// test. Its base URL is Base().
func newProxy(tb testing.TB) *proxy {
	tb.Helper()
	base, _, _ := testServer(tb)
	target, err := url.Parse(base)
	if err != nil {
		tb.Fatal(err)
	}
	target.Path = ""
	p := &proxy{rp: httputil.NewSingleHostReverseProxy(target)}
	p.rp.ModifyResponse = p.modify
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	tb.Cleanup(p.srv.Close)
	return p
}

// Base returns the proxy's /v1 base URL.
func (p *proxy) Base() string { return p.srv.URL + "/v1" }

func (p *proxy) Fault(f func(n int, w http.ResponseWriter, r *http.Request) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fault = f
}

func (p *proxy) Rewrite(f func(n int, path string, reply map[string]any)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rewrite = f
}

func (p *proxy) Requests() []proxied {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]proxied(nil), p.requests...)
}

func (p *proxy) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	seen := proxied{Method: r.Method, Path: r.URL.Path, Auth: r.Header.Get("Authorization")}
	_ = json.Unmarshal(body, &seen.Body)
	p.mu.Lock()
	p.requests = append(p.requests, seen)
	n := len(p.requests)
	fault := p.fault
	p.mu.Unlock()
	if fault != nil && fault(n, w, r) {
		return
	}
	r.Header.Set("X-Proxy-Request", strconv.Itoa(n))
	p.rp.ServeHTTP(w, r)
}

func (p *proxy) modify(resp *http.Response) error {
	p.mu.Lock()
	rewrite := p.rewrite
	p.mu.Unlock()
	if rewrite == nil || resp.StatusCode != http.StatusOK {
		return nil
	}
	n, _ := strconv.Atoi(resp.Request.Header.Get("X-Proxy-Request"))
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	var reply map[string]any
	if err := json.Unmarshal(body, &reply); err != nil {
		return err
	}
	rewrite(n, resp.Request.URL.Path, reply)
	if body, err = json.Marshal(reply); err != nil {
		return err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	return nil
}

// answer writes an error reply in OpenAI's shape.
func answer(w http.ResponseWriter, status int, header map[string]string, message string) {
	for k, v := range header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": message, "type": "test", "code": nil}})
}

// mustCode fails the test unless err is an *engram.Error with code.
func mustCode(tb testing.TB, err error, code string) {
	tb.Helper()
	if err == nil {
		tb.Fatalf("no error, want %s", code)
	}
	var ee *engram.Error
	if !errors.As(err, &ee) || ee.Code != code {
		tb.Fatalf("error %q has code %q, want %s", err, engram.ErrorCode(err), code)
	}
}

// closedPort returns a loopback address where nothing listens.
func closedPort(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		tb.Fatal(err)
	}
	return addr
}

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}
