package openai

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/engram-dev/engram/internal/remotetest"
	"github.com/engram-dev/engram/internal/vectortest"
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
	cfg.BaseURL, cfg.Model = cmp.Or(cfg.BaseURL, base), cmp.Or(cfg.Model, model)
	e, err := NewEmbedder(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return e, recordWaits(tb, e.c)
}

// recordWaits makes c record its waits instead of sleeping, and closes it
// at the end of the test.
func recordWaits(tb testing.TB, c *client) *waits {
	w := &waits{}
	c.sleep = w.sleep
	tb.Cleanup(func() { _ = c.Close() })
	return w
}

// What the tests of the ollama and openai packages share.
var (
	closedPort = remotetest.ClosedPort
	mustCode   = remotetest.MustCode
	texts      = remotetest.Texts
	cosine     = vectortest.Cosine
)

// proxy is a remotetest.Proxy in front of the test server: it stands for an
// API that limits, fails or refuses.
type proxy struct{ *remotetest.Proxy }

// newProxy starts a proxy to the test server; it stops at the end of the
// test. Its base URL is Base().
func newProxy(tb testing.TB) proxy {
	tb.Helper()
	base, _, _ := testServer(tb)
	target, err := url.Parse(base)
	if err != nil {
		tb.Fatal(err)
	}
	target.Path = ""
	return proxy{remotetest.NewProxy(tb, target)}
}

// Base returns the proxy's /v1 base URL.
func (p proxy) Base() string { return p.URL() + "/v1" }

// answer writes an error reply in OpenAI's shape.
func answer(w http.ResponseWriter, status int, header map[string]string, message string) {
	for k, v := range header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": message, "type": "test", "code": nil}})
}
