package httpapi_test

import (
	"encoding/json"
	"io"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/engram-dev/engram/httpapi"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/mcp"
	"github.com/engram-dev/engram/ui"
)

// rawCall sends a request with the given headers ("Host" sets the Host)
// and returns the status and the error's code and field, if any.
func rawCall(t *testing.T, method, u, body string, headers map[string]string) (int, string, string) {
	t.Helper()
	resp := testutil.Request(t, method, u, body, headers)
	defer resp.Body.Close()
	var e struct {
		Error struct{ Code, Field string }
	}
	b, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(b, &e)
	return resp.StatusCode, e.Error.Code, e.Error.Field
}

// TestCrossSite: what a web page the user opens can send is refused: a
// text/plain POST with a foreign Origin and Host (the probe, which
// wrote a turn), a foreign Host (DNS rebinding, also for reads and for
// /mcp), a foreign Origin (also on a GET), a cross-site fetch without
// Origin, a body that is not JSON. A page served by engram itself (the
// web UI to come, same origin), the CLI and curl, and configured hosts
// and origins get through.
func TestCrossSite(t *testing.T) {
	s := mustOpenStack(t, httpapi.Config{AllowedHosts: []string{"engram.lan"}, AllowedOrigins: []string{"http://localhost:5173"}},
		func(srv *httpapi.Server, s *stack) {
			m := mcp.NewServer(srv.Ingest, srv.Recall, srv.Status)
			m.HostChecked = true
			var err error
			if srv.MCP, err = m.Handler(); err != nil {
				t.Fatal(err)
			}
		})
	u, _ := url.Parse(s.URL)
	own := u.Host // 127.0.0.1:port
	port := u.Port()
	turn := `{"session":"s","content":"written by a page"}`
	json := map[string]string{"Content-Type": "application/json"}
	with := func(kv ...string) map[string]string {
		h := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			h[kv[i]] = kv[i+1]
		}
		return h
	}
	initMCP := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
	for _, tc := range []struct {
		name         string
		method, path string
		body         string
		headers      map[string]string
		status       int
		field        string
	}{
		{"the issue's probe: text/plain, foreign Origin and Host", "POST", "/v1/turns", turn,
			with("Content-Type", "text/plain", "Origin", "http://evil.example", "Host", "evil.example:"+port), 403, "Host"},
		{"DNS rebinding: a foreign Host reads recall", "POST", "/v1/recall", `{"query":"x"}`,
			with("Content-Type", "application/json", "Host", "evil.example:"+port), 403, "Host"},
		{"a foreign Host on a GET", "GET", "/v1/stats", "", with("Host", "attacker.test"), 403, "Host"},
		{"a foreign Host on health", "GET", "/v1/health", "", with("Host", "attacker.test:"+port), 403, "Host"},
		{"a foreign Host on /mcp", "POST", "/mcp", initMCP,
			with("Content-Type", "application/json", "Accept", "application/json, text/event-stream", "Host", "evil.example:"+port), 403, "Host"},
		{"a foreign Origin, JSON", "POST", "/v1/turns", turn, with("Content-Type", "application/json", "Origin", "http://evil.example"), 403, "Origin"},
		{"a foreign Origin starts a re-embed", "POST", "/v1/reembed", `{}`, with("Content-Type", "application/json", "Origin", "https://evil.example"), 403, "Origin"},
		{"a foreign Origin on a GET", "GET", "/v1/stats", "", with("Origin", "http://evil.example"), 403, "Origin"},
		{"a foreign Origin on /mcp", "POST", "/mcp", initMCP,
			with("Content-Type", "application/json", "Accept", "application/json, text/event-stream", "Origin", "http://evil.example"), 403, "Origin"},
		{"another port of localhost is another origin", "POST", "/v1/turns", turn,
			with("Content-Type", "application/json", "Origin", "http://127.0.0.1:1"), 403, "Origin"},
		{"Origin null (a sandboxed frame)", "POST", "/v1/turns", turn, with("Content-Type", "application/json", "Origin", "null"), 403, "Origin"},
		{"a cross-site fetch without Origin", "GET", "/v1/stats", "", with("Sec-Fetch-Site", "cross-site"), 403, "Origin"},
		{"text/plain from curl", "POST", "/v1/turns", turn, with("Content-Type", "text/plain"), 415, "Content-Type"},
		{"a form", "POST", "/v1/backup", "dir=/tmp/x", with("Content-Type", "application/x-www-form-urlencoded"), 415, "Content-Type"},
		{"a body without Content-Type", "POST", "/v1/turns", turn, nil, 415, "Content-Type"},
		{"a form on /mcp", "POST", "/mcp", initMCP, with("Content-Type", "text/plain", "Accept", "application/json, text/event-stream"), 415, "Content-Type"},

		{"curl with JSON", "POST", "/v1/turns", turn, json, 201, ""},
		{"JSON with a charset", "POST", "/v1/turns", turn, with("Content-Type", "application/json; charset=utf-8"), 201, ""},
		{"a POST without a body", "POST", "/v1/jobs/x/run", "", nil, 501, ""},
		{"a page engram serves (same origin)", "POST", "/v1/turns", turn,
			with("Content-Type", "application/json", "Origin", "http://"+own, "Sec-Fetch-Site", "same-origin"), 201, ""},
		{"an allowed origin", "POST", "/v1/recall", `{"query":"page"}`,
			with("Content-Type", "application/json", "Origin", "http://localhost:5173", "Sec-Fetch-Site", "same-site"), 200, ""},
		{"localhost", "GET", "/v1/stats", "", with("Host", "localhost:"+port), 200, ""},
		{"LOCALHOST. (case, final dot)", "GET", "/v1/stats", "", with("Host", "LOCALHOST.:"+port), 200, ""},
		{"another loopback IP", "GET", "/v1/stats", "", with("Host", "127.0.0.2:"+port), 200, ""},
		{"IPv6 loopback", "GET", "/v1/stats", "", with("Host", "[::1]:"+port), 200, ""},
		{"an allowed host", "GET", "/v1/health", "", with("Host", "Engram.LAN:"+port), 200, ""},
		{"a typed URL (Sec-Fetch-Site none)", "GET", "/v1/health", "", with("Sec-Fetch-Site", "none"), 200, ""},
		{"the MCP client", "POST", "/mcp", initMCP, with("Content-Type", "application/json", "Accept", "application/json, text/event-stream"), 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, ecode, field := rawCall(t, tc.method, s.URL+tc.path, tc.body, tc.headers)
			if code != tc.status || field != tc.field {
				t.Fatalf("%s %s: %d %s (field %q), want %d (field %q)", tc.method, tc.path, code, ecode, field, tc.status, tc.field)
			}
			if code == 403 && ecode != "forbidden" || code == 415 && ecode != "unsupported_media_type" {
				t.Fatalf("error code %q for %d", ecode, code)
			}
		})
	}
	// Nothing the refused requests sent was archived: the three turns are
	// those of curl, the charset and the same-origin page.
	if got := s.LastSeq(); got != 3 {
		t.Fatalf("archive holds %d turns, want 3", got)
	}
}

