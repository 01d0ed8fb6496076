package ollama

import (
	"cmp"
	"net/url"
	"os"
	"testing"

	"github.com/engram-dev/engram/internal/remotetest"
	"github.com/engram-dev/engram/internal/vectortest"
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
		cfg.Host, cfg.Model = cmp.Or(cfg.Host, host), cmp.Or(cfg.Model, model)
	}
	e, err := NewEmbedder(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = e.Close() })
	return e
}

// What the tests of the ollama and openai packages share.
type proxy = remotetest.Proxy

var (
	startProxy = remotetest.StartProxy
	closedPort = remotetest.ClosedPort
	hang       = remotetest.Hang
	mustCode   = remotetest.MustCode
	texts      = remotetest.Texts
	cosine     = vectortest.Cosine
)

// newProxy starts a proxy to the test server; it stops at the end of the
// test.
func newProxy(tb testing.TB) *proxy {
	tb.Helper()
	return remotetest.NewProxy(tb, testTarget(tb))
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
