package server_test

import (
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/server"
)

// TestReembedToOllama switches a home from the builtin embedder to a model
// on the real Ollama server: the config change alone never bricks the store
// (recall keeps the old vectors, health says a re-embed is pending), and a
// re-embed through the running server switches atomically.
func TestReembedToOllama(t *testing.T) {
	env := testutil.Servers(t, "ENGRAM_TEST_OLLAMA_HOST", "ENGRAM_TEST_OLLAMA_MODEL")
	ctx := t.Context()
	home := filepath.Join(t.TempDir(), "home")
	s, stop := serve(t, home, nil)
	ingestVectorTurns(t, s)
	stop()
	writeConfig(t, home, "embedder = \"ollama\"\nollama_host = \""+env["ENGRAM_TEST_OLLAMA_HOST"]+"\"\nollama_model = \""+env["ENGRAM_TEST_OLLAMA_MODEL"]+"\"\n")
	s, stop = serve(t, home, nil)
	h := health(t, s)
	if h.Vectors == nil || !strings.HasPrefix(h.Vectors.Model, "builtin-") || !strings.Contains(h.Vectors.Pending, "engram reembed") {
		t.Fatalf("health before re-embed: %+v", h.Vectors)
	}
	if resp := recallDB(t, s); resp.Mode != "hybrid" || len(resp.Results) == 0 {
		t.Fatalf("recall with the old vectors: %+v", resp)
	}

	if err := server.WriteServeInfo(home, s.Addr()); err != nil { // as engram serve does
		t.Fatal(err)
	}
	cfg, err := server.LoadConfig(home, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	c := server.Discover(ctx, cfg)
	if c == nil {
		t.Fatal("no server found for the home")
	}
	want := "ollama:" + env["ENGRAM_TEST_OLLAMA_MODEL"]
	if _, err := c.StartReembed(ctx, ""); err != nil {
		t.Fatalf("reembed: %v", err)
	}
	if st, err := c.WaitReembed(ctx, 10*time.Millisecond, func(engram.ReembedStatus) {}); err != nil || st.State != engram.ReembedDone || st.Model != want {
		t.Fatalf("reembed: %+v %v", st, err)
	}
	h = health(t, s)
	if h.Vectors.Model != want || h.Vectors.Pending != "" || h.Vectors.Reembed.State != "done" {
		t.Fatalf("health after re-embed: %+v", h.Vectors)
	}
	// New turns are embedded with the new model.
	postTurns(t, s, map[string]any{"session": "s3", "content": "the zebra crossing near the office"})
	if resp := recallHTTP(t, s, "", "zebra crossing"); resp.Mode != "hybrid" || len(resp.Results) == 0 || !strings.Contains(resp.Results[0].Text, "zebra") {
		t.Fatalf("recall after re-embed: %+v", resp)
	}
	if _, err := c.StartReembed(ctx, ""); err == nil || !strings.Contains(err.Error(), "already the active model") {
		t.Errorf("second reembed: %v", err)
	}
	stop()
	if err := server.RemoveServeInfo(home); err != nil {
		t.Fatal(err)
	}

	// The Ollama server unreachable at start: engram still serves, recall
	// degrades to keyword search with a warning, health says why.
	s = startServer(t, home, map[string]string{"ENGRAM_OLLAMA_HOST": "127.0.0.1:1"})
	resp := recallHTTP(t, s, "", "zebra")
	if resp.Mode != "keyword" || len(resp.Results) != 1 || !strings.Contains(strings.Join(resp.Warnings, "\n"), "vector recall is off") {
		t.Fatalf("recall with Ollama down: %+v", resp)
	}
	if h := health(t, s); h.Status != "degraded" || len(h.Problems) == 0 || !strings.Contains(h.Problems[0], "not reachable") {
		t.Fatalf("health with Ollama down: %+v", h)
	}
}

// TestOpenAICompatibleServer runs engram against Ollama's OpenAI-compatible
// /v1 endpoints: turns are embedded there and recalled, the memory job
// extracts through /v1/chat/completions (the test chat model's weights are
// random: the job must succeed, its memories may be none), the doctor
// probes both, and the API key given in the environment is sent but never
// written to the home nor the logs.
func TestOpenAICompatibleServer(t *testing.T) {
	env := testutil.Servers(t, "ENGRAM_TEST_OLLAMA_HOST", "ENGRAM_TEST_OLLAMA_MODEL", "ENGRAM_TEST_OLLAMA_CHAT_MODEL")
	const key = "sk-never-on-disk-4242"
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, "embedder = \"openai\"\nextractor = \"openai\"\n"+
		"openai_base_url = \"http://"+env["ENGRAM_TEST_OLLAMA_HOST"]+"/v1\"\n"+
		"openai_model = \""+env["ENGRAM_TEST_OLLAMA_MODEL"]+"\"\n"+
		"openai_chat_model = \""+env["ENGRAM_TEST_OLLAMA_CHAT_MODEL"]+"\"\n"+
		"openai_api_key_env = \"ENGRAM_TEST_OPENAI_KEY\"\n")
	var log lockedBuffer
	s, stop := serveLogged(t, home, map[string]string{"ENGRAM_TEST_OPENAI_KEY": key},
		slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug})))
	ingestVectorTurns(t, s)
	// The test model's weights are random: the keyword side finds the
	// turn, and the list holds no turn without evidence.
	if resp := recallDB(t, s); resp.Mode != "hybrid" || len(resp.Results) == 0 || len(resp.Results) > 3 ||
		!strings.Contains(resp.Results[0].Text, "PostgreSQL") || len(resp.Warnings) > 0 {
		t.Fatalf("recall with openai vectors: %+v", resp)
	}
	if h := health(t, s); h.Vectors == nil || h.Vectors.Model != "openai:"+env["ENGRAM_TEST_OLLAMA_MODEL"] || h.Status != "ok" {
		t.Fatalf("health: %+v", h)
	}
	// A new home's jobs are overdue: the server's own run of the memory
	// job may be in flight (a run asked for meanwhile is a 409); the test
	// waits for it to end and asks again.
	var st engram.JobStatus
	for {
		code := call(t, s, "POST", "/v1/jobs/l1-memories/run", map[string]any{}, &st)
		if code == http.StatusConflict {
			testutil.WaitUntil(t, "the server's own run of the memory job to end", func() bool {
				var list struct{ Jobs []engram.JobStatus }
				call(t, s, "GET", "/v1/jobs", nil, &list)
				return !slices.ContainsFunc(list.Jobs, func(j engram.JobStatus) bool { return j.Name == "l1-memories" && j.Running })
			})
			continue
		}
		if code != 200 || st.Failing {
			t.Fatalf("the memory job through /v1/chat/completions: %d %+v", code, st)
		}
		break
	}
	var rep engram.DoctorReport
	if code := call(t, s, "GET", "/v1/doctor", nil, &rep); code != 200 {
		t.Fatalf("GET /v1/doctor: %d", code)
	}
	testutil.MustFindCheck(t, rep, "openai-embedder", "ok")
	testutil.MustFindCheck(t, rep, "openai-extractor", "ok")
	stop()
	if strings.Contains(log.String(), key) {
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