// TestGuardConfig: bad allowed hosts and origins are refused when the
// server is made, naming the entry.
func TestGuardConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg   httpapi.Config
		field string
	}{
		{httpapi.Config{AllowedHosts: []string{"engram.lan:8080"}}, "allowed_hosts[0]"},
		{httpapi.Config{AllowedHosts: []string{"ok", "http://x"}}, "allowed_hosts[1]"},
		{httpapi.Config{AllowedOrigins: []string{"localhost:5173"}}, "allowed_origins[0]"},
		{httpapi.Config{AllowedOrigins: []string{"http://x/path"}}, "allowed_origins[0]"},
		{httpapi.Config{AllowedOrigins: []string{"ftp://x"}}, "allowed_origins[0]"},
	} {
		_, err := httpapi.New(tc.cfg, nil)
		if err == nil || !strings.HasPrefix(err.Error(), tc.field+": ") {
			t.Errorf("New(%+v) = %v, want an error on %s", tc.cfg, err, tc.field)
		}
	}
	if _, err := httpapi.New(httpapi.Config{AllowedHosts: []string{"*", "10.0.0.1", "::1"}, AllowedOrigins: []string{"https://ui.example:443"}}, nil); err != nil {
		t.Fatal(err)
	}
	if o, err := httpapi.NormalOrigin("HTTPS://UI.Example:443"); err != nil || o != "https://ui.example" {
		t.Errorf("NormalOrigin = %q %v", o, err)
	}
}

// TestGuardWildcardListen: listening on every address (with a token), any
// IP literal names this machine (no page can rebind an IP), a name still
// has to be allowed.
func TestGuardWildcardListen(t *testing.T) {
	srv, err := httpapi.New(httpapi.Config{Addr: "0.0.0.0:30001", Token: "tok-0123456789abcdef"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	for host, want := range map[string]int{"192.168.77.5:30001": 401, "[fe80::1]:30001": 401, "engram.lan:30001": 403, "localhost": 401} {
		if code, _, _ := rawCall(t, "GET", ts.URL+"/v1/stats", "", map[string]string{"Host": host}); code != want {
			t.Errorf("Host %s: %d, want %d", host, code, want)
		}
	}
}

// TestCrossSiteLinkToWebView: a link to the web view from another site (a
// top-level GET navigation) is followed; anything else cross-site is still
// refused, on the web view's files and on the API.
func TestCrossSiteLinkToWebView(t *testing.T) {
	s := mustOpenStack(t, httpapi.Config{}, func(srv *httpapi.Server, s *stack) { srv.UI = ui.Handler() })
	nav := func(kv ...string) map[string]string {
		h := map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}
		for i := 0; i < len(kv); i += 2 {
			h[kv[i]] = kv[i+1]
		}
		return h
	}
	for _, tc := range []struct {
		name, method, path string
		headers            map[string]string
		status             int
	}{
		{"a link to the web view", "GET", "/ui/", nav(), 200},
		{"a link to a view", "GET", "/ui/?view=memories", nav(), 200},
		{"HEAD of the web view", "HEAD", "/ui/", nav(), 200},
		{"a same-site link", "GET", "/ui/", nav("Sec-Fetch-Site", "same-site"), 200},
		{"a link to the API", "GET", "/v1/stats", nav(), 403},
		{"a link to health", "GET", "/v1/health", nav(), 403},
		{"a link to the metrics", "GET", "/metrics", nav(), 403},
		{"a cross-site fetch of the web view", "GET", "/ui/app.js", nav("Sec-Fetch-Mode", "no-cors", "Sec-Fetch-Dest", "script"), 403},
		{"a cross-site form posted to the web view", "POST", "/ui/", nav("Content-Type", "application/x-www-form-urlencoded"), 403},
		{"a foreign Host still", "GET", "/ui/", nav("Host", "evil.example"), 403},
	} {
		code, _, _ := rawCall(t, tc.method, s.URL+tc.path, "", tc.headers)
		if code != tc.status {
			t.Errorf("%s: %s %s: %d, want %d", tc.name, tc.method, tc.path, code, tc.status)
		}
	}
}
