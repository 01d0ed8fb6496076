package httpapi_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engram-dev/engram/httpapi"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/mcp"
	"github.com/engram-dev/engram/vault"
)

// bearer adds a bearer token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// mustServeMCP serves a real engram's HTTP API, with the MCP tools at /mcp
// when withMCP, on loopback.
func mustServeMCP(t *testing.T, token string, withMCP bool) string {
	t.Helper()
	s := mustOpenStack(t, httpapi.Config{Token: token}, func(srv *httpapi.Server, s *stack) {
		srv.Layers = s.Palace
		if !withMCP {
			return
		}
		m := mcp.NewServer(srv.Ingest, srv.Recall, srv.Status)
		m.Layers, m.Docs = s.Palace, vault.SQLStore{DB: s.Palace}
		var err error
		if srv.MCP, err = m.Handler(); err != nil {
			t.Fatal(err)
		}
	})
	return s.URL
}

func TestMCPMount(t *testing.T) {
	const token = "s3cret"
	url := mustServeMCP(t, token, true)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
	for _, tok := range []string{"", "wrong"} {
		headers := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
		if tok != "" {
			headers["Authorization"] = "Bearer " + tok
		}
		resp := testutil.Request(t, http.MethodPost, url+"/mcp", init, headers)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("POST /mcp with token %q: %d, want 401", tok, resp.StatusCode)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "httpapi-test", Version: "v0"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 13 {
		t.Fatalf("list tools: %v %d", err, len(tools.Tools))
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "remember", Arguments: map[string]any{"content": "The staging database runs on port 5433"}})
	if err != nil || res.IsError {
		t.Fatalf("remember: %v %+v", err, res)
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "recall", Arguments: map[string]any{"query": "staging database port", "mode": "keyword"}})
	if err != nil || res.IsError {
		t.Fatalf("recall: %v %+v", err, res)
	}
	out := res.StructuredContent.(map[string]any)
	results, _ := out["results"].([]any)
	if len(results) != 1 || !strings.Contains(results[0].(map[string]any)["text"].(string), "5433") {
		t.Errorf("recall over /mcp: %v", out)
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "recall", Arguments: map[string]any{"query": ""}})
	if err != nil || !res.IsError {
		t.Errorf("recall with a blank query: want a tool error, got %v %+v", err, res)
	}
	// The browsing tools answer through the engine; bad input is a tool
	// error naming the field.
	for name, args := range map[string]map[string]any{
		"scenes":       {"query": "staging"},
		"persona":      {},
		"vault_search": {"query": "staging database"},
	} {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			t.Errorf("%s: %v %+v", name, err, res)
		}
	}
	for name, c := range map[string]struct {
		args map[string]any
		want string
	}{
		"doc_graph": {map[string]any{"doc": "no-such-note"}, "not_found"},
		"persona":   {map[string]any{"namespace": "*"}, "namespace"},
		"scenes":    {map[string]any{"limit": 5000}, "limit"},
	} {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: c.args})
		if err != nil || !res.IsError || !strings.Contains(fmt.Sprint(res.Content[0]), c.want) {
			t.Errorf("%s %v: want a tool error naming %s, got %v %+v", name, c.args, c.want, err, res)
		}
	}
}

func TestMCPNotMounted(t *testing.T) {
	url := mustServeMCP(t, "", false)
	resp, err := http.Post(url+"/mcp", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("POST /mcp without an MCP handler: %d, want 404", resp.StatusCode)
	}
}

// TestMCPSessionsExpireAndAreCapped: an MCP session over HTTP idle past
// the server's SessionIdle (on its clock) is closed, its client told 404;
// beyond MaxSessions, a new session closes the one idle longest.
func TestMCPSessionsExpireAndAreCapped(t *testing.T) {
	clock := testutil.NewClock(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	s := mustOpenStack(t, httpapi.Config{}, func(srv *httpapi.Server, s *stack) {
		m := mcp.NewServer(srv.Ingest, srv.Recall, srv.Status)
		m.Now, m.SessionIdle, m.MaxSessions = clock.Now, time.Minute, 3
		var err error
		if srv.MCP, err = m.Handler(); err != nil {
			t.Fatal(err)
		}
	})
	post := func(session, body string) (int, string) {
		t.Helper()
		h := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
		if session != "" {
			h["Mcp-Session-Id"] = session
		}
		resp := testutil.Request(t, http.MethodPost, s.URL+"/mcp", body, h)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Mcp-Session-Id")
	}
	open := func() string {
		t.Helper()
		code, id := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
		if code != 200 || id == "" {
			t.Fatalf("initialize: %d, session %q", code, id)
		}
		if code, _ := post(id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != 202 {
			t.Fatalf("initialized: %d", code)
		}
		return id
	}
	ping := func(id string) int {
		t.Helper()
		code, _ := post(id, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
		return code
	}

	a := open()
	clock.Advance(59 * time.Second)
	if code := ping(a); code != 200 {
		t.Fatalf("ping of a session idle 59 s: %d", code)
	}
	clock.Advance(59 * time.Second) // idle 59 s again since the ping
	if code := ping(a); code != 200 {
		t.Fatalf("ping of a session kept alive: %d", code)
	}
	clock.Advance(61 * time.Second)
	if code := ping(a); code != 404 {
		t.Fatalf("ping of a session idle past SessionIdle: %d, want 404", code)
	}

	// At most 3: the fourth closes the one idle longest.
	b := open()
	clock.Advance(time.Second)
	c := open()
	clock.Advance(time.Second)
	d := open()
	clock.Advance(time.Second)
	if ping(b) != 200 { // b is now the one idle the least
		t.Fatal("b")
	}
	e := open()
	for id, want := range map[string]int{b: 200, c: 404, d: 200, e: 200} {
		if code := ping(id); code != want {
			t.Errorf("session %s after a fourth: %d, want %d", id, code, want)
		}
	}
}
