package server_test

import (
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/server"
)

// vectorTurns are three turns, one about the database.
var vectorTurns = map[string]any{"turns": []map[string]any{
	{"session": "s1", "speaker": "Ana", "content": "We decided to keep the API on port 30001", "meta": map[string]any{"n": 1}},
	{"session": "s1", "speaker": "Bo", "content": "The cat sat on the mat all afternoon"},
	{"session": "s2", "speaker": "Ana", "content": "Our database will be PostgreSQL because of its JSONB support"},
}}

// ingestVectorTurns posts vectorTurns to s.
func ingestVectorTurns(t *testing.T, s *server.Server) {
	t.Helper()
	if code := call(t, s, "POST", "/v1/turns", vectorTurns, nil); code != 201 {
		t.Fatalf("POST /v1/turns: %d", code)
	}
}

// recallDB asks s which database was chosen.
func recallDB(t *testing.T, s *server.Server) engram.RecallResponse {
	t.Helper()
	var resp engram.RecallResponse
	if code := call(t, s, "POST", "/v1/recall", map[string]any{"query": "which database did we choose"}, &resp); code != 200 {
		t.Fatalf("POST /v1/recall: %d", code)
	}
	return resp
}

// TestChromaBackend serves recall from a real ChromaDB server: vectors are
// kept in SQLite and pushed to Chroma, and shallow recall queries Chroma.
func TestChromaBackend(t *testing.T) {
	env := testutil.Servers(t, "ENGRAM_TEST_CHROMA_URL")
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, "vector_index = \"chroma\"\nchroma_url = \""+env["ENGRAM_TEST_CHROMA_URL"]+"\"\n")
	// A database of its own on the shared server, so tests do not collide.
	s := startServer(t, home, map[string]string{"ENGRAM_CHROMA_DATABASE": "test-" + strings.ReplaceAll(t.Name(), "/", "-") + "-" + time.Now().Format("150405.000000")})
	ingestVectorTurns(t, s)
	// Recall waits half a second for the vectors (the turns', then their
	// sessions' and scenes') to reach Chroma, and warns if they have not:
	// wait for them here, so that a loaded machine cannot turn that wait
	// into a failure. Then recall must answer without a warning.
	var h engram.Health
	testutil.WaitUntil(t, "the turn vectors in Chroma", func() bool {
		h = engram.Health{}
		return call(t, s, "GET", "/v1/health", nil, &h) == 200 && h.Vectors != nil && h.Vectors.EmbeddedSeq == 3 && h.Vectors.ChromaLag == 0
	})
	var resp engram.RecallResponse
	testutil.WaitUntil(t, "recall through Chroma without a warning", func() bool {
		resp = recallDB(t, s)
		return len(resp.Warnings) == 0
	})
	if resp.Mode != "hybrid" || len(resp.Results) != 2 || !strings.Contains(resp.Results[0].Text, "PostgreSQL") {
		t.Fatalf("shallow recall through chroma: %+v", resp)
	}
	if h.Vectors == nil || h.Vectors.Backend != "chroma" || h.Status != "ok" {
		t.Fatalf("health: %+v", h)
	}
}

