package ollama

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strconv"
	"sync"
	"testing"
)

// Environment variables that point the tests at a running server, as printed
// by scripts/ollama.sh up PORT.
const (
	EnvHost  = "ENGRAM_TEST_OLLAMA_HOST"  // e.g. 127.0.0.1:11435
	EnvModel = "ENGRAM_TEST_OLLAMA_MODEL" // e.g. engram-test-embed
)

// testServer returns the test server's address and embedding model. Without
// them, -short skips the test and a full run fails: a missing server must
// never pass silently.
func testServer(tb testing.TB) (host, model string) {
	tb.Helper()
	host, model = os.Getenv(EnvHost), os.Getenv(EnvModel)
	if host != "" && model != "" {
		return host, model
	}
	if testing.Short() {
		tb.Skipf("%s and %s not set: Ollama tests skipped in -short mode (scripts/ollama.sh up PORT starts a server)", EnvHost, EnvModel)
	}
	tb.Fatal("Ollama test server not configured: run `make test` (it starts one) or scripts/ollama.sh up PORT and export ENGRAM_TEST_OLLAMA_HOST/ENGRAM_TEST_OLLAMA_MODEL; -short skips")
	return "", ""
}

// MustNewEmbedder returns an Embedder for cfg, with Host and Model taken
// from the test server where cfg leaves them empty. It is closed at the end
// of the test.
func MustNewEmbedder(tb testing.TB, cfg Config) *Embedder {
	tb.Helper()
	if cfg.Host == "" || cfg.Model == "" {
		host, model := testServer(tb)
		if cfg.Host == "" {
			cfg.Host = host
		}
		if cfg.Model == "" {
			cfg.Model = model
		}
	}
	e, err := NewEmbedder(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = e.Close() })
	return e
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

// proxy is a real HTTP server in front of the test server that records the
// requests it sees and, through fault, can misbehave on any of them: the
// process edge a test needs to break.
type proxy struct {
	srv *httptest.Server
	rp  *httputil.ReverseProxy

	mu       sync.Mutex
	requests []proxied
	// fault, when set, sees every request first (n counts from 1); when it
	// returns true it has answered and the request is not forwarded.
	fault func(n int, w http.ResponseWriter, r *http.Request) bool
	// rewrite, when set, may change the server's decoded /api/embed reply.
	rewrite func(n int, reply map[string]any)
}

// proxied is what the proxy saw of one request.
type proxied struct {
	Path   string
	Inputs []string // the texts of an /api/embed request
}

// newProxy starts a proxy to the test server; it stops at the end of the
// test.
func newProxy(tb testing.TB) *proxy {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p := startProxy(testTarget(tb), l)
	tb.Cleanup(p.Close)
	return p
}

// testTarget returns the test server's base URL.
func testTarget(tb testing.TB) *url.URL {
	tb.Helper()
	host, _ := testServer(tb)
	u, err := ParseHost(host)
	if err != nil {
		tb.Fatal(err)
	}
	return u
}

// startProxy serves a proxy to target on l until Close.
func startProxy(target *url.URL, l net.Listener) *proxy {
	p := &proxy{rp: httputil.NewSingleHostReverseProxy(target)}
	p.rp.ModifyResponse = p.modify
	p.srv = httptest.NewUnstartedServer(http.HandlerFunc(p.serve))
	p.srv.Listener = l
	p.srv.Start()
	return p
}

// Close stops the proxy.
func (p *proxy) Close() { p.srv.Close() }

// Fault sets the proxy's fault; see proxy.fault.
func (p *proxy) Fault(f func(n int, w http.ResponseWriter, r *http.Request) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fault = f
}

// Rewrite sets the proxy's reply rewriter; see proxy.rewrite.
func (p *proxy) Rewrite(f func(n int, reply map[string]any)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rewrite = f
}

// Host returns the proxy's address, for Config.Host.
func (p *proxy) Host() string { return p.srv.Listener.Addr().String() }

// Requests returns what the proxy has seen so far.
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
	seen := proxied{Path: r.URL.Path}
	if r.URL.Path == "/api/embed" {
		var req struct {
			Input []string `json:"input"`
		}
		if err := json.Unmarshal(body, &req); err == nil {
			seen.Inputs = req.Input
		}
	}
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
	if rewrite == nil || resp.Request.URL.Path != "/api/embed" || resp.StatusCode != http.StatusOK {
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
	rewrite(n, reply)
	if body, err = json.Marshal(reply); err != nil {
		return err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	return nil
}

// hang answers nothing until the client gives up.
func hang(_ int, _ http.ResponseWriter, r *http.Request) bool {
	<-r.Context().Done()
	return true
}
