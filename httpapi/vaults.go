package httpapi

import (
	"context"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/engram-dev/engram"
)

// noVaults is the error of the vault routes without their services.
const noVaults = "vaults are not available on this server"

// getVaults lists the configured vaults with their counts.
func (s *Server) getVaults(c echo.Context) error {
	return serve(c, http.StatusOK, s.Vaults, noVaults, noQuery,
		list("vaults", func(va engram.VaultAdmin, ctx context.Context, _ struct{}) ([]engram.VaultStatus, error) {
			return va.Vaults(ctx)
		}))
}

// postVaultsSync syncs every configured vault, or the one named by
// {"vault": "/abs/path"}, and answers with a report per vault (200 even
// when one failed: its report has "error").
func (s *Server) postVaultsSync(c echo.Context) error {
	return serve(c, http.StatusOK, s.Vaults, noVaults, fromBody(s, func(body []byte) (string, error) {
		var root string
		if err := decodeBody(body, bodyShape{like: `{"vault": "/path/to/vault"} or {}`, optional: true, fields: []field{
			{"vault", &root, "a string: the vault's folder, an absolute path"},
		}}); err != nil || root == "" {
			return root, err
		}
		return vaultRoot("vault", root)
	}), list("reports", func(va engram.VaultAdmin, ctx context.Context, root string) ([]engram.VaultSyncReport, error) {
		reports, err := va.SyncVaults(ctx, root)
		for i := range reports {
			r := &reports[i]
			r.Indexed, r.Removed, r.Skipped, r.Unresolved = nonNil(r.Indexed), nonNil(r.Removed), nonNil(r.Skipped), nonNil(r.Unresolved)
		}
		return reports, err
	}))
}

// docGraphQuery is what GET /v1/graph asks.
type docGraphQuery struct {
	root, doc string
	depth     int
}

// getDocGraph answers GET /v1/graph: the documents a vault document links
// to within depth (each with the document it was reached through), the
// documents linking to it, and its links that resolve to nothing. 404 for
// an unknown document.
func (s *Server) getDocGraph(c echo.Context) error {
	return serve(c, http.StatusOK, s.VaultDocs, noVaults, fromQuery(s, func(p *params) (q docGraphQuery, err error) {
		q.doc = p.name("doc")
		q.depth = p.intRange("depth", 1, engram.MaxGraphDepth, engram.DefaultGraphDepth)
		q.root = p.name("vault")
		switch {
		case p.err != nil:
			return q, nil // fromQuery reports it
		case q.doc == "":
			return q, engram.FieldError("doc", "doc is required: a path in the vault, a title or an alias (for example ?doc=docs/adrs/0007.md)")
		case q.root != "":
			q.root, err = vaultRoot("vault", q.root)
		}
		return q, err
	}), func(vs engram.VaultService, ctx context.Context, q docGraphQuery) (engram.DocGraph, error) {
		g, err := vs.DocGraph(ctx, q.root, q.doc, q.depth)
		g.Linked, g.Backlinks, g.Unresolved = nonNil(g.Linked), nonNil(g.Backlinks), nonNil(g.Unresolved)
		return g, err
	})
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
