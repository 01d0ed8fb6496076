package main_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testServers returns the real Chroma URL and Ollama host and model that
// `make test` (scripts/testenv.sh) starts. Without them the test fails,
// unless -short asked to skip it.
func testServers(t *testing.T, need ...string) map[string]string {
	t.Helper()
	env := map[string]string{}
	for _, name := range need {
		v := os.Getenv(name)
		if v == "" {
			if testing.Short() {
				t.Skipf("%s unset: skipped with -short", name)
			}
			t.Fatalf("%s is not set: run `make test` (scripts/testenv.sh starts Chroma and Ollama), or -short to skip", name)
		}
		env[name] = v
	}
	return env
}

func writeConfig(t *testing.T, home, toml string) {
	t.Helper()
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
}

var vectorTurns = strings.Join([]string{
	`{"session":"s1","speaker":"Ana","content":"We decided to keep the API on port 30001","meta":{"n":1}}`,
	`{"session":"s1","speaker":"Bo","content":"The cat sat on the mat all afternoon"}`,
	`{"session":"s2","speaker":"Ana","content":"Our database will be PostgreSQL because of its JSONB support"}`,
}, "\n") + "\n"

type health struct {
	Status  string `json:"status"`
	Vectors *struct {
		Model       string `json:"model"`
		Backend     string `json:"backend"`
		EmbeddedSeq int64  `json:"embedded_seq"`
		ChromaLag   int64  `json:"chroma_lag"`
		Pending     string `json:"reembed_pending"`
		Reembed     *struct {
			Model, State string
		} `json:"reembed"`
	} `json:"vectors"`
	Problems []string `json:"problems"`
}

func recallJSON(t *testing.T, home string, args ...string) (recallResponse, result) {
	t.Helper()
	r := runCLI(t, home, "", append([]string{"recall", "--json"}, args...)...)
	if r.code != 0 {
		t.Fatalf("recall %v: %+v", args, r)
	}
	var resp struct {
		recallResponse
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &resp); err != nil {
		t.Fatal(err)
	}
	r.stderr = strings.Join(resp.Warnings, "\n")
	return resp.recallResponse, r
}

// TestShallowRecallBuiltin: with no configuration, recall embeds the query
// with the builtin embedder and searches the embedded vector index.
func TestShallowRecallBuiltin(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	if r := runCLI(t, home, vectorTurns, "ingest", "-"); r.code != 0 {
		t.Fatalf("ingest: %+v", r)
	}
	// Two of the three turns: the cat on the mat shares no word and is the
	// least similar (score 0), which no longer pads the list.
	resp, _ := recallJSON(t, home, "which database did we choose")
	if resp.Mode != "hybrid" || len(resp.Results) != 2 || !strings.Contains(resp.Results[0].Text, "PostgreSQL") {
		t.Fatalf("shallow recall: %+v", resp)
	}
	if len(resp.Results[0].Sources) != 1 || resp.Results[0].Sources[0].ID != resp.Results[0].ID {
		t.Errorf("a turn lists itself as its source: %+v", resp.Results[0])
	}
	resp, _ = recallJSON(t, home, "--mode", "keyword", "database")
	if resp.Mode != "keyword" || len(resp.Results) != 1 {
		t.Fatalf("keyword recall: %+v", resp)
	}
	// A trigger phrase runs deep; the CLI shows the phrase and the signals.
	r := runCLI(t, home, "", "recall", "--budget", "120", "认真回忆 database PostgreSQL")
	if r.code != 0 || !strings.Contains(r.stdout, `(deep recall: "认真回忆")`) || !strings.Contains(r.stdout, "signals: vector") ||
		!strings.Contains(r.stdout, "Relevant memories") {
		t.Fatalf("deep recall from the CLI: %+v", r)
	}
	// Deleting the palace loses nothing: turns and vectors come back from
	// the archive at the next open.
	for _, f := range []string{"palace.db", "palace.db-wal", "palace.db-shm"} {
		os.Remove(filepath.Join(home, f))
	}
	resp, _ = recallJSON(t, home, "which database did we choose")
	if resp.Mode != "hybrid" || len(resp.Results) != 2 || !strings.Contains(resp.Results[0].Text, "PostgreSQL") {
		t.Fatalf("shallow recall after deleting palace.db: %+v", resp)
	}
}

