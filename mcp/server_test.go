package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/mcp"
)

// services are test doubles of the root services: they record what the
// tools send and answer what a test sets, failures and panics included.
type services struct {
	mu     sync.Mutex
	turns  []engram.Turn
	reqs   []engram.RecallRequest
	recall func(engram.RecallRequest) (engram.RecallResponse, error)
	stats  error
}

var (
	_ engram.IngestService = (*services)(nil)
	_ engram.RecallService = (*services)(nil)
	_ engram.StatusService = (*services)(nil)
)

func (s *services) Ingest(_ context.Context, turns []engram.Turn) (engram.IngestResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var res engram.IngestResult
	for _, t := range turns {
		s.turns = append(s.turns, t)
		res.Turns = append(res.Turns, engram.Appended{ID: "t" + string(rune('0'+len(s.turns))), Seq: int64(len(s.turns))})
	}
	return res, nil
}

func (s *services) Recall(_ context.Context, req engram.RecallRequest) (engram.RecallResponse, error) {
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	f := s.recall
	s.mu.Unlock()
	if f != nil {
		return f(req)
	}
	return engram.RecallResponse{Mode: engram.ModeShallow}, nil
}

func (s *services) Health(context.Context) engram.Health {
	return engram.Health{Status: "ok", ArchiveSeq: 3}
}

func (s *services) Stats(context.Context) (engram.Stats, error) {
	return engram.Stats{Archive: engram.ArchiveStats{Turns: 3}}, s.stats // no namespaces yet: a nil map
}

// mustConnect serves srv over in-memory transports and returns a client
// session to it.
func mustConnect(t *testing.T, srv *mcp.Server) *sdk.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ct, st := sdk.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, st) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return cs
}

func callTool(t *testing.T, cs *sdk.ClientSession, name string, args any) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	return res
}

func text(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestToolsAndSchemas(t *testing.T) {
	svc := &services{}
	cs := mustConnect(t, mcp.NewServer(svc, svc, svc))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]string{}
	for _, tool := range res.Tools {
		if len(tool.Description) < 80 {
			t.Errorf("%s: description too thin for a model to act on: %q", tool.Name, tool.Description)
		}
		in, _ := json.Marshal(tool.InputSchema)
		out, _ := json.Marshal(tool.OutputSchema)
		schemas[tool.Name] = string(in) + "\n" + string(out)
	}
	for name, want := range map[string][]string{
		mcp.ToolRemember:    {`"required":["content"]`, `"enum":["user","assistant","system","tool"]`, `"meta"`},
		mcp.ToolRecall:      {`"required":["query"]`, `"enum":["auto","hybrid","shallow","deep","keyword"]`, `"maximum":200`, `"sources"`},
		mcp.ToolKG:          {`"required":["entity"]`, `"timeline"`, `"as_of"`, `"facts"`},
		mcp.ToolTimeline:    {`"required":["entity"]`},
		mcp.ToolMemories:    {`"enum":["fact","decision","preference","plan","event"]`, `"memories"`},
		mcp.ToolStatus:      {`"health"`, `"index_lag"`},
		mcp.ToolForget:      {`"ids"`, `"dry_run"`, `"maxLength":1024`, `"already_forgotten"`},
		mcp.ToolScenes:      {`"scenes"`, `"session"`},
		mcp.ToolPersona:     {`"personas"`, `"speaker"`},
		mcp.ToolVaultSearch: {`"required":["query"]`, `"results"`},
		mcp.ToolDocGraph:    {`"required":["doc"]`, `"maximum":6`, `"backlinks"`},
		mcp.ToolCorrect:     {`"required":["target","id"]`, `"enum":["memory","fact"]`, `"restore"`, `"original"`},
		mcp.ToolRedact:      {`"required":["texts"]`, `"marker"`, `"dry_run"`, `"spans"`},
	} {
		s, ok := schemas[name]
		if !ok {
			t.Errorf("no tool %s", name)
			continue
		}
		for _, w := range want {
			if !strings.Contains(s, w) {
				t.Errorf("%s schemas lack %s:\n%s", name, w, s)
			}
		}
	}
	if len(schemas) != 13 {
		t.Errorf("%d tools, want 13", len(schemas))
	}
}

