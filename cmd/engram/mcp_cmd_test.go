package main_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpTurns is a conversation the rules extractor makes memories and
// knowledge-graph facts of.
const mcpTurns = `{"session":"s1","speaker":"Alice","content":"Morning! I live in Berlin, so I'm an hour ahead of you.","ts":"2025-03-11T09:00:00Z"}
{"session":"s1","speaker":"Bob","content":"Nice. We decided to use Postgres for the billing service.","ts":"2025-03-11T09:01:00Z"}
{"session":"s1","speaker":"Alice","content":"I work at Acme as a data engineer.","ts":"2025-03-11T09:02:00Z"}
`

// startMCP runs `engram mcp` on home and connects the SDK's client to it
// over stdio.
func startMCP(t *testing.T, home string) *sdk.ClientSession {
	t.Helper()
	cmd := exec.Command(engramBin, "mcp")
	cmd.Env = append(os.Environ(), "ENGRAM_HOME="+home)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "engram-test", Version: "v0"}, nil)
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to engram mcp: %v\n%s", err, stderr.String())
	}
	t.Cleanup(func() {
		if err := cs.Close(); err != nil {
			t.Logf("close: %v\n%s", err, stderr.String())
		}
	})
	return cs
}

// call calls a tool and decodes its structured output into out (when not
// nil); it fails the test on a protocol error.
func call(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any, out any) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	if out != nil && !res.IsError {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: decode %s: %v", tool, b, err)
		}
	}
	return res
}

// mcpResult and mcpTriple are what the tests read of recall's results and
// of the knowledge graph's triples.
type (
	mcpResult struct {
		ID      string `json:"id"`
		Text    string `json:"text"`
		Sources []struct {
			ID   string          `json:"id"`
			Meta json.RawMessage `json:"meta"`
		} `json:"sources"`
	}
	mcpTriple struct {
		Predicate string   `json:"predicate"`
		Object    string   `json:"object"`
		Sources   []string `json:"sources"`
	}
)

func toolText(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestMCPStdio(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	if r := runCLI(t, home, mcpTurns, "ingest", "-"); r.code != 0 {
		t.Fatalf("ingest: %+v", r)
	}
	if r := runCLI(t, home, "", "jobs", "run", "--all"); r.code != 0 {
		t.Fatalf("jobs run --all: %+v", r)
	}
	t.Run("local", func(t *testing.T) { checkMCPTools(t, startMCP(t, home)) })

	// With `engram serve` holding the home's lock, engram mcp goes through
	// its HTTP API.
	s := startServer(t, home)
	t.Run("through the server", func(t *testing.T) { checkMCPTools(t, startMCP(t, home)) })

	// engram serve itself serves the tools at /mcp.
	t.Run("streamable http", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		client := sdk.NewClient(&sdk.Implementation{Name: "engram-test", Version: "v0"}, nil)
		cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: "http://" + s.addr + "/mcp"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		checkMCPTools(t, cs)
	})
	s.stop(t)
}

