package httpapi

import (
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/engram-dev/engram"
)

func (s *Server) vaultAdmin() (engram.VaultAdmin, error) {
	if s.Vaults == nil {
		return nil, engram.Errorf(engram.EUNSUPPORTED, "vaults are not available on this server")
	}
	return s.Vaults, nil
}

// getVaults lists the configured vaults with their counts.
func (s *Server) getVaults(c echo.Context) error {
	va, err := s.vaultAdmin()
	if err != nil {
		return err
	}
	if q, err := url.ParseQuery(c.Request().URL.RawQuery); err != nil || len(q) > 0 {
		k := "query"
		for k = range q {
			break
		}
		return engram.FieldError(k, "GET /v1/vaults takes no parameters")
	}
	vs, err := va.Vaults(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"vaults": nonNil(vs)})
}

// postVaultsSync syncs every configured vault, or the one named by
// {"vault": "/abs/path"}, and answers with a report per vault (200 even
// when one failed: its report has "error").
func (s *Server) postVaultsSync(c echo.Context) error {
	va, err := s.vaultAdmin()
	if err != nil {
		return err
	}
	body, err := s.readBody(c)
	if err != nil {
		return err
	}
	var root string
	if err := decodeBody(body, bodyShape{like: `{"vault": "/path/to/vault"} or {}`, optional: true, fields: []field{
		{"vault", &root, "a string: the vault's folder, an absolute path"},
	}}); err != nil {
		return err
	}
	if root != "" {
		if root, err = vaultRoot("vault", root); err != nil {
			return err
		}
	}
	reports, err := va.SyncVaults(c.Request().Context(), root)
	if err != nil {
		return err
	}
	for i := range reports {
		r := &reports[i]
		r.Indexed, r.Removed, r.Skipped, r.Unresolved = nonNil(r.Indexed), nonNil(r.Removed), nonNil(r.Skipped), nonNil(r.Unresolved)
	}
	return c.JSON(http.StatusOK, map[string]any{"reports": nonNil(reports)})
}

// getDocGraph answers GET /v1/graph: the documents a vault document links
// to within depth (each with the document it was reached through), the
// documents linking to it, and its links that resolve to nothing. 404 for
// an unknown document.
func (s *Server) getDocGraph(c echo.Context) error {
	if s.VaultDocs == nil {
		return engram.Errorf(engram.EUNSUPPORTED, "vaults are not available on this server")
	}
	p, err := s.queryParams(c, "doc", "depth", "vault")
	if err != nil {
		return err
	}
	doc := p.name("doc")
	depth := p.intRange("depth", 1, engram.MaxGraphDepth, engram.DefaultGraphDepth)
	root := p.name("vault")
	switch {
	case p.err != nil:
		return p.err
	case doc == "":
		return engram.FieldError("doc", "doc is required: a path in the vault, a title or an alias (for example ?doc=docs/adrs/0007.md)")
	}
	if root != "" {
		if root, err = vaultRoot("vault", root); err != nil {
			return err
		}
	}
	g, err := s.VaultDocs.DocGraph(c.Request().Context(), root, doc, depth)
	if err != nil {
		return err
	}
	g.Linked, g.Backlinks, g.Unresolved = nonNil(g.Linked), nonNil(g.Backlinks), nonNil(g.Unresolved)
	return c.JSON(http.StatusOK, g)
}

// docGraphValues is the query string of GET /v1/graph.
func docGraphValues(vault, doc string, depth int) url.Values {
	v := url.Values{}
	v.Set("doc", doc)
	setParam(v, "vault", vault)
	if depth > 0 {
		v.Set("depth", strconv.Itoa(depth))
	}
	return v
}

// vaultRoot checks a vault's folder as a client names it: absolute,
// returned cleaned (the form config.toml and the index hold).
func vaultRoot(field, root string) (string, error) {
	if !filepath.IsAbs(root) {
		return "", engram.FieldError(field, "%s %q must be an absolute path (the vault's folder)", field, root)
	}
	return filepath.Clean(root), nil
}

// intRange returns an integer from lo to hi; def when absent.
func (p *params) intRange(k string, lo, hi, def int) int {
	if !p.v.Has(k) {
		return def
	}
	s := p.v.Get(k)
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		p.fail(engram.FieldError(k, "%s must be an integer from %d to %d, got %q", k, lo, hi, s))
		return 0
	}
	return n
}