// TestForgetErrors: forget names what is wrong, and says so when the
// server cannot forget.
func TestForgetErrors(t *testing.T) {
	svc := &services{}
	cs := mustConnect(t, mcp.NewServer(svc, svc, svc))
	if res := callTool(t, cs, mcp.ToolForget, map[string]any{"ids": []string{"x"}}); !res.IsError || !strings.Contains(text(res), "not available") {
		t.Errorf("forget without a forget service: %v %q", res.IsError, text(res))
	}
	srv := mcp.NewServer(svc, svc, svc)
	srv.Forget = forgetFunc(func(ctx context.Context, req engram.ForgetRequest) (engram.ForgetReport, error) {
		return engram.ForgetReport{Turns: req.IDs}, nil
	})
	cs = mustConnect(t, srv)
	for args, want := range map[string]string{
		`{}`:                            "ids",
		`{"ids":["a"],"session":"s"}`:   "session",
		`{"namespace":"*"}`:             "namespace",
		`{"ids":["a"],"dry_run":"yes"}`: "dry_run",
	} {
		var m map[string]any
		json.Unmarshal([]byte(args), &m)
		if res := callTool(t, cs, mcp.ToolForget, m); !res.IsError || !strings.Contains(text(res), want) {
			t.Errorf("forget %s: %v %q, want an error naming %s", args, res.IsError, text(res), want)
		}
	}
	if res := callTool(t, cs, mcp.ToolForget, map[string]any{"ids": []string{"a"}}); res.IsError || !strings.Contains(text(res), `"turns":["a"]`) {
		t.Errorf("forget: %v %q", res.IsError, text(res))
	}
}

// TestRedactErrors: redact names what is wrong, says so when the server
// cannot redact, and passes a good request on.
func TestRedactErrors(t *testing.T) {
	svc := &services{}
	cs := mustConnect(t, mcp.NewServer(svc, svc, svc))
	if res := callTool(t, cs, mcp.ToolRedact, map[string]any{"texts": []string{"secret"}}); !res.IsError || !strings.Contains(text(res), "not available") {
		t.Errorf("redact without a redact service: %v %q", res.IsError, text(res))
	}
	srv := mcp.NewServer(svc, svc, svc)
	var got engram.RedactRequest
	srv.Redact = redactFunc(func(ctx context.Context, req engram.RedactRequest) (engram.RedactReport, error) {
		got = req
		return engram.RedactReport{Turns: req.IDs, Spans: 2}, nil
	})
	cs = mustConnect(t, srv)
	for args, want := range map[string]string{
		`{}`:                                     "texts",
		`{"texts":["ab"]}`:                       "texts[0]",
		`{"texts":["secret"],"namespace":"*"}`:   "namespace",
		`{"texts":["secret"],"dry_run":"yes"}`:   "dry_run",
		`{"texts":["secret"],"marker":"secret"}`: "marker",
	} {
		var m map[string]any
		json.Unmarshal([]byte(args), &m)
		if res := callTool(t, cs, mcp.ToolRedact, m); !res.IsError || !strings.Contains(text(res), want) {
			t.Errorf("redact %s: %v %q, want an error naming %s", args, res.IsError, text(res), want)
		}
	}
	res := callTool(t, cs, mcp.ToolRedact, map[string]any{"texts": []string{"sk-live-123"}, "ids": []string{"a"}, "reason": "a key"})
	if res.IsError || !strings.Contains(text(res), `"spans":2`) || got.Reason != "a key" || len(got.IDs) != 1 {
		t.Errorf("redact: %v %q, the service got %+v", res.IsError, text(res), got)
	}
}

type redactFunc func(context.Context, engram.RedactRequest) (engram.RedactReport, error)

func (f redactFunc) Redact(ctx context.Context, req engram.RedactRequest) (engram.RedactReport, error) {
	return f(ctx, req)
}

