package httpapi

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/engram-dev/engram"
)

// queryOf is every route's query parameters, as openapi.json describes
// them, keyed "METHOD /echo/path": the one table checkQuery refuses the
// others by, so that the description and the server cannot drift apart.
// A route the description leaves out (/metrics, /mcp) takes none.
var queryOf = mustQueryOf(openAPISpec)

func mustQueryOf(spec []byte) map[string][]string {
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	type param struct{ Name, In string }
	if err := json.Unmarshal(spec, &doc); err != nil {
		panic(fmt.Sprintf("httpapi: openapi.json: %v", err))
	}
	out := map[string][]string{}
	for path, ops := range doc.Paths {
		var common []param
		if raw, ok := ops["parameters"]; ok {
			if err := json.Unmarshal(raw, &common); err != nil {
				panic(fmt.Sprintf("httpapi: openapi.json: %s parameters: %v", path, err))
			}
		}
		for method, raw := range ops {
			switch method {
			case "parameters", "summary", "description", "servers":
				continue
			}
			var op struct{ Parameters []param }
			if err := json.Unmarshal(raw, &op); err != nil {
				panic(fmt.Sprintf("httpapi: openapi.json: %s %s: %v", method, path, err))
			}
			names := []string{}
			for _, p := range append(common, op.Parameters...) {
				if p.In == "query" {
					names = append(names, p.Name)
				}
			}
			out[strings.ToUpper(method)+" "+echoPath(path)] = names
		}
	}
	return out
}

// echoPath turns an OpenAPI path into an Echo one: /v1/jobs/{name}/run is
// /v1/jobs/:name/run.
func echoPath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			parts[i] = ":" + s[1:len(s)-1]
		}
	}
	return strings.Join(parts, "/")
}

// checkQuery applies one rule to every route's query string, before the
// route reads its body or does anything: it must parse, and may hold only
// the route's parameters, each once, in UTF-8; anything else is 400 naming
// the parameter. The web view's files are left alone: their query (?view=)
// is read by the page's script, not by the server.
func checkQuery(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		raw := c.Request().URL.RawQuery
		if raw == "" || isUI(c.Path()) {
			return next(c)
		}
		method := c.Request().Method
		if method == "HEAD" {
			method = "GET"
		}
		known, ok := queryOf[method+" "+c.Path()]
		if !ok && c.Path() != MetricsPath && c.Path() != MCPPath {
			return next(c) // no such route: the 404 or 405 is the answer
		}
		// c.QueryParams() drops pairs it cannot decode; parse again to refuse them.
		v, err := url.ParseQuery(raw)
		if err != nil {
			return engram.FieldError("query", "the query string does not parse: %v", err)
		}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if !slices.Contains(known, k) {
				if len(known) == 0 {
					return engram.FieldError(k, "unknown parameter %q: %s %s takes no query parameters", k, method, c.Path())
				}
				return engram.FieldError(k, "unknown parameter %q (known: %s)", k, strings.Join(known, ", "))
			}
			if len(v[k]) > 1 {
				return engram.FieldError(k, "parameter %q is given %d times; give it once", k, len(v[k]))
			}
			if !utf8.ValidString(v.Get(k)) {
				return engram.FieldError(k, "%s is not valid UTF-8", k)
			}
		}
		return next(c)
	}
}
