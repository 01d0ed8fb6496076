package httpapi

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"
)

// OpenAPIPath is where the OpenAPI 3 description of the API is served. It
// follows the same auth rules as the rest of the API.
const OpenAPIPath = "/v1/openapi.json"

// openAPISpec describes every route of the API but /metrics and /mcp. A
// test compares it with the routes Echo has registered, so a route added
// without its description fails the build's tests.
//
//go:embed openapi.json
var openAPISpec []byte

// OpenAPISpec returns the OpenAPI 3 description of the API, as JSON.
func OpenAPISpec() []byte { return append([]byte(nil), openAPISpec...) }

func (s *Server) getOpenAPI(c echo.Context) error {
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, openAPISpec)
}

// Routes returns the routes the server has registered.
func (s *Server) Routes() []*echo.Route { return s.echo.Routes() }

// undocumented reports whether a route is deliberately left out of the
// OpenAPI description: the Prometheus metrics and the MCP endpoint speak
// their own protocols, and the web view is pages, not API.
func undocumented(path string) bool {
	return path == MetricsPath || path == "/mcp" || strings.HasPrefix(path, "/mcp/") || isUI(path)
}

// OpenAPIMismatches compares the OpenAPI description with routes (an Echo
// path's :param is the spec's {param}) and returns what differs, one line
// each: routes the spec lacks and operations no route serves. An empty
// result means the description is true to the server.
func OpenAPIMismatches(routes []*echo.Route) ([]string, error) {
	var spec struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(openAPISpec, &spec); err != nil {
		return nil, fmt.Errorf("parse openapi.json: %w", err)
	}
	inSpec := map[string]bool{}
	for path, ops := range spec.Paths {
		for method := range ops {
			switch method {
			case "parameters", "summary", "description", "servers":
				continue
			}
			inSpec[strings.ToUpper(method)+" "+path] = true
		}
	}
	served := map[string]bool{}
	var out []string
	for _, r := range routes {
		// HEAD is GET without the body, on every GET route.
		if undocumented(r.Path) || r.Method == echo.RouteNotFound || r.Method == http.MethodHead {
			continue
		}
		key := r.Method + " " + specPath(r.Path)
		if served[key] {
			continue
		}
		served[key] = true
		if !inSpec[key] {
			out = append(out, "served but not in openapi.json: "+key)
		}
	}
	for key := range inSpec {
		if !served[key] {
			out = append(out, "in openapi.json but not served: "+key)
		}
	}
	slices.Sort(out)
	return out, nil
}

// specPath turns an Echo path into an OpenAPI one: /v1/jobs/:name/run is
// /v1/jobs/{name}/run.
func specPath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		if name, ok := strings.CutPrefix(s, ":"); ok {
			parts[i] = "{" + name + "}"
		}
	}
	return strings.Join(parts, "/")
}
