package main_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenAICompatibleServer runs engram with embedder = "openai" and
// extractor = "openai" against the real Ollama server's OpenAI-compatible
// /v1 endpoints: turns are embedded there and recalled, the memory job
// extracts through /v1/chat/completions (the test chat model's weights are
// random: the job must succeed, its memories may be none), the doctor
// probes both, and the API key given in the environment is sent but never
// written to the home nor the logs.
func TestOpenAICompatibleServer(t *testing.T) {
	env := testServers(t, "ENGRAM_TEST_OLLAMA_HOST", "ENGRAM_TEST_OLLAMA_MODEL", "ENGRAM_TEST_OLLAMA_CHAT_MODEL")
	const key = "sk-never-on-disk-4242"
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, "embedder = \"openai\"\nextractor = \"openai\"\n"+
		"openai_base_url = \"http://"+env["ENGRAM_TEST_OLLAMA_HOST"]+"/v1\"\n"+
		"openai_model = \""+env["ENGRAM_TEST_OLLAMA_MODEL"]+"\"\n"+
		"openai_chat_model = \""+env["ENGRAM_TEST_OLLAMA_CHAT_MODEL"]+"\"\n"+
		"openai_api_key_env = \"ENGRAM_TEST_OPENAI_KEY\"\n")
	s := startServer(t, home, "ENGRAM_TEST_OPENAI_KEY="+key, "ENGRAM_LOG_LEVEL=debug")
	if r := runCLI(t, home, vectorTurns, "ingest", "-"); r.code != 0 {
		t.Fatalf("ingest: %+v", r)
	}
	resp, r := recallJSON(t, home, "which database did we choose")
	// The test model's weights are random: the keyword side finds the
	// turn, and the list holds no turn without evidence.
	if resp.Mode != "hybrid" || len(resp.Results) == 0 || len(resp.Results) > 3 ||
		!strings.Contains(resp.Results[0].Text, "PostgreSQL") || r.stderr != "" {
		t.Fatalf("recall with openai vectors: %+v %q", resp, r.stderr)
	}
	var h health
	if _, err := s.get(context.Background(), "/v1/health", &h); err != nil {
		t.Fatal(err)
	}
	if h.Vectors == nil || h.Vectors.Model != "openai:"+env["ENGRAM_TEST_OLLAMA_MODEL"] || h.Status != "ok" {
		t.Fatalf("health: %+v", h)
	}
	if r := runCLI(t, home, "", "jobs", "run", "l1-memories"); r.code != 0 {
		t.Fatalf("the memory job through /v1/chat/completions: %+v", r)
	}
	r = runCLI(t, home, "", "doctor", "--json")
	var rep struct {
		Checks []struct{ Name, Status, Message string } `json:"checks"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("doctor: %v\n%s", err, r.stdout)
	}
	seen := map[string]string{}
	for _, c := range rep.Checks {
		seen[c.Name] = c.Status
	}
	if seen["openai-embedder"] != "ok" || seen["openai-extractor"] != "ok" {
		t.Errorf("doctor checks %v:\n%s", seen, r.stdout)
	}
	s.stop(t)
	if strings.Contains(s.stderr.String(), key) {
		t.Error("the API key is in the server's log")
	}
	err := filepath.WalkDir(home, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err == nil && strings.Contains(string(b), key) {
			t.Errorf("the API key is written in %s", path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestOpenAIConfigErrors: the key is never read from config.toml, and the
// openai settings are checked before anything starts.
func TestOpenAIConfigErrors(t *testing.T) {
	for _, tc := range []struct{ toml, want string }{
		{"openai_api_key = \"sk-x\"\n", "the API key is never read from a file"},
		{"embedder = \"openai\"\nopenai_base_url = \"api.example.com\"\n", "openai_base_url:"},
		{"extractor = \"openai\"\nopenai_api_key_env = \"MY-KEY\"\n", `openai_api_key_env "MY-KEY"`},
		{"extractor = \"openai\"\nopenai_chat_model = \" \"\n", "openai_chat_model must name a chat model"},
		{"embedder = \"opneai\"\n", "want builtin, ollama, openai or none"},
	} {
		home := filepath.Join(t.TempDir(), "home")
		writeConfig(t, home, tc.toml)
		if r := runCLI(t, home, "", "stats"); r.code == 0 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want %q", tc.toml, r.code, r.stderr, tc.want)
		}
	}
}
