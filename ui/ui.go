// Package ui is engram's web view: a timeline of the turns with what the
// layers derived from them, search (the default path or deep), memories,
// scenes, personas with their history, the knowledge graph of an entity
// over time, vault documents with their links, and the jobs and health.
//
// It is plain HTML, CSS and JavaScript embedded in the binary (no build
// step, nothing loaded from another host) and talks to engram's own HTTP
// API from the same origin: `engram serve` mounts Handler at /ui/. The
// assets hold no data, so they are served without the token; the page asks
// for the token when the API answers 401 and keeps it for the tab
// (sessionStorage).
package ui

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

// Path is where `engram serve` mounts the web view.
const Path = "/ui/"

//go:embed assets
var assets embed.FS

// Handler serves the web view's files under Path. Every response forbids
// loading anything from another origin (Content-Security-Policy) and
// framing (clickjacking).
func Handler() http.Handler {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	files := http.StripPrefix(Path, http.FileServer(http.FS(sub)))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "+
			"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "the web view is read with GET", http.StatusMethodNotAllowed)
			return
		}
		if !strings.HasPrefix(r.URL.Path, Path) {
			http.Redirect(w, r, Path, http.StatusFound)
			return
		}
		files.ServeHTTP(w, r)
	})
}