// TestVectorsComeUpLater starts engram while its Chroma server is not
// there yet: recall answers by keyword with a warning, and once the server
// appears the vector side starts by itself, without a restart.
func TestVectorsComeUpLater(t *testing.T) {
	env := testutil.Servers(t, "ENGRAM_TEST_CHROMA_URL")
	home := filepath.Join(t.TempDir(), "home")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	late := ln.Addr().String() // nothing listens here until the proxy serves ln
	writeConfig(t, home, "vector_index = \"chroma\"\nchroma_url = \"http://"+late+"\"\nchroma_database = \"late-"+time.Now().Format("150405.000000")+"\"\n")
	ln.Close()
	s := startServer(t, home, nil)
	ingestVectorTurns(t, s)
	resp := recallDB(t, s)
	if resp.Mode != "keyword" || !strings.Contains(strings.Join(resp.Warnings, "\n"), "vector recall is off") {
		t.Fatalf("recall without Chroma: %+v", resp)
	}

	// The Chroma server appears at the configured address (a proxy to the
	// real test server).
	target, err := url.Parse(env["ENGRAM_TEST_CHROMA_URL"])
	if err != nil {
		t.Fatal(err)
	}
	if ln, err = net.Listen("tcp", late); err != nil {
		t.Fatal(err)
	}
	proxy := &http.Server{Handler: httputil.NewSingleHostReverseProxy(target)}
	go proxy.Serve(ln)
	defer proxy.Close()

	// Until the vectors are in Chroma too: recall would wait only half a
	// second for them.
	testutil.WaitUntil(t, "the vector side to start after Chroma appeared", func() bool {
		var h engram.Health
		call(t, s, "GET", "/v1/health", nil, &h)
		return h.Status == "ok" && h.Vectors != nil && h.Vectors.Model != "" && h.Vectors.EmbeddedSeq == 3 && h.Vectors.ChromaLag == 0
	})
	testutil.WaitUntil(t, "recall through Chroma without a warning", func() bool {
		resp = recallDB(t, s)
		return len(resp.Warnings) == 0
	})
	if resp.Mode != "hybrid" || len(resp.Results) != 2 {
		t.Fatalf("recall after Chroma appeared: %+v", resp)
	}
}

// TestReembedUnknownModel: POST /v1/reembed checks the model before it
// answers 202: a name that is no model is a 400 on model, an Ollama model
// the server lacks a 404 with the pull hint, an Ollama server that is down
// a 503; nothing starts, and health stays ok.
func TestReembedUnknownModel(t *testing.T) {
	s := startServer(t, filepath.Join(t.TempDir(), "home"), map[string]string{"ENGRAM_OLLAMA_HOST": "127.0.0.1:1"})
	type errBody struct {
		Error struct{ Code, Message, Field string }
	}
	cases := []struct {
		model  string
		status int
		code   string
		words  string
	}{
		{"bogus", 400, "invalid", "unknown model"},
		{"builtin:foo", 400, "invalid", "not this engram's builtin embedder"},
		{"builtin-v0-12", 400, "invalid", "not this engram's builtin embedder"},
		{"ollama:has space", 400, "invalid", "not an ollama model name"},
		{"ollama:bge-m3", 503, "unavailable", "not reachable"},
	}
	for _, c := range cases {
		var out errBody
		code := call(t, s, "POST", "/v1/reembed", map[string]any{"model": c.model}, &out)
		if code != c.status || out.Error.Code != c.code || !strings.Contains(out.Error.Message, c.words) ||
			c.status == 400 && out.Error.Field != "model" {
			t.Errorf("reembed %q: %d %+v, want %d %s with %q", c.model, code, out.Error, c.status, c.code, c.words)
		}
	}
	var h engram.Health
	if call(t, s, "GET", "/v1/health", nil, &h); h.Status != "ok" || h.Vectors == nil || h.Vectors.Reembed != nil {
		t.Fatalf("health after refused re-embeds: %+v", h)
	}

	// With the real Ollama server: a model it lacks is a 404 naming the
	// pull; the test model is accepted.
	env := testutil.Servers(t, "ENGRAM_TEST_OLLAMA_HOST", "ENGRAM_TEST_OLLAMA_MODEL")
	s = startServer(t, filepath.Join(t.TempDir(), "home"), map[string]string{"ENGRAM_OLLAMA_HOST": env["ENGRAM_TEST_OLLAMA_HOST"]})
	var out errBody
	code := call(t, s, "POST", "/v1/reembed", map[string]any{"model": "ollama:engram-no-such-model"}, &out)
	if code != 404 || out.Error.Field != "model" || !strings.Contains(out.Error.Message, "ollama pull engram-no-such-model") {
		t.Errorf("reembed a model the server lacks: %d %+v", code, out.Error)
	}
	var st struct{ Model, State string }
	if code = call(t, s, "POST", "/v1/reembed", map[string]any{"model": "ollama:" + env["ENGRAM_TEST_OLLAMA_MODEL"]}, &st); code != 202 || st.State != "running" {
		t.Errorf("reembed the test model: %d %+v", code, st)
	}
}

