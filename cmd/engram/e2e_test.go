package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestUsageErrors(t *testing.T) {
	home := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, "engram: unknown command \"frobnicate\"\nRun 'engram help' for usage."},
		{[]string{"recall", "--nope", "x"}, "engram recall: flag provided but not defined: -nope\nRun 'engram recall --help' for usage."},
		{[]string{"recall"}, "engram recall: missing the query"},
		{[]string{"ingest"}, "engram ingest: want exactly one FILE.jsonl"},
		{[]string{"--bogus", "serve"}, "engram: flag provided but not defined: -bogus"},
	} {
		r := runCLI(t, home, "", tc.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	for _, args := range [][]string{{"help"}, {"--help"}, {"recall", "--help"}, {"serve", "-h"}, {"help", "ingest"}} {
		r := runCLI(t, home, "", args...)
		if r.code != 0 || !strings.Contains(r.stdout, "Usage") {
			t.Errorf("%v: exit %d, stdout %q", args, r.code, r.stdout)
		}
	}
	if r := runCLI(t, home, "", "version"); r.code != 0 || !strings.HasPrefix(r.stdout, "engram ") {
		t.Errorf("version: %+v", r)
	}
}

func TestIngestFileLocal(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	lines := strings.Join([]string{
		`{"session":"s1","speaker":"Alice","content":"We picked port 30001 for the engram API","meta":{"dia_id":"D1:1"}}`,
		`{"session":"s1","content":""}`,
		``,
		`not json at all`,
		`{"session":"s1","speaker":"Bob","content":"我们决定使用端口30001","ts":"2026-04-30T09:00:00Z"}`,
		`{"session":"s1","content":"bad role","role":"wizard"}`,
		`{"session":"s2","speaker":"Carol","content":"東京で日本語の会議を開きました","id":"fixed-1"}`,
	}, "\n") + "\n"
	file := filepath.Join(t.TempDir(), "turns.jsonl")
	if err := os.WriteFile(file, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, home, "", "ingest", file)
	if r.code != 1 {
		t.Fatalf("ingest with bad lines must exit 1, got %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"line 2: content:", "line 4: the line must be a JSON object", "line 6: role: unknown role \"wizard\"", "6 lines read, 3 turns archived"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	// Re-ingesting the turn with a fixed id adds nothing.
	r = runCLI(t, home, lines[strings.LastIndex(strings.TrimSpace(lines), "\n")+1:], "ingest", "-")
	if r.code != 0 || !strings.Contains(r.stderr, "0 turns archived (1 already present)") {
		t.Fatalf("re-ingest: %+v", r)
	}

	// Each CLI run is a new process that loads the CJK dictionary on its
	// first Chinese or Japanese text, so keep CJK queries few here; the
	// palace tests cover CJK search in depth.
	for _, q := range []string{"port", "端口", "API"} {
		r = runCLI(t, home, "", "recall", "--json", q)
		if r.code != 0 {
			t.Fatalf("recall %q: %+v", q, r)
		}
		var resp recallResponse
		if err := json.Unmarshal([]byte(r.stdout), &resp); err != nil {
			t.Fatal(err)
		}
		if len(resp.Results) == 0 {
			t.Errorf("recall %q found nothing", q)
		}
	}
	r = runCLI(t, home, "", "recall", "port", "--k", "1")
	if r.code != 0 || !strings.Contains(r.stdout, `source `) || !strings.Contains(r.stdout, `{"dia_id":"D1:1"}`) {
		t.Errorf("human recall output lacks source and meta:\n%s", r.stdout)
	}
	r = runCLI(t, home, "", "stats")
	if r.code != 0 || !strings.Contains(r.stdout, "archive: 3 turns") {
		t.Errorf("stats: %+v", r)
	}

	// The home is private.
	for _, p := range []string{home, filepath.Join(home, "palace.db")} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm&0o077 != 0 {
			t.Errorf("%s has mode %v, want no group or other access", p, perm)
		}
	}
}

func TestServeEndToEnd(t *testing.T) {
	home := t.TempDir()
	s := startServer(t, home)
	ctx := context.Background()
	var created struct{ IDs []string }
	code, err := s.post(ctx, "/v1/turns", map[string]any{"turns": []map[string]any{
		{"session": "arch", "speaker": "Dana", "content": "Decision: the vector index stays embedded until 1M turns", "meta": map[string]any{"ticket": "ENG-7"}},
		{"session": "arch", "role": "assistant", "content": "Recorded the decision about the vector index."},
	}}, &created)
	if err != nil || code != 201 || len(created.IDs) != 2 {
		t.Fatalf("post: %d %v %v", code, err, created)
	}

	// The CLI finds the running server through the home and uses it
	// (the server holds the archive lock, so a local open would fail).
	r := runCLI(t, home, "", "recall", "--json", "vector index decision")
	if r.code != 0 {
		t.Fatalf("recall via server: %+v", r)
	}
	var resp recallResponse
	if err := json.Unmarshal([]byte(r.stdout), &resp); err != nil || len(resp.Results) != 2 {
		t.Fatalf("recall via server: %v %s", err, r.stdout)
	}
	if compact(resp.Results[0].Sources[0].Meta) != `{"ticket":"ENG-7"}` && compact(resp.Results[1].Sources[0].Meta) != `{"ticket":"ENG-7"}` {
		t.Errorf("meta lost: %s", r.stdout)
	}
	r = runCLI(t, home, `{"session":"cli","content":"ingested through the server"}`+"\n", "ingest", "-")
	if r.code != 0 {
		t.Fatalf("ingest via server: %+v", r)
	}

	// A second server on the same home is refused with a clear error.
	other := freeAddr(t)
	r = runCLI(t, home, "", "serve", "--addr", other)
	if r.code != 1 || !strings.Contains(r.stderr, "in use by another engram process") {
		t.Fatalf("second serve: %+v", r)
	}

	s.stop(t)
	if !strings.Contains(s.stderr.String(), "engram stopped cleanly") {
		t.Errorf("no clean stop in log:\n%s", s.stderr)
	}
	if _, err := os.Stat(filepath.Join(home, "serve.json")); !os.IsNotExist(err) {
		t.Errorf("serve.json left behind: %v", err)
	}
	// After the server stopped, the CLI opens the home itself.
	r = runCLI(t, home, "", "stats", "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"turns": 3`) {
		t.Errorf("stats after stop: %+v", r)
	}
}

func TestServeNonLoopbackNeedsToken(t *testing.T) {
	home := t.TempDir()
	r := runCLI(t, home, "", "serve", "--addr", "0.0.0.0:0")
	if r.code != 1 || !strings.Contains(r.stderr, "requires a token") {
		t.Fatalf("serve on 0.0.0.0 without token: %+v", r)
	}
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

// TestConfigErrors: a command on a home whose config.toml does not load
// exits 1 and names the setting (engine's tests check each setting).
func TestConfigErrors(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, "embedder = \"opneai\"\n")
	if r := runCLI(t, home, "", "stats"); r.code != 1 || !strings.Contains(r.stderr, "want builtin, ollama, openai or none") {
		t.Errorf("stats with a bad embedder: %+v", r)
	}
}