func checkMCPTools(t *testing.T, cs *sdk.ClientSession) {
	ctx := context.Background()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" || tool.InputSchema == nil || tool.OutputSchema == nil {
			t.Errorf("tool %s lacks a description or a schema: %+v", tool.Name, tool)
		}
	}
	slices.Sort(names)
	if want := []string{"correct", "doc_graph", "forget", "kg", "memories", "persona", "recall", "redact", "remember", "scenes", "status", "timeline", "vault_search"}; !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}
	for _, tool := range tools.Tools {
		if tool.Name != "recall" {
			continue
		}
		b, _ := json.Marshal(tool.InputSchema)
		for _, want := range []string{`"query"`, `"required":["query"]`, `"deep"`, `"budget_tokens"`, `"as_of"`} {
			if !strings.Contains(string(b), want) {
				t.Errorf("recall input schema lacks %s: %s", want, b)
			}
		}
	}

	// remember, then recall finds it with its source.
	var rem struct {
		ID        string `json:"id"`
		Namespace string `json:"namespace"`
		Session   string `json:"session"`
	}
	res := call(t, cs, "remember", map[string]any{"content": "The wifi password of the cabin is larch-42",
		"speaker": "Alice", "session": "cabin", "meta": map[string]any{"origin": "mcp-test"}}, &rem)
	if res.IsError || rem.ID == "" || rem.Namespace != "default" || rem.Session != "cabin" {
		t.Fatalf("remember: %+v %s", rem, toolText(res))
	}
	var rec struct {
		Mode    string      `json:"mode"`
		Context string      `json:"context"`
		Results []mcpResult `json:"results"`
	}
	res = call(t, cs, "recall", map[string]any{"query": "cabin wifi password", "mode": "keyword", "k": 3, "budget_tokens": 200}, &rec)
	if res.IsError || len(rec.Results) == 0 {
		t.Fatalf("recall: %s", toolText(res))
	}
	// The subtests remember the same note: either copy may rank first.
	i := slices.IndexFunc(rec.Results, func(r mcpResult) bool {
		return r.ID == rem.ID
	})
	if i < 0 {
		t.Fatalf("recall did not find the remembered turn %s: %+v", rem.ID, rec.Results)
	}
	if got := rec.Results[i]; len(got.Sources) != 1 || got.Sources[0].ID != rem.ID || !strings.Contains(string(got.Sources[0].Meta), "mcp-test") {
		t.Errorf("the remembered turn lacks its source: %+v", got)
	}
	if !strings.Contains(rec.Context, "larch-42") {
		t.Errorf("recall with budget_tokens: no packed context: %q", rec.Context)
	}
	// The default mode works too (vector search with the built-in embedder).
	if res = call(t, cs, "recall", map[string]any{"query": "where does Alice live"}, &rec); res.IsError || len(rec.Results) == 0 {
		t.Errorf("recall auto: %s", toolText(res))
	}

	// kg, timeline and memories read the layers the jobs made.
	var kg struct {
		Entity struct {
			Name string `json:"name"`
		} `json:"entity"`
		Facts   []string    `json:"facts"`
		Triples []mcpTriple `json:"triples"`
	}
	res = call(t, cs, "kg", map[string]any{"entity": "alice"}, &kg)
	if res.IsError || kg.Entity.Name != "Alice" || !slices.ContainsFunc(kg.Triples, func(tr mcpTriple) bool {
		return tr.Predicate == "lives_in" && tr.Object == "Berlin" && len(tr.Sources) > 0
	}) {
		t.Errorf("kg alice: %+v %s", kg, toolText(res))
	}
	if !slices.ContainsFunc(kg.Facts, func(f string) bool { return strings.HasPrefix(f, "Alice lives in Berlin (2025-03-11 ..") }) {
		t.Errorf("kg facts: %q", kg.Facts)
	}
	res = call(t, cs, "kg", map[string]any{"entity": "Alice", "as_of": "2025-03-01"}, &kg)
	if res.IsError || len(kg.Triples) != 0 {
		t.Errorf("kg as of before the conversation: %+v %s", kg, toolText(res))
	}
	res = call(t, cs, "timeline", map[string]any{"entity": "Alice"}, &kg)
	if res.IsError || len(kg.Triples) == 0 {
		t.Errorf("timeline: %s", toolText(res))
	}
	var mems struct {
		Memories []struct {
			Type    string   `json:"type"`
			Text    string   `json:"text"`
			Sources []string `json:"sources"`
		} `json:"memories"`
	}
	res = call(t, cs, "memories", map[string]any{"query": "Berlin"}, &mems)
	if res.IsError || len(mems.Memories) == 0 || !strings.Contains(mems.Memories[0].Text, "Berlin") || len(mems.Memories[0].Sources) == 0 {
		t.Errorf("memories Berlin: %+v %s", mems, toolText(res))
	}
	var st struct {
		Health struct {
			Status     string `json:"status"`
			ArchiveSeq int64  `json:"archive_seq"`
		} `json:"health"`
		Stats struct {
			Archive struct {
				Turns int64 `json:"turns"`
			} `json:"archive"`
		} `json:"stats"`
	}
	if res = call(t, cs, "status", nil, &st); res.IsError || st.Health.ArchiveSeq < 4 || st.Stats.Archive.Turns < 4 {
		t.Errorf("status: %+v %s", st, toolText(res))
	}

	// Bad inputs are tool errors naming the fault, and the server goes on.
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"remember", map[string]any{"content": "   "}, "content"},
		{"remember", map[string]any{"session": "x"}, "content"},
		{"remember", map[string]any{"content": "x", "role": "wizard"}, "role"},
		{"remember", map[string]any{"content": "x", "ts": "yesterday"}, "ts"},
		{"recall", map[string]any{"query": "x", "mode": "psychic"}, "mode"},
		{"recall", map[string]any{"query": "x", "as_of": "soon"}, "as_of"},
		{"recall", map[string]any{"query": "x", "k": 5000}, "k"},
		{"kg", map[string]any{"entity": "Nobody Atall"}, "not_found"},
		{"kg", map[string]any{"entity": "Alice", "timeline": true, "as_of": "2025-03-01"}, "as_of"},
		{"memories", map[string]any{"type": "gossip"}, "type"},
		{"memories", map[string]any{"limit": 5000}, "limit"},
	} {
		res := call(t, cs, c.tool, c.args, nil)
		if !res.IsError || !strings.Contains(toolText(res), c.want) {
			t.Errorf("%s %v: want a tool error naming %q, got IsError=%v %q", c.tool, c.args, c.want, res.IsError, toolText(res))
		}
	}
	if res = call(t, cs, "status", nil, &st); res.IsError || st.Health.Status == "" {
		t.Errorf("status after the errors: %s", toolText(res))
	}

	// redact and forget reach the engine: the span leaves the remembered
	// turn, then the turn leaves recall.
	found := func() (string, bool) {
		t.Helper()
		if res := call(t, cs, "recall", map[string]any{"query": "cabin wifi password", "mode": "keyword", "k": 10}, &rec); res.IsError {
			t.Fatalf("recall: %s", toolText(res))
		}
		for _, r := range rec.Results {
			if r.ID == rem.ID {
				return r.Text, true
			}
		}
		return "", false
	}
	if res := call(t, cs, "redact", map[string]any{"texts": []any{"larch-42"}, "ids": []any{rem.ID}}, nil); res.IsError {
		t.Fatalf("redact: %s", toolText(res))
	}
	if text, ok := found(); !ok || strings.Contains(text, "larch-42") || !strings.Contains(text, "[redacted]") {
		t.Errorf("the remembered turn after redact: %q (found %v)", text, ok)
	}
	if res := call(t, cs, "forget", map[string]any{"ids": []any{rem.ID}, "reason": "test"}, nil); res.IsError {
		t.Fatalf("forget: %s", toolText(res))
	}
	if text, ok := found(); ok {
		t.Errorf("the forgotten turn is still recalled: %q", text)
	}
}