// TestCorrectErrors: correct names the field at fault, and says so when
// the server cannot correct.
func TestCorrectErrors(t *testing.T) {
	svc := &services{}
	cs := mustConnect(t, mcp.NewServer(svc, svc, svc))
	if res := callTool(t, cs, mcp.ToolCorrect, map[string]any{"target": "memory", "id": "m1", "wrong": true}); !res.IsError || !strings.Contains(text(res), "not available") {
		t.Errorf("correct without a correct service: %v %q", res.IsError, text(res))
	}
	srv := mcp.NewServer(svc, svc, svc)
	srv.Correct = correctFunc(func(ctx context.Context, req engram.CorrectionRequest) (engram.Correction, error) {
		if req.ID == "gone" {
			return engram.Correction{}, &engram.Error{Code: engram.ENOTFOUND, Field: "id", Message: "no memory has the id \"gone\""}
		}
		return engram.Correction{ID: "cor-1", Target: req.Target, Of: req.ID, Wrong: req.Wrong, Text: req.Text}, nil
	})
	cs = mustConnect(t, srv)
	for args, want := range map[string]string{
		`{"target":"memory","id":"m1"}`:                             "text",
		`{"target":"memory","id":"m1","object":"x"}`:                "object",
		`{"target":"fact","id":"f1","text":"x"}`:                    "text",
		`{"target":"memory","id":"m1","wrong":true,"text":"x"}`:     "wrong",
		`{"target":"memory","id":"m1","restore":true,"wrong":true}`: "restore",
		`{"target":"memory","id":"gone","wrong":true}`:              "not_found",
	} {
		var m map[string]any
		json.Unmarshal([]byte(args), &m)
		if res := callTool(t, cs, mcp.ToolCorrect, m); !res.IsError || !strings.Contains(text(res), want) {
			t.Errorf("correct %s: %v %q, want an error naming %s", args, res.IsError, text(res), want)
		}
	}
	if res := callTool(t, cs, mcp.ToolCorrect, map[string]any{"target": "memory", "id": "m1", "text": "Ana lives in Porto"}); res.IsError || !strings.Contains(text(res), `"text":"Ana lives in Porto"`) {
		t.Errorf("correct: %v %q", res.IsError, text(res))
	}
}

type correctFunc func(context.Context, engram.CorrectionRequest) (engram.Correction, error)

func (f correctFunc) Correct(ctx context.Context, req engram.CorrectionRequest) (engram.Correction, error) {
	return f(ctx, req)
}

type forgetFunc func(context.Context, engram.ForgetRequest) (engram.ForgetReport, error)

func (f forgetFunc) Forget(ctx context.Context, req engram.ForgetRequest) (engram.ForgetReport, error) {
	return f(ctx, req)
}

func TestRemember(t *testing.T) {
	svc := &services{}
	srv := mcp.NewServer(svc, svc, svc)
	now := time.Date(2026, 5, 1, 14, 3, 0, 0, time.UTC)
	srv.Now = func() time.Time { return now }
	cs := mustConnect(t, srv)
	res := callTool(t, cs, mcp.ToolRemember, map[string]any{"content": "Alice moved to Berlin", "meta": map[string]any{"k": 1}})
	if res.IsError {
		t.Fatal(text(res))
	}
	got := svc.turns[0]
	if got.Session != mcp.DefaultSession || got.Namespace != engram.DefaultNamespace || got.Role != engram.RoleUser ||
		!got.TS.Equal(now) || string(got.Meta) != `{"k":1}` {
		t.Errorf("turn %+v", got)
	}
	out, _ := json.Marshal(res.StructuredContent)
	if !strings.Contains(string(out), `"id":"t1"`) || !strings.Contains(string(out), `"session":"mcp"`) {
		t.Errorf("output %s", out)
	}

	srv2 := mcp.NewServer(svc, svc, svc)
	srv2.Limits = engram.Limits{MaxContentBytes: 10}
	cs2 := mustConnect(t, srv2)
	if res := callTool(t, cs2, mcp.ToolRemember, map[string]any{"content": "far more than ten bytes"}); !res.IsError ||
		!strings.Contains(text(res), "content") || !strings.Contains(text(res), engram.ETOOLARGE) {
		t.Errorf("content over the limit: %v %q", res.IsError, text(res))
	}
}

func TestRecallArguments(t *testing.T) {
	svc := &services{recall: func(req engram.RecallRequest) (engram.RecallResponse, error) {
		tr := engram.TurnResult(engram.Turn{ID: "a", Session: "s", Content: "hi", Meta: json.RawMessage(`{"x":"y"}`)}, 1)
		return engram.RecallResponse{Mode: engram.ModeDeep, Results: []engram.Result{tr}, Context: "packed"}, nil
	}}
	cs := mustConnect(t, mcp.NewServer(svc, svc, svc))
	res := callTool(t, cs, mcp.ToolRecall, map[string]any{"query": "hi", "k": 3, "kinds": []string{"turn", "memory"},
		"as_of": "2025-03-11", "budget_tokens": 100, "namespace": "*"})
	if res.IsError {
		t.Fatal(text(res))
	}
	req := svc.reqs[0]
	if req.Query != "hi" || req.K != 3 || len(req.Kinds) != 2 || req.BudgetTokens != 100 || req.Namespace != "*" ||
		!req.AsOf.Equal(time.Date(2025, 3, 11, 23, 59, 59, 999999999, time.UTC)) {
		t.Errorf("request %+v", req)
	}
	if s := text(res); !strings.Contains(s, `"meta":{"x":"y"}`) || !strings.Contains(s, `"context":"packed"`) {
		t.Errorf("result %s", s)
	}
	if res := callTool(t, cs, mcp.ToolRecall, map[string]any{"query": "x", "kinds": []string{"gossip"}}); !res.IsError {
		t.Errorf("unknown kind accepted")
	}
	// k given is 1 to 200: an explicit 0 is refused, not read as the default.
	ctx := context.Background()
	if res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: mcp.ToolRecall, Arguments: map[string]any{"query": "x", "k": 0}}); err == nil && !res.IsError {
		t.Errorf("k 0 accepted: %s", text(res))
	}
	if n := len(svc.reqs); n != 1 {
		t.Errorf("%d recalls reached the service, want 1", n)
	}
}

