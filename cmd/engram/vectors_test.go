package main_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-dev/engram/internal/testutil"
)

// testServers returns the real servers' settings (testutil.Servers).
var testServers = testutil.Servers

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

// TestReembedBogusModel: engram reembed names the model it cannot use.
func TestReembedBogusModel(t *testing.T) {
	if r := runCLI(t, filepath.Join(t.TempDir(), "home"), "", "reembed", "--model", "bogus"); r.code != 1 || !strings.Contains(r.stderr, `model: unknown model "bogus"`) {
		t.Errorf("engram reembed --model bogus: %+v", r)
	}
}
