package server_test

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/httpapi"
	"github.com/engram-dev/engram/server"
)

// TestOpenBackendAwaitsServer: a command run while a server holds the
// home's lock but does not answer yet (it is starting: serve.json missing,
// stale, or its health not ready) asks again until it answers, instead of
// failing on the lock after one try.
func TestOpenBackendAwaitsServer(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	cfg, err := server.LoadConfig(home, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	cfg.Embedder, cfg.Extractor = config.EmbedderNone, config.ExtractorNone
	// The lock, held as a starting server holds it.
	e, err := engine.Open(t.Context(), cfg.Config, quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	// Its address answers health 503 twice (one ask before the lock, one
	// after it, was all a command gave it), then 200.
	var asked atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/health" {
			http.NotFound(w, r)
			return
		}
		if asked.Add(1) <= 2 {
			http.Error(w, `{"error":{"code":"unavailable","message":"starting"}}`, http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"status":"ok"}`))
	}))
	defer ts.Close()
	if err := server.WriteServeInfo(home, strings.TrimPrefix(ts.URL, "http://")); err != nil {
		t.Fatal(err)
	}
	be, err := server.OpenBackend(t.Context(), cfg, quiet())
	if err != nil {
		t.Fatalf("OpenBackend while the server starts (asked %d times): %v", asked.Load(), err)
	}
	defer be.Close()
	if c, ok := be.(*httpapi.Client); !ok || c.Base() != ts.URL {
		t.Fatalf("OpenBackend: %T, want a client of the server", be)
	}
}