// TestReembedToOllama switches a home from the builtin embedder to a model
// on the real Ollama server: the config change alone never bricks the store
// (recall keeps the old vectors, health says a re-embed is pending), and
// `engram reembed` through the running server switches atomically.
func TestReembedToOllama(t *testing.T) {
	env := testServers(t, "ENGRAM_TEST_OLLAMA_HOST", "ENGRAM_TEST_OLLAMA_MODEL")
	home := filepath.Join(t.TempDir(), "home")
	if r := runCLI(t, home, vectorTurns, "ingest", "-"); r.code != 0 {
		t.Fatalf("ingest: %+v", r)
	}
	writeConfig(t, home, "embedder = \"ollama\"\nollama_host = \""+env["ENGRAM_TEST_OLLAMA_HOST"]+"\"\nollama_model = \""+env["ENGRAM_TEST_OLLAMA_MODEL"]+"\"\n")
	s := startServer(t, home)
	var h health
	if code, err := s.get(context.Background(), "/v1/health", &h); err != nil || code != 200 {
		t.Fatal(code, err)
	}
	if h.Vectors == nil || !strings.HasPrefix(h.Vectors.Model, "builtin-") || !strings.Contains(h.Vectors.Pending, "engram reembed") {
		t.Fatalf("health before re-embed: %+v", h.Vectors)
	}
	resp, _ := recallJSON(t, home, "which database did we choose")
	if resp.Mode != "hybrid" || len(resp.Results) == 0 {
		t.Fatalf("recall with the old vectors: %+v", resp)
	}

	r := runCLI(t, home, "", "reembed")
	if r.code != 0 || !strings.Contains(r.stderr, "ollama:"+env["ENGRAM_TEST_OLLAMA_MODEL"]+" is now the active model") {
		t.Fatalf("reembed: %+v", r)
	}
	h = health{}
	if _, err := s.get(context.Background(), "/v1/health", &h); err != nil {
		t.Fatal(err)
	}
	if h.Vectors.Model != "ollama:"+env["ENGRAM_TEST_OLLAMA_MODEL"] || h.Vectors.Pending != "" || h.Vectors.Reembed.State != "done" {
		t.Fatalf("health after re-embed: %+v", h.Vectors)
	}
	// New turns are embedded with the new model.
	if r := runCLI(t, home, `{"session":"s3","content":"the zebra crossing near the office"}`+"\n", "ingest", "-"); r.code != 0 {
		t.Fatalf("ingest: %+v", r)
	}
	resp, _ = recallJSON(t, home, "zebra crossing")
	if resp.Mode != "hybrid" || len(resp.Results) == 0 || !strings.Contains(resp.Results[0].Text, "zebra") {
		t.Fatalf("recall after re-embed: %+v", resp)
	}
	if r := runCLI(t, home, "", "reembed"); r.code != 1 || !strings.Contains(r.stderr, "already the active model") {
		t.Errorf("second reembed: %+v", r)
	}
	s.stop(t)

	// The Ollama server unreachable at start: engram still serves, recall
	// degrades to keyword search with a warning, health says why.
	s = startServer(t, home, "ENGRAM_OLLAMA_HOST=127.0.0.1:1")
	defer s.stop(t)
	h = health{}
	resp, r = recallJSON(t, home, "zebra")
	if resp.Mode != "keyword" || len(resp.Results) != 1 || !strings.Contains(r.stderr, "vector recall is off") {
		t.Fatalf("recall with Ollama down: %+v %q", resp, r.stderr)
	}
	if _, err := s.get(context.Background(), "/v1/health", &h); err != nil {
		t.Fatal(err)
	}
	if h.Status != "degraded" || len(h.Problems) == 0 || !strings.Contains(h.Problems[0], "not reachable") {
		t.Fatalf("health with Ollama down: %+v", h)
	}
}

// TestChromaBackend serves recall from a real ChromaDB server: vectors are
// kept in SQLite and pushed to Chroma, and shallow recall queries Chroma.
func TestChromaBackend(t *testing.T) {
	env := testServers(t, "ENGRAM_TEST_CHROMA_URL")
	home := filepath.Join(t.TempDir(), "home")
	// A database of its own on the shared server, so tests do not collide.
	writeConfig(t, home, "vector_index = \"chroma\"\nchroma_url = \""+env["ENGRAM_TEST_CHROMA_URL"]+"\"\n")
	s := startServer(t, home, "ENGRAM_CHROMA_DATABASE=test-"+strings.ReplaceAll(t.Name(), "/", "-")+"-"+time.Now().Format("150405.000000"))
	defer s.stop(t)
	if r := runCLI(t, home, vectorTurns, "ingest", "-"); r.code != 0 {
		t.Fatalf("ingest: %+v", r)
	}
	// Recall waits half a second for the vectors (the turns', then their
	// sessions' and scenes') to reach Chroma, and warns if they have not:
	// wait for them here, so that a loaded machine cannot turn that wait
	// into a failure. Then recall must answer without a warning.
	var h health
	waitFor(t, "the turn vectors in Chroma", func() bool {
		h = health{}
		_, err := s.get(context.Background(), "/v1/health", &h)
		return err == nil && h.Vectors != nil && h.Vectors.EmbeddedSeq == 3 && h.Vectors.ChromaLag == 0
	})
	var resp recallResponse
	var r result
	waitFor(t, "recall through Chroma without a warning", func() bool {
		resp, r = recallJSON(t, home, "which database did we choose")
		return r.stderr == ""
	})
	if resp.Mode != "hybrid" || len(resp.Results) != 2 || !strings.Contains(resp.Results[0].Text, "PostgreSQL") {
		t.Fatalf("shallow recall through chroma: %+v %q", resp, r.stderr)
	}
	if h.Vectors == nil || h.Vectors.Backend != "chroma" || h.Status != "ok" {
		t.Fatalf("health: %+v", h)
	}
}