// TestReembedHereOrOnTheServer: server.Reembed embeds the turns on the
// home opened here when no server runs, and through the running server
// when one does, showing the progress either way; the active model again
// is refused.
func TestReembedHereOrOnTheServer(t *testing.T) {
	ctx := t.Context()
	env := map[string]string{"ENGRAM_EMBEDDER": "none"}
	for _, served := range []bool{false, true} {
		cfg := servedOrNot(t, served, env)
		var shown []engram.ReembedStatus
		st, remote, err := server.Reembed(ctx, cfg, "builtin", quiet(), func(st engram.ReembedStatus, remote bool) {
			if remote != served {
				t.Errorf("served %v: shown as remote %v", served, remote)
			}
			shown = append(shown, st)
		})
		if err != nil || remote != served || st.State != engram.ReembedDone || !strings.HasPrefix(st.Model, "builtin") {
			t.Fatalf("served %v: Reembed = %+v, remote %v, %v", served, st, remote, err)
		}
		if len(shown) == 0 || shown[0].Total != 3 || shown[0].Model != st.Model {
			t.Errorf("served %v: the progress shown: %+v", served, shown)
		}
		if _, _, err := server.Reembed(ctx, cfg, "builtin", quiet(), func(engram.ReembedStatus, bool) {}); served && engram.ErrorCode(err) != engram.ECONFLICT {
			t.Errorf("the server's active model again: %v", err) // here, config.toml's embedder (none) is the active one
		}
		if _, _, err := server.Reembed(ctx, cfg, "bogus", quiet(), func(engram.ReembedStatus, bool) {}); engram.ErrorCode(err) != engram.EINVALID {
			t.Errorf("served %v: a bogus model: %v", served, err)
		}
	}
}

// TestReindexVectorsHereOrOnTheServer: server.ReindexVectors rebuilds the
// vector index on the home opened here when no server runs, and through
// the running server when one does; a home without an embedder is refused.
func TestReindexVectorsHereOrOnTheServer(t *testing.T) {
	ctx := t.Context()
	for _, served := range []bool{false, true} {
		cfg := servedOrNot(t, served, nil)
		phases := 0
		st, remote, err := server.ReindexVectors(ctx, cfg, true, quiet(), func(st engram.ReindexStatus, remote bool) {
			if remote != served {
				t.Errorf("served %v: shown as remote %v", served, remote)
			}
			phases++
		})
		if err != nil || remote != served || st.State != engram.ReindexDone || st.Ended.IsZero() || st.Embedded < 3 || phases == 0 {
			t.Fatalf("served %v: ReindexVectors = %+v, remote %v, %v (%d statuses shown)", served, st, remote, err, phases)
		}
	}
	home := filepath.Join(t.TempDir(), "none")
	env := map[string]string{"ENGRAM_EMBEDDER": "none"}
	cfg, err := server.LoadConfig(home, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := server.ReindexVectors(ctx, cfg, false, quiet(), func(engram.ReindexStatus, bool) {}); err == nil || !strings.Contains(err.Error(), "embedder = none") {
		t.Errorf("without an embedder: %v", err)
	}
}

// servedOrNot starts a server on a new home (with env) and ingests turns
// with vectors, then stops it (served false) or leaves it running and
// recorded in serve.json as engram serve does (served true): the two
// cases of a command that runs on the home or through its server. It
// returns the home's config.
func servedOrNot(t *testing.T, served bool, env map[string]string) server.Config {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	s, stop := serve(t, home, env)
	ingestVectorTurns(t, s)
	if !served {
		stop()
	} else if err := server.WriteServeInfo(home, s.Addr()); err != nil {
		t.Fatal(err)
	}
	cfg, err := server.LoadConfig(home, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
