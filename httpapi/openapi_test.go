package httpapi_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/engram-dev/engram/httpapi"
)

// TestOpenAPIMatchesRoutes keeps openapi.json true: every route Echo
// serves (but /metrics and /mcp) is described with its method and path, and
// every described operation is served.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	srv, err := httpapi.New(httpapi.Config{Addr: "127.0.0.1:0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	diffs, err := httpapi.OpenAPIMismatches(srv.Routes())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Error(d)
	}
	// The comparison catches both directions. The route dropped is one the
	// document describes (Routes comes in no fixed order, and /metrics and
	// /mcp are not compared).
	routes := slices.DeleteFunc(srv.Routes(), func(r *echo.Route) bool { return r.Method == "POST" && r.Path == "/v1/turns" })
	routes = append(routes, &echo.Route{Method: "GET", Path: "/v1/nope/:id"})
	diffs, _ = httpapi.OpenAPIMismatches(routes)
	if len(diffs) != 2 || diffs[1] != "served but not in openapi.json: GET /v1/nope/{id}" {
		t.Errorf("with a route dropped and one added, mismatches = %q", diffs)
	}
	if len(srv.Routes()) < 20 {
		t.Fatalf("only %d routes registered: the comparison proves little", len(srv.Routes()))
	}
}

// TestOpenAPIDocument checks that the served description is an OpenAPI 3
// document whose references all resolve and whose operations all describe
// their errors with the shared error schema.
func TestOpenAPIDocument(t *testing.T) {
	s := mustOpenStack(t, httpapi.Config{Token: "sekret"})
	req, _ := http.NewRequest("GET", s.URL+httpapi.OpenAPIPath, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET %s without the token: %d, want 401 (same rules as the API)", httpapi.OpenAPIPath, resp.StatusCode)
	}
	code, doc := s.do(t, "GET", httpapi.OpenAPIPath, nil)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d", httpapi.OpenAPIPath, code)
	}
	if v, _ := doc["openapi"].(string); !strings.HasPrefix(v, "3.") {
		t.Fatalf("openapi = %q, want 3.x", v)
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(httpapi.OpenAPISpec()) {
		t.Fatal("openapi.json does not parse")
	}

	// Every $ref points at a component that exists.
	comps := doc["components"].(map[string]any)
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				parts := strings.Split(strings.TrimPrefix(ref, "#/components/"), "/")
				if len(parts) != 2 || comps[parts[0]] == nil || comps[parts[0]].(map[string]any)[parts[1]] == nil {
					t.Errorf("dangling $ref %q", ref)
				}
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(doc)

	// The error schema is the body errors.go writes.
	errSchema := comps["schemas"].(map[string]any)["Error"].(map[string]any)
	inner := errSchema["properties"].(map[string]any)["error"].(map[string]any)["properties"].(map[string]any)
	for _, f := range []string{"code", "message", "field"} {
		if inner[f] == nil {
			t.Errorf("Error schema lacks error.%s", f)
		}
	}
	// Every operation has a success response and a 401 and 500 that use it.
	for path, ops := range doc["paths"].(map[string]any) {
		for method, op := range ops.(map[string]any) {
			rs := op.(map[string]any)["responses"].(map[string]any)
			ok := false
			for st := range rs {
				ok = ok || strings.HasPrefix(st, "2")
			}
			if !ok {
				t.Errorf("%s %s: no 2xx response", method, path)
			}
			for _, st := range []string{"401", "500"} {
				if r, _ := rs[st].(map[string]any); r == nil || !strings.Contains(r["$ref"].(string), "responses/") {
					t.Errorf("%s %s: no %s error response", method, path, st)
				}
			}
		}
	}
	if !strings.Contains(string(raw), `"/v1/health"`) {
		t.Error("spec lacks /v1/health")
	}
}