// TestVectorsComeUpLater starts engram while its Chroma server is not
// there yet: recall answers by keyword with a warning, and once the server
// appears the vector side starts by itself, without a restart.
func TestVectorsComeUpLater(t *testing.T) {
	env := testServers(t, "ENGRAM_TEST_CHROMA_URL")
	home := filepath.Join(t.TempDir(), "home")
	late := freeAddr(t) // nothing listens here yet
	writeConfig(t, home, "vector_index = \"chroma\"\nchroma_url = \"http://"+late+"\"\nchroma_database = \"late-"+time.Now().Format("150405.000000")+"\"\n")
	s := startServer(t, home)
	defer s.stop(t)
	if r := runCLI(t, home, vectorTurns, "ingest", "-"); r.code != 0 {
		t.Fatalf("ingest while Chroma is missing: %+v", r)
	}
	resp, r := recallJSON(t, home, "which database did we choose")
	if resp.Mode != "keyword" || !strings.Contains(r.stderr, "vector recall is off") {
		t.Fatalf("recall without Chroma: %+v %q", resp, r.stderr)
	}

	// The Chroma server appears at the configured address (a proxy to the
	// real test server).
	target, err := url.Parse(env["ENGRAM_TEST_CHROMA_URL"])
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", late)
	if err != nil {
		t.Fatal(err)
	}
	proxy := &http.Server{Handler: httputil.NewSingleHostReverseProxy(target)}
	go proxy.Serve(ln)
	defer proxy.Close()

	// Until the vectors are in Chroma too: recall would wait only half a
	// second for them.
	waitFor(t, "the vector side to start after Chroma appeared", func() bool {
		var h health
		if _, err := s.get(context.Background(), "/v1/health", &h); err != nil {
			t.Fatal(err)
		}
		return h.Status == "ok" && h.Vectors != nil && h.Vectors.Model != "" && h.Vectors.EmbeddedSeq == 3 && h.Vectors.ChromaLag == 0
	})
	waitFor(t, "recall through Chroma without a warning", func() bool {
		resp, r = recallJSON(t, home, "which database did we choose")
		return r.stderr == ""
	})
	if resp.Mode != "hybrid" || len(resp.Results) != 2 {
		t.Fatalf("recall after Chroma appeared: %+v %q", resp, r.stderr)
	}
}

// TestReembedUnknownModel: POST /v1/reembed checks the model before it
// answers 202: a name that is no model is a 400 on model, an Ollama model
// the server lacks a 404 with the pull hint, an Ollama server that is down
// a 503; nothing starts, and health stays ok.
func TestReembedUnknownModel(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	s := startServer(t, home, "ENGRAM_OLLAMA_HOST=127.0.0.1:1")
	defer func() { s.stop(t) }() // the server running at the end
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
		code, err := s.post(context.Background(), "/v1/reembed", map[string]any{"model": c.model}, &out)
		if err != nil || code != c.status || out.Error.Code != c.code || !strings.Contains(out.Error.Message, c.words) ||
			c.status == 400 && out.Error.Field != "model" {
			t.Errorf("reembed %q: %d %v %+v, want %d %s with %q", c.model, code, err, out.Error, c.status, c.code, c.words)
		}
	}
	var h health
	if _, err := s.get(context.Background(), "/v1/health", &h); err != nil || h.Status != "ok" || h.Vectors == nil || h.Vectors.Reembed != nil {
		t.Fatalf("health after refused re-embeds: %+v %v", h, err)
	}
	if r := runCLI(t, home, "", "reembed", "--model", "bogus"); r.code != 1 || !strings.Contains(r.stderr, `model: unknown model "bogus"`) {
		t.Errorf("engram reembed --model bogus: %+v", r)
	}

	// With the real Ollama server: a model it lacks is a 404 naming the
	// pull; the test model is accepted.
	env := testServers(t, "ENGRAM_TEST_OLLAMA_HOST", "ENGRAM_TEST_OLLAMA_MODEL")
	s.stop(t)
	s = startServer(t, home, "ENGRAM_OLLAMA_HOST="+env["ENGRAM_TEST_OLLAMA_HOST"])
	var out errBody
	code, err := s.post(context.Background(), "/v1/reembed", map[string]any{"model": "ollama:engram-no-such-model"}, &out)
	if err != nil || code != 404 || out.Error.Field != "model" || !strings.Contains(out.Error.Message, "ollama pull engram-no-such-model") {
		t.Errorf("reembed a model the server lacks: %d %v %+v", code, err, out.Error)
	}
	var st struct{ Model, State string }
	code, err = s.post(context.Background(), "/v1/reembed", map[string]any{"model": "ollama:" + env["ENGRAM_TEST_OLLAMA_MODEL"]}, &st)
	if err != nil || code != 202 || st.State != "running" {
		t.Errorf("reembed the test model: %d %v %+v", code, err, st)
	}
}
