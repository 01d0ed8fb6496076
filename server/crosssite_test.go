package server_test

import (
	"path/filepath"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/httpapi"
	"github.com/engram-dev/engram/internal/testutil"
)

// TestServeCrossSite: the server wires the guard with the configured
// allowed hosts (config.toml) and origins (ENGRAM_*), for the API and /mcp
// alike.
func TestServeCrossSite(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, "allowed_hosts = [\"engram.lan\"]\n")
	s := startServer(t, home, map[string]string{"ENGRAM_ALLOWED_ORIGINS": "http://localhost:5173"})
	initMCP := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
	for _, tc := range []struct {
		name, method, path, body string
		headers                  map[string]string
		want                     int
	}{
		{"a page on another site writes a turn", "POST", "/v1/turns", `{"session":"s","content":"x"}`,
			map[string]string{"Content-Type": "text/plain", "Origin": "http://evil.example"}, 403},
		{"rebinding", "GET", "/v1/stats", "", map[string]string{"Host": "evil.example"}, 403},
		{"rebinding /mcp", "POST", "/mcp", initMCP, map[string]string{"Host": "evil.example", "Content-Type": "application/json", "Accept": "application/json, text/event-stream"}, 403},
		{"text/plain", "POST", "/v1/turns", `{"session":"s","content":"x"}`, map[string]string{"Content-Type": "text/plain"}, 415},
		{"an allowed host", "GET", "/v1/stats", "", map[string]string{"Host": "engram.lan"}, 200},
		{"an allowed host on /mcp", "POST", "/mcp", initMCP, map[string]string{"Host": "engram.lan", "Content-Type": "application/json", "Accept": "application/json, text/event-stream"}, 200},
		{"an allowed origin", "POST", "/v1/recall", `{"query":"x"}`, map[string]string{"Content-Type": "application/json", "Origin": "http://localhost:5173"}, 200},
		{"same origin", "POST", "/v1/recall", `{"query":"x"}`, map[string]string{"Content-Type": "application/json", "Origin": "http://" + s.Addr()}, 200},
	} {
		resp := testutil.Request(t, tc.method, "http://"+s.Addr()+tc.path, tc.body, tc.headers)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, resp.StatusCode, tc.want)
		}
	}
	// The client the CLI uses talks to the server as before.
	c := httpapi.NewClient("http://"+s.Addr(), "")
	if _, err := c.Ingest(t.Context(), []engram.Turn{{Namespace: "default", Session: "s", Role: "user", Content: "from the command line"}}); err != nil {
		t.Fatalf("ingest through the client: %v", err)
	}
}
