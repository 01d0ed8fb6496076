package vault

import (
	"path"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// DocRef is what a Resolver needs to know of a document.
type DocRef struct {
	Path    string // slash-separated, relative to the vault root
	Title   string
	Aliases []string
}

// Ref returns the DocRef of d.
func (d Doc) Ref() DocRef {
	return DocRef{Path: d.Path, Title: d.Title, Aliases: d.Aliases}
}

// Resolver resolves link targets to vault paths the way Obsidian does,
// plus titles and aliases. Build it with NewResolver from all the docs of a
// vault; it is read-only afterwards and safe for concurrent use.
type Resolver struct {
	exact map[string]string   // path -> path
	fold  map[string][]string // folded path -> paths
	base  map[string][]string // folded base name without extension -> paths
	names map[string][]string // folded title or alias -> paths
}

// NewResolver indexes docs. Paths are kept as given; comparisons fold case
// and Unicode normalisation (a macOS file name in NFD matches a link typed
// in NFC).
func NewResolver(docs []DocRef) *Resolver {
	r := &Resolver{
		exact: make(map[string]string, len(docs)),
		fold:  make(map[string][]string, len(docs)),
		base:  make(map[string][]string, len(docs)),
		names: make(map[string][]string, len(docs)),
	}
	for _, d := range docs {
		if d.Path == "" {
			continue
		}
		if _, dup := r.exact[d.Path]; dup {
			continue
		}
		r.exact[d.Path] = d.Path
		r.fold[fold(d.Path)] = append(r.fold[fold(d.Path)], d.Path)
		b := fold(baseName(d.Path))
		r.base[b] = append(r.base[b], d.Path)
		seen := map[string]bool{}
		for _, n := range append([]string{d.Title}, d.Aliases...) {
			k := fold(strings.TrimSpace(n))
			if k == "" || seen[k] {
				continue
			}
			seen[k] = true
			r.names[k] = append(r.names[k], d.Path)
		}
	}
	return r
}

func fold(s string) string {
	return strings.ToLower(norm.NFC.String(s))
}

// Resolve returns the vault path of the document target points to, as
// written in a link in the document at path from. It tries, in order, and
// stops at the first strategy that finds one document:
//
//  1. the path from the vault root, as written, or with .md or .markdown
//     added (case-sensitive first, then case-insensitive);
//  2. the path relative to from's folder, likewise (tried first when target
//     starts with "./" or "../", as relative Markdown links do);
//  3. the file name, or a trailing part of the path ("rules/db-migrations"
//     matches "docs/rules/db-migrations.md"), case-insensitive, with or
//     without the extension;
//  4. a document title or alias, case-insensitive.
//
// A strategy that finds more than one document makes the target ambiguous:
// Resolve returns ok false and tries no further, since guessing would make
// a wrong edge in the graph. Unknown targets also return ok false.
func (r *Resolver) Resolve(from, target string) (string, bool) {
	t := strings.TrimSpace(target)
	if t == "" {
		return "", false
	}
	rel := path.Join(path.Dir(from), t)
	paths := []string{strings.TrimPrefix(t, "/"), rel}
	if strings.HasPrefix(t, "./") || strings.HasPrefix(t, "../") {
		paths[0], paths[1] = rel, paths[0]
	}
	for _, p := range paths {
		if got, n := r.byPath(p); n > 0 {
			return got, n == 1
		}
	}
	if got, n := r.bySuffix(t); n > 0 {
		return got, n == 1
	}
	if ps := r.names[fold(t)]; len(ps) > 0 {
		return ps[0], len(ps) == 1
	}
	return "", false
}

// byPath looks p up as a path from the root; n is the number of matches
// of the first form that matched.
func (r *Resolver) byPath(p string) (string, int) {
	p = path.Clean(p)
	if p == "." || p == ".." || strings.HasPrefix(p, "../") {
		return "", 0
	}
	forms := []string{p, p + ".md", p + ".markdown"}
	for _, f := range forms {
		if got, ok := r.exact[f]; ok {
			return got, 1
		}
	}
	for _, f := range forms {
		if ps := r.fold[fold(f)]; len(ps) > 0 {
			return ps[0], len(ps)
		}
	}
	return "", 0
}

// bySuffix matches the file name or a trailing part of the path.
func (r *Resolver) bySuffix(t string) (string, int) {
	t = strings.TrimPrefix(path.Clean("/"+t), "/")
	if t == "" {
		return "", 0
	}
	want := fold(t)
	wantNoExt := fold(strings.TrimSuffix(t, path.Ext(t)))
	if e := strings.ToLower(path.Ext(t)); e != ".md" && e != ".markdown" {
		wantNoExt = want // "v1.2 notes" has no .md extension to drop
	}
	var found []string
	for _, p := range r.base[fold(baseName(t))] {
		fp := fold(p)
		fpNoExt := fold(strings.TrimSuffix(p, path.Ext(p)))
		if matchSuffix(fp, want) || matchSuffix(fpNoExt, wantNoExt) {
			found = append(found, p)
		}
	}
	if len(found) == 0 {
		return "", 0
	}
	return found[0], len(found)
}

// matchSuffix reports whether p ends with the path components of s.
func matchSuffix(p, s string) bool {
	return p == s || strings.HasSuffix(p, "/"+s)
}
