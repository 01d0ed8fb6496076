package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/httpapi"
	"github.com/engram-dev/engram/palace"
	"github.com/engram-dev/engram/vault"
)

// graphVault is the root of the documents putGraphDocs writes.
const graphVault = "/vaults/platform"

// putGraphDocs writes an incident linking an ADR that links a rule (which
// links a runbook), and a note with a link to nothing, then resolves the
// links: the shapes the sync writes.
func putGraphDocs(tb testing.TB, p *palace.DB) {
	tb.Helper()
	ctx := context.Background()
	x := vault.SQLStore{DB: p}
	put := func(path, title, typ, text string, links ...string) {
		doc := engram.VaultDoc{Vault: graphVault, Namespace: "default", Path: path, Title: title, Type: typ,
			Hash: "h-" + path, Size: int64(len(text)), ModTime: layerDay0}
		var ls []engram.DocLink
		for i, l := range links {
			ls = append(ls, engram.DocLink{FromPath: path, Target: l, Kind: "wiki", Line: 5 + i})
		}
		chunks := []engram.DocChunk{{Heading: []string{title}, Text: text, StartLine: 1, EndLine: 9}}
		if err := x.PutVaultDoc(ctx, doc, chunks, ls, nil); err != nil {
			tb.Fatal(err)
		}
	}
	put("docs/incidents/outage.md", "Billing outage", "incident", "The pool ran dry; see the ADR.", "adr-0007", "does-not-exist")
	put("docs/adrs/0007.md", "ADR-0007 Use Postgres for billing", "adr", "Postgres behind PgBouncer.", "connection-pools")
	put("docs/rules/connection-pools.md", "Connection pool rules", "rule", "Port 6432; error E4021 means the pool is full.", "pgbouncer-restart")
	put("docs/runbooks/pgbouncer-restart.md", "Restart PgBouncer", "runbook", "PAUSE, reload, RESUME.")
	byName := map[string]string{
		"adr-0007":          "docs/adrs/0007.md",
		"connection-pools":  "docs/rules/connection-pools.md",
		"pgbouncer-restart": "docs/runbooks/pgbouncer-restart.md",
	}
	if _, err := x.ResolveVaultLinks(ctx, graphVault, func(_, target string) (string, bool) {
		p, ok := byName[target]
		return p, ok
	}); err != nil {
		tb.Fatal(err)
	}
}

