package remotetest_test

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/engram-dev/engram/internal/remotetest"
)

// TestProxy sends requests through a proxy to a small JSON server: the
// proxy records them, answers itself where the fault says so, and rewrites
// the replies of one path only.
func TestProxy(t *testing.T) {
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"path": r.URL.Path})
	}))
	defer target.Close()
	u, err := url.Parse(target.URL)
	if err != nil {
		t.Fatal(err)
	}
	p := remotetest.NewProxy(t, u)
	if p.URL() != "http://"+p.Host() {
		t.Fatalf("URL %s, Host %s", p.URL(), p.Host())
	}
	p.Fault(func(n int, w http.ResponseWriter, r *http.Request) bool {
		if body, _ := io.ReadAll(r.Body); n == 2 && strings.Contains(string(body), "b") {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return true
		}
		return false
	})
	p.Rewrite("/api/embed", func(n int, reply map[string]any) { reply["n"] = n })
	get := func(method, path, body string) (int, map[string]any) {
		t.Helper()
		req, err := http.NewRequest(method, p.URL()+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer k")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var reply map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&reply)
		return resp.StatusCode, reply
	}
	if code, reply := get(http.MethodPost, "/api/embed", `{"input":["a",1]}`); code != http.StatusOK || reply["n"] != 1.0 {
		t.Fatalf("first request: %d %v, want 200 rewritten", code, reply)
	}
	if code, _ := get(http.MethodPost, "/api/embed", `{"input":["b"]}`); code != http.StatusServiceUnavailable {
		t.Fatalf("second request: %d, want the fault's 503", code)
	}
	if code, reply := get(http.MethodGet, "/api/version", ""); code != http.StatusOK || reply["n"] != nil || reply["path"] != "/api/version" {
		t.Fatalf("other path: %d %v, want the server's reply as it was", code, reply)
	}
	reqs := p.Requests()
	if len(reqs) != 3 || reqs[0].Method != http.MethodPost || reqs[0].Path != "/api/embed" || reqs[0].Auth != "Bearer k" ||
		!slices.Equal(reqs[0].Strings("input"), []string{"a"}) || reqs[2].Body != nil || len(reqs[2].Strings("input")) != 0 {
		t.Fatalf("requests %+v", reqs)
	}
}

func TestClosedPort(t *testing.T) {
	if c, err := net.Dial("tcp", remotetest.ClosedPort(t)); err == nil {
		c.Close()
		t.Fatal("something listens on the closed port")
	}
}

func TestTexts(t *testing.T) {
	in := remotetest.Texts(20)
	if len(in) != 20 || len(slices.Compact(slices.Sorted(slices.Values(in)))) != 20 {
		t.Fatalf("Texts(20) = %q: want 20 distinct texts", in)
	}
}