func TestErrorsAreToolErrors(t *testing.T) {
	var logs bytes.Buffer
	var mu sync.Mutex
	svc := &services{}
	srv := mcp.NewServer(svc, svc, svc)
	srv.Logger = slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &mu}, nil))
	cs := mustConnect(t, srv)

	svc.recall = func(engram.RecallRequest) (engram.RecallResponse, error) {
		return engram.RecallResponse{}, errors.New("open /secret/path: disk on fire")
	}
	res := callTool(t, cs, mcp.ToolRecall, map[string]any{"query": "x"})
	if !res.IsError || text(res) != "internal error" {
		t.Errorf("internal error: %v %q", res.IsError, text(res))
	}
	mu.Lock()
	if !strings.Contains(logs.String(), "disk on fire") {
		t.Errorf("internal error not logged: %q", logs.String())
	}
	mu.Unlock()

	svc.recall = func(engram.RecallRequest) (engram.RecallResponse, error) { panic("boom") }
	if res := callTool(t, cs, mcp.ToolRecall, map[string]any{"query": "x"}); !res.IsError || text(res) != "internal error" {
		t.Errorf("panic: %v %q", res.IsError, text(res))
	}

	svc.recall = func(req engram.RecallRequest) (engram.RecallResponse, error) {
		return engram.RecallResponse{}, engram.FieldError("mode", "unknown mode %q", req.Mode)
	}
	if res := callTool(t, cs, mcp.ToolRecall, map[string]any{"query": "x"}); !res.IsError || text(res) != `mode: unknown mode "" (invalid)` {
		t.Errorf("application error: %v %q", res.IsError, text(res))
	}

	for _, c := range []struct {
		tool string
		args any
		want string
	}{
		{mcp.ToolRecall, map[string]any{}, "query"},
		{mcp.ToolRecall, map[string]any{"query": "x", "bogus": 1}, "bogus"},
		{mcp.ToolRecall, map[string]any{"query": "x", "as_of": "2025-13-45"}, "as_of"},
		{mcp.ToolKG, map[string]any{"entity": "Alice"}, engram.EUNSUPPORTED}, // no Layers
		{mcp.ToolMemories, map[string]any{}, engram.EUNSUPPORTED},
		{mcp.ToolRemember, map[string]any{"content": "x", "session": " padded "}, "session"},
	} {
		res := callTool(t, cs, c.tool, c.args)
		if !res.IsError || !strings.Contains(text(res), c.want) {
			t.Errorf("%s %v: want a tool error with %q, got %v %q", c.tool, c.args, c.want, res.IsError, text(res))
		}
	}

	res = callTool(t, cs, mcp.ToolStatus, nil)
	if res.IsError || !strings.Contains(text(res), `"namespaces":{}`) {
		t.Errorf("status of an empty home: %v %q", res.IsError, text(res))
	}
	svc.stats = engram.Errorf(engram.EUNAVAILABLE, "palace closing")
	res = callTool(t, cs, mcp.ToolStatus, nil)
	if res.IsError || !strings.Contains(text(res), "palace closing") || !strings.Contains(text(res), `"status":"ok"`) {
		t.Errorf("status with failing stats: %v %q", res.IsError, text(res))
	}
}