// mustOpenGraph serves a real palace holding putGraphDocs as the server's
// VaultDocs over loopback HTTP.
func mustOpenGraph(tb testing.TB) *stack {
	tb.Helper()
	p, err := palace.Open(filepath.Join(tb.TempDir(), "palace.db"), palace.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { p.Close() })
	putGraphDocs(tb, p)
	srv, err := httpapi.New(httpapi.Config{Addr: "127.0.0.1:0"}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	srv.VaultDocs = vault.SQLStore{DB: p}
	ts := httptest.NewServer(srv.Handler())
	tb.Cleanup(ts.Close)
	return &stack{URL: ts.URL, Palace: p}
}

// graphPaths returns "path@depth<via" for each document of out[key].
func graphPaths(tb testing.TB, out map[string]any, key string) []string {
	tb.Helper()
	got := []string{}
	for _, d := range objects(tb, out, key) {
		s := d["path"].(string) + "@" + strings.Repeat("*", int(d["depth"].(float64)))
		if via, _ := d["via"].(string); via != "" {
			s += "<" + via
		}
		got = append(got, s)
	}
	return got
}

func TestDocGraph(t *testing.T) {
	s := mustOpenGraph(t)
	code, raw, out := s.get(t, "/v1/graph?doc="+url.QueryEscape("docs/incidents/outage.md"))
	if code != http.StatusOK {
		t.Fatalf("graph: %d %s", code, raw)
	}
	if doc := out["doc"].(map[string]any); doc["path"] != "docs/incidents/outage.md" || doc["vault"] != graphVault || doc["type"] != "incident" {
		t.Errorf("doc: %v", doc)
	}
	// Depth 2 (the default): the ADR, then the rule reached through it.
	want := []string{"docs/adrs/0007.md@*<docs/incidents/outage.md", "docs/rules/connection-pools.md@**<docs/adrs/0007.md"}
	if got := graphPaths(t, out, "linked"); !slices.Equal(got, want) {
		t.Errorf("linked: %v, want %v", got, want)
	}
	if got := graphPaths(t, out, "backlinks"); len(got) != 0 {
		t.Errorf("backlinks of the incident: %v", got)
	}
	un := out["unresolved"].([]any)
	if len(un) != 1 || un[0].(map[string]any)["target"] != "does-not-exist" {
		t.Errorf("unresolved: %v", un)
	}

	for _, c := range []struct {
		q    string
		want []string
	}{
		{"&depth=1", []string{"docs/adrs/0007.md@*<docs/incidents/outage.md"}},
		{"&depth=6", []string{"docs/adrs/0007.md@*<docs/incidents/outage.md", "docs/rules/connection-pools.md@**<docs/adrs/0007.md",
			"docs/runbooks/pgbouncer-restart.md@***<docs/rules/connection-pools.md"}},
		{"&depth=3&vault=" + url.QueryEscape(graphVault+"/"), nil}, // a trailing slash is cleaned
	} {
		code, raw, out := s.get(t, "/v1/graph?doc=docs/incidents/outage.md"+c.q)
		if code != http.StatusOK {
			t.Errorf("%s: %d %s", c.q, code, raw)
			continue
		}
		if got := graphPaths(t, out, "linked"); c.want != nil && !slices.Equal(got, c.want) {
			t.Errorf("%s: linked %v, want %v", c.q, got, c.want)
		} else if c.want == nil && len(got) != 3 {
			t.Errorf("%s: linked %v, want the three documents", c.q, got)
		}
	}

	// By title or alias, case-insensitive; backlinks name the linking doc.
	code, raw, out = s.get(t, "/v1/graph?doc="+url.QueryEscape("adr-0007 use postgres for billing")+"&depth=1")
	if code != http.StatusOK || out["doc"].(map[string]any)["path"] != "docs/adrs/0007.md" {
		t.Fatalf("by title: %d %s", code, raw)
	}
	if got := graphPaths(t, out, "backlinks"); !slices.Equal(got, []string{"docs/incidents/outage.md@*"}) {
		t.Errorf("backlinks of the ADR: %v", got)
	}
	if un := out["unresolved"].([]any); len(un) != 0 {
		t.Errorf("unresolved of the ADR: %v (want [] not null)", un)
	}
	// A leaf has empty lists, never null.
	if _, raw, _ := s.get(t, "/v1/graph?doc=docs/runbooks/pgbouncer-restart.md"); !strings.Contains(raw, `"linked":[]`) {
		t.Errorf("leaf: %s", raw)
	}

	// Unknown documents, and a document of another vault.
	checkNotFound(t, s, "/v1/graph?", "doc=nope.md", "doc=docs/adrs/0007.md&vault=/vaults/other")
}

func TestDocGraphBadParams(t *testing.T) {
	s := mustOpenGraph(t)
	long := strings.Repeat("x", engram.DefaultMaxFieldBytes+1)
	checkParams(t, s, []paramCase{
		{"/v1/graph", 400, "doc"},
		{"/v1/graph?doc=", 400, "doc"},
		{"/v1/graph?doc=a.md&depth=0", 400, "depth"},
		{"/v1/graph?doc=a.md&depth=7", 400, "depth"},
		{"/v1/graph?doc=a.md&depth=-1", 400, "depth"},
		{"/v1/graph?doc=a.md&depth=two", 400, "depth"},
		{"/v1/graph?doc=a.md&depth=", 400, "depth"},
		{"/v1/graph?doc=a.md&depth=1&depth=2", 400, "depth"},
		{"/v1/graph?doc=a.md&vault=relative/dir", 400, "vault"},
		{"/v1/graph?doc=a.md&entity=Alice", 400, "entity"},
		{"/v1/graph?doc=%ff", 400, "doc"},
		{"/v1/graph?doc=%zz", 400, "query"},
		{"/v1/graph?doc=" + long, 413, "doc"},
		{"/v1/graph?doc=docs/adrs/0007.md&depth=6", 200, ""},
		{"/v1/graph?doc=docs/adrs/0007.md&depth=1", 200, ""},
	})
	// A server without vaults answers 501 on the vault routes.
	none := mustOpenStack(t, httpapi.Config{})
	for _, r := range []struct{ method, path string }{{"GET", "/v1/graph?doc=a.md"}, {"GET", "/v1/vaults"}, {"POST", "/v1/vaults/sync"}} {
		code, out := none.do(t, r.method, r.path, nil)
		if code != http.StatusNotImplemented || out["error"].(map[string]any)["code"] != engram.EUNSUPPORTED {
			t.Errorf("%s %s without vaults: %d %v", r.method, r.path, code, out)
		}
	}
}

// syncAdmin is an engram.VaultAdmin over a real palace and real folders,
// synced by vault.Syncer (the engine's wiring without the engine).
type syncAdmin struct {
	p     *palace.DB
	roots []string
}

var _ engram.VaultAdmin = syncAdmin{}

func (a syncAdmin) Vaults(ctx context.Context) ([]engram.VaultStatus, error) {
	var out []engram.VaultStatus
	store := vault.SQLStore{DB: a.p}
	for _, root := range a.roots {
		docs, err := store.Docs(ctx, root)
		if err != nil {
			return nil, err
		}
		un, err := store.UnresolvedLinks(ctx, root)
		if err != nil {
			return nil, err
		}
		st := engram.VaultStatus{Path: root, Namespace: "default", Docs: len(docs), UnresolvedLinks: len(un)}
		for _, d := range docs {
			st.Chunks += d.Chunks
		}
		out = append(out, st)
	}
	return out, nil
}

func (a syncAdmin) SyncVaults(ctx context.Context, root string) ([]engram.VaultSyncReport, error) {
	var out []engram.VaultSyncReport
	for _, r := range a.roots {
		if root != "" && r != root {
			continue
		}
		st := vault.SQLStore{DB: a.p}
		s := &vault.Syncer{Store: st}
		rep, err := s.Sync(ctx, r, "default")
		wire := engram.VaultSyncReport{Vault: r, Namespace: "default", Files: rep.Files, Unchanged: rep.Unchanged,
			Indexed: rep.Indexed, Removed: rep.Removed, TookMS: rep.TookMS}
		if err != nil {
			wire.Error = err.Error()
		}
		if wire.Unresolved, err = st.UnresolvedLinks(ctx, r); err != nil {
			return nil, err
		}
		wire.UnresolvedLinks = len(wire.Unresolved)
		out = append(out, wire)
	}
	if root != "" && len(out) == 0 {
		return nil, engram.Errorf(engram.ENOTFOUND, "%s is not a configured vault", root)
	}
	return out, nil
}

func TestVaultsListAndSync(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "notes")
	write := func(name, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.md", "# A\n\nSee [[b]] and [[missing]].\n")
	write("sub/b.md", "# B\n\nBack to [[a]].\n")
	gone := filepath.Join(dir, "gone") // configured, but not there: its sync fails
	p, err := palace.Open(filepath.Join(dir, "palace.db"), palace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	srv, err := httpapi.New(httpapi.Config{Addr: "127.0.0.1:0", Token: "secret"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv.Vaults, srv.VaultDocs = syncAdmin{p: p, roots: []string{root, gone}}, vault.SQLStore{DB: p}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	s := &stack{URL: hs.URL, Token: "secret", Palace: p}

	if code, out := (&stack{URL: hs.URL}).do(t, "POST", "/v1/vaults/sync", nil); code != http.StatusUnauthorized {
		t.Errorf("sync without the token: %d %v", code, out)
	}
	code, out := s.do(t, "POST", "/v1/vaults/sync", []byte(`{"vault":"`+root+`/"}`))
	if code != http.StatusOK {
		t.Fatalf("sync: %d %v", code, out)
	}
	reps := out["reports"].([]any)
	if len(reps) != 1 {
		t.Fatalf("reports: %v", reps)
	}
	r := reps[0].(map[string]any)
	if r["vault"] != root || r["files"] != 2.0 || len(r["indexed"].([]any)) != 2 || r["unresolved_links"] != 1.0 || r["error"] != nil {
		t.Errorf("first sync: %v", r)
	}
	// Every vault, the missing one failing in its own report.
	code, out = s.do(t, "POST", "/v1/vaults/sync", nil)
	if code != http.StatusOK || len(out["reports"].([]any)) != 2 {
		t.Fatalf("sync all: %d %v", code, out)
	}
	r, bad := out["reports"].([]any)[0].(map[string]any), out["reports"].([]any)[1].(map[string]any)
	if len(r["indexed"].([]any)) != 0 || r["unchanged"] != 2.0 || r["unresolved_links"] != 1.0 {
		t.Errorf("second sync: %v", r)
	}
	if bad["vault"] != gone || bad["error"] == nil || bad["error"] == "" {
		t.Errorf("sync of a missing folder: %v", bad)
	}

	code, raw, list := s.get(t, "/v1/vaults")
	if code != http.StatusOK {
		t.Fatalf("list: %d %s", code, raw)
	}
	vs := list["vaults"].([]any)
	if v := vs[0].(map[string]any); len(vs) != 2 || v["path"] != root || v["docs"] != 2.0 || v["unresolved_links"] != 1.0 || v["chunks"].(float64) < 2 {
		t.Errorf("list: %s", raw)
	}
	if code, raw, _ := s.get(t, "/v1/graph?doc=sub/b.md&vault="+url.QueryEscape(root)); code != http.StatusOK || !strings.Contains(raw, `"path":"a.md"`) {
		t.Errorf("graph of a synced doc: %d %s", code, raw)
	}

	for _, c := range []struct {
		body  string
		code  int
		field string
	}{
		{`{}`, 200, ""},
		{`{"vault":null}`, 200, ""},
		{`{"vault":"notes"}`, 400, "vault"},
		{`{"vault":5}`, 400, "vault"},
		{`{"vault":"/elsewhere"}`, 404, ""},
		{`{"path":"/x"}`, 400, "path"},
		{`[1]`, 400, "body"},
		{`{"vault":`, 400, "body"},
		{"\xff", 400, "body"},
	} {
		code, out := s.do(t, "POST", "/v1/vaults/sync", []byte(c.body))
		if code != c.code {
			t.Errorf("%s: %d %v, want %d", c.body, code, out, c.code)
			continue
		}
		if c.field != "" {
			if e, _ := out["error"].(map[string]any); e == nil || e["field"] != c.field {
				t.Errorf("%s: %v, want an error naming %q", c.body, out, c.field)
			}
		}
	}
	if code, raw, out := s.get(t, "/v1/vaults?namespace=default"); code != 400 || out["error"].(map[string]any)["field"] != "namespace" {
		t.Errorf("list with a parameter: %d %s", code, raw)
	}
}
