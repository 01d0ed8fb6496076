package httpapi_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/engram-dev/engram/httpapi"
	"github.com/engram-dev/engram/internal/testutil"
)

// routePath fills a route's path parameters with sample values.
func routePath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		switch s {
		case ":name":
			parts[i] = "verify"
		case ":id":
			parts[i] = "no-such-id"
		}
	}
	return strings.Join(parts, "/")
}

// servedRoutes is every route an httpapi server registers, from its route
// table.
func servedRoutes(t *testing.T) []*echo.Route {
	t.Helper()
	srv, err := httpapi.New(httpapi.Config{Addr: "127.0.0.1:0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []*echo.Route
	for _, r := range srv.Routes() {
		if r.Method != echo.RouteNotFound {
			out = append(out, r)
		}
	}
	if len(out) < 25 {
		t.Fatalf("only %d routes: the walk proves little", len(out))
	}
	return out
}

// TestUnknownQueryParamEveryRoute walks the route table: on every route,
// an unknown query parameter is 400 naming it, before the route does
// anything (PATCH ...?dry_run=true must not mark a memory wrong, POST
// /v1/reindex?reembed=true must not start a reindex).
func TestUnknownQueryParamEveryRoute(t *testing.T) {
	s, _ := mustOpenEngineStack(t, httpapi.Config{})
	for _, r := range servedRoutes(t) {
		for _, q := range []string{"engram_bogus=1", "dry_run=true", "reembed=true"} {
			if r.Method == "DELETE" && q == "dry_run=true" {
				continue // a parameter of the forget routes
			}
			var body []byte
			if r.Method == "POST" || r.Method == "PATCH" {
				body = []byte(`{}`)
			}
			url := s.URL + routePath(r.Path) + "?" + q
			headers := map[string]string{}
			if body != nil {
				headers["Content-Type"] = "application/json"
			}
			resp := testutil.Request(t, r.Method, url, string(body), headers)
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			name, _, _ := strings.Cut(q, "=")
			if resp.StatusCode != 400 || r.Method != "HEAD" && !strings.Contains(string(raw), `"field":"`+name+`"`) {
				t.Errorf("%s %s?%s: %d %s, want 400 naming %s", r.Method, r.Path, q, resp.StatusCode, raw, name)
			}
		}
	}
}

// TestUnknownQueryParamNoRoute: a request no route serves is 404 or 405,
// whatever its query string.
func TestUnknownQueryParamNoRoute(t *testing.T) {
	s := mustOpenStack(t, httpapi.Config{})
	for _, c := range []struct {
		method, path string
		want         int
	}{{"GET", "/no/such?x=1", 404}, {"PUT", "/v1/stats?x=1", 405}, {"GET", "/v1/turns/abc?x=1", 405}} {
		resp := testutil.Request(t, c.method, s.URL+c.path, "", nil)
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s %s: %d, want %d", c.method, c.path, resp.StatusCode, c.want)
		}
	}
}

// TestHeadOnGetRoutes: every GET route answers HEAD as it answers GET,
// without the body (uptime checkers use HEAD).
func TestHeadOnGetRoutes(t *testing.T) {
	s, _ := mustOpenEngineStack(t, httpapi.Config{})
	n := 0
	for _, r := range servedRoutes(t) {
		if r.Method != "GET" {
			continue
		}
		n++
		get := testutil.Request(t, "GET", s.URL+routePath(r.Path), "", nil)
		io.Copy(io.Discard, get.Body)
		get.Body.Close()
		head := testutil.Request(t, "HEAD", s.URL+routePath(r.Path), "", nil)
		b, _ := io.ReadAll(head.Body)
		head.Body.Close()
		if head.StatusCode == http.StatusMethodNotAllowed || head.StatusCode != get.StatusCode || len(b) != 0 {
			t.Errorf("HEAD %s: %d with %d bytes; GET: %d", r.Path, head.StatusCode, len(b), get.StatusCode)
		}
	}
	if n < 15 {
		t.Fatalf("only %d GET routes", n)
	}
}
