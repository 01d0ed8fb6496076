package engine_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/internal/testutil"
)

// TestServeAnswersWhileVectorsLoad: a server answers health, recall and
// writes while its embedded vector index is still loading (held by the
// test's hook): health says the index is loading, recall answers by keyword with a warning saying so, and a turn
// written meanwhile gets its vector once the index is loaded.
func TestServeAnswersWhileVectorsLoad(t *testing.T) {
	ctx := t.Context()
	cfg := testConfig(t.TempDir())
	cfg.Embedder = engine.EmbedderBuiltin
	cfg.Addr = "127.0.0.1:0"

	// A home with vectors to load.
	e, err := engine.Open(ctx, cfg, quiet())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Ingest(ctx, []engram.Turn{
		{Namespace: "default", Session: "s1", Role: "user", Content: "The capybara in the garden ate all the lettuce"},
		{Namespace: "default", Session: "s1", Role: "user", Content: "We moved the greenhouse to the north side"},
	}); err != nil {
		t.Fatal(err)
	}
	if err := e.WaitVectors(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	reached, release := make(chan struct{}), make(chan struct{})
	engine.SetVectorLoadHook(t, func(ctx context.Context) {
		close(reached)
		select {
		case <-release:
		case <-ctx.Done():
		}
	})
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	// The server must start with the load held: were the load in its way,
	// StartServer would wait for the release, and the wait below fails.
	started := make(chan *engine.Server, 1)
	go func() {
		srv, err := engine.StartServer(ctx, cfg, quiet())
		if err != nil {
			t.Error(err)
		}
		started <- srv
	}()
	var srv *engine.Server
	testutil.WaitUntil(t, "the server to start while the vector index loads", func() bool {
		select {
		case srv = <-started:
			return true
		default:
			return false
		}
	})
	if srv == nil {
		t.FailNow()
	}
	defer srv.Close()
	<-reached
	base := "http://" + srv.Addr()

	health := func() engram.Health {
		t.Helper()
		var h engram.Health
		getJSON(t, base+"/v1/health", "", &h)
		return h
	}
	h := health()
	vi, ok := h.Indexes["vectors"]
	if !ok || vi.State != "loading" || vi.Loaded != 0 {
		t.Fatalf("health while loading: indexes %+v, want vectors loading, none read", h.Indexes)
	}
	if h.Status != "ok" {
		t.Errorf("health while loading: status %q, problems %q; loading is no problem", h.Status, h.Problems)
	}
	if _, ok := h.Indexes["keywords-turns"]; !ok {
		t.Errorf("health: indexes %+v, want the turns' keyword index", h.Indexes)
	}

	for _, mode := range []string{"shallow", "hybrid", "deep"} {
		var resp engram.RecallResponse
		getJSON(t, base+"/v1/recall", `{"query":"capybara lettuce","mode":"`+mode+`"}`, &resp)
		if len(resp.Results) == 0 || !strings.Contains(resp.Results[0].Text, "capybara") {
			t.Errorf("%s recall while loading: %+v, want the capybara turn by keyword", mode, resp.Results)
		}
		if !strings.Contains(strings.Join(resp.Warnings, "; "), "still loading") {
			t.Errorf("%s recall while loading: warnings %q, want one saying the vector index is loading", mode, resp.Warnings)
		}
	}

	// A write while loading is acknowledged, and embedded once loaded.
	var ing engram.IngestResult
	getJSON(t, base+"/v1/turns", `{"session":"s2","content":"The heron fishes at the pond every dawn"}`, &ing)
	if len(ing.Turns) != 1 {
		t.Fatalf("write while loading: %+v", ing)
	}
	close(release)
	testutil.WaitUntil(t, "the vector index to load and embed the new turn", func() bool {
		h := health()
		return h.Indexes["vectors"].State == "ready" && h.Vectors != nil && h.Vectors.Lag == 0 && h.Vectors.EmbeddedSeq == h.ArchiveSeq
	})
	// The load reads every vector in SQLite when it starts: the two
	// turns', and those the layer jobs wrote (a session's units).
	if vi := health().Indexes["vectors"]; vi.Loaded < 2 || vi.Loaded != vi.Total {
		t.Errorf("health once loaded: %+v, want every vector read, the two turns' at least", vi)
	}
	// Shallow recall searches the vectors alone: the new turn is found
	// by meaning, with no warning.
	var resp engram.RecallResponse
	getJSON(t, base+"/v1/recall", `{"query":"a bird catching fish in the morning","mode":"shallow","k":1}`, &resp)
	if len(resp.Warnings) > 0 {
		t.Errorf("recall once loaded: warnings %q", resp.Warnings)
	}
	if len(resp.Results) != 1 || resp.Results[0].ID != ing.Turns[0].ID {
		t.Errorf("recall once loaded: %+v, want the turn written while loading", resp.Results)
	}
}

// getJSON sends body (a POST) or nothing (a GET) to url and decodes the
// 2xx answer into v.
func getJSON(t *testing.T, url, body string, v any) {
	t.Helper()
	method, headers := http.MethodGet, map[string]string{}
	if body != "" {
		method, headers["Content-Type"] = http.MethodPost, "application/json"
	}
	resp := testutil.Request(t, method, url, body, headers)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, raw)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s %s: %v: %s", method, url, err, raw)
	}
}