func TestServeNeedsServices(t *testing.T) {
	if err := (&mcp.Server{}).Serve(context.Background(), &sdk.InMemoryTransport{}); err == nil {
		t.Fatal("Serve without services succeeded")
	}
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestVaultSearchAndDocGraph: vault_search asks recall for documents only;
// doc_graph checks its depth and says so when the server has no vaults.
func TestVaultSearchAndDocGraph(t *testing.T) {
	svc := &services{}
	cs := mustConnect(t, mcp.NewServer(svc, svc, svc))
	if res := callTool(t, cs, mcp.ToolVaultSearch, map[string]any{"query": "billing ADR"}); res.IsError {
		t.Fatalf("vault_search: %q", text(res))
	}
	svc.mu.Lock()
	req := svc.reqs[len(svc.reqs)-1]
	svc.mu.Unlock()
	if len(req.Kinds) != 1 || req.Kinds[0] != engram.KindDoc || req.Namespace != engram.DefaultNamespace {
		t.Errorf("vault_search asked recall for %+v", req)
	}
	for tool, c := range map[string]struct {
		args map[string]any
		want string
	}{
		mcp.ToolVaultSearch: {map[string]any{"query": " "}, "query"},
		mcp.ToolDocGraph:    {map[string]any{"doc": "ADR-7"}, "not available"},
		mcp.ToolScenes:      {map[string]any{}, "not available"},
		mcp.ToolPersona:     {map[string]any{}, "not available"},
	} {
		if res := callTool(t, cs, tool, c.args); !res.IsError || !strings.Contains(text(res), c.want) {
			t.Errorf("%s %v: %v %q, want an error naming %s", tool, c.args, res.IsError, text(res), c.want)
		}
	}
}

// allServices serves every tool, each with a canned answer.
type allServices struct{ *services }

var _ mcp.Services = allServices{}

func (allServices) Memories(context.Context, engram.MemoryQuery) ([]engram.Memory, error) {
	return []engram.Memory{{ID: "m1"}}, nil
}
func (allServices) Scenes(context.Context, engram.SceneQuery) ([]engram.Scene, error) {
	return []engram.Scene{{ID: "s1"}}, nil
}
func (allServices) Persona(context.Context, string, string) ([]engram.Persona, error) {
	return []engram.Persona{{Speaker: "Ana"}}, nil
}
func (allServices) Graph(context.Context, engram.GraphQuery) (engram.GraphResult, error) {
	return engram.GraphResult{Entity: engram.Entity{Name: "Ana"}}, nil
}
func (allServices) Forget(context.Context, engram.ForgetRequest) (engram.ForgetReport, error) {
	return engram.ForgetReport{Turns: []string{"t1"}}, nil
}
func (allServices) Correct(_ context.Context, req engram.CorrectionRequest) (engram.Correction, error) {
	return engram.Correction{ID: "c1", Of: req.ID}, nil
}
func (allServices) Redact(context.Context, engram.RedactRequest) (engram.RedactReport, error) {
	return engram.RedactReport{Spans: 1}, nil
}
func (allServices) DocGraph(context.Context, string, string, int) (engram.DocGraph, error) {
	return engram.DocGraph{Doc: engram.VaultDoc{Path: "adr.md"}}, nil
}

// TestNewServerFor: every tool is served by the one Services.
func TestNewServerFor(t *testing.T) {
	cs := mustConnect(t, mcp.NewServerFor(allServices{&services{}}))
	for tool, args := range map[string]map[string]any{
		mcp.ToolMemories: {},
		mcp.ToolScenes:   {},
		mcp.ToolPersona:  {},
		mcp.ToolKG:       {"entity": "Ana"},
		mcp.ToolForget:   {"ids": []string{"t1"}},
		mcp.ToolCorrect:  {"target": engram.CorrectMemory, "id": "m1", "wrong": true},
		mcp.ToolRedact:   {"texts": []string{"secret"}, "ids": []string{"t1"}},
		mcp.ToolDocGraph: {"doc": "adr.md"},
	} {
		if res := callTool(t, cs, tool, args); res.IsError {
			t.Errorf("%s: %q", tool, text(res))
		}
	}
}

// closeRecorder is an output that records whether it was closed.
type closeRecorder struct {
	io.Writer
	closed bool
}

func (c *closeRecorder) Close() error { c.closed = true; return nil }

// TestServeIO serves a client over a pair of pipes until the client's end
// closes, leaving the output open.
func TestServeIO(t *testing.T) {
	svc := &services{}
	srv := mcp.NewServer(svc, svc, svc)
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	out := &closeRecorder{Writer: fromServer}
	done := make(chan error, 1)
	go func() { done <- srv.ServeIO(context.Background(), toServer, out) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v0"}, nil).Connect(context.Background(),
		&sdk.IOTransport{Reader: toClient, Writer: fromClient}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := cs.ListTools(context.Background(), nil); err != nil || len(res.Tools) == 0 {
		t.Fatalf("ListTools: %v", err)
	}
	cs.Close()
	if err := <-done; err != nil {
		t.Fatalf("ServeIO: %v", err)
	}
	if out.closed {
		t.Error("the output was closed")
	}
}
