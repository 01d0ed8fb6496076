package recall_test

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/recall"
	"github.com/engram-dev/engram/vault"
)

// mustVault syncs a copy of testdata/vault into the fixture's palace, with
// the fixture's embedder and vectors.
func mustVault(t *testing.T, f *fixture) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "vault")
	if err := os.CopyFS(root, os.DirFS("../testdata/vault")); err != nil {
		t.Fatal(err)
	}
	s := &vault.Syncer{Store: vault.SQLStore{DB: f.db, Vectors: f.vecs}, Embedder: f.emb}
	if _, err := s.Sync(context.Background(), root, "default"); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestRecall_Docs(t *testing.T) {
	f := mustOpenFixture(t, []string{
		"The pooler kept rejecting clients during the billing outage.",
		"Let's look at the connection pool limits again tomorrow.",
		"Lunch moved to Thursday.",
		"We restarted pgbouncer at 14:05 and the errors stopped.",
	})
	mustVault(t, f)
	s := f.service()
	s.Docs = vault.SQLStore{DB: f.db}
	ctx := context.Background()
	for _, mode := range []string{engram.ModeDeep, engram.ModeShallow, engram.ModeKeyword} {
		// An exact identifier finds its document first.
		for _, q := range []string{"E4021", "what listens on port 6432"} {
			resp, err := s.Recall(ctx, engram.RecallRequest{Query: q, Mode: mode})
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.Results) == 0 || resp.Results[0].Kind != engram.KindDoc || resp.Results[0].Doc.Path != "docs/rules/connection-pools.md" {
				t.Fatalf("%s %q: first result %+v", mode, q, first(resp.Results))
			}
			r := resp.Results[0]
			if len(r.Sources) != 1 || r.Sources[0].Path != r.Doc.Path || r.Sources[0].Lines == "" || r.Doc.StartLine == 0 || len(r.Doc.Heading) == 0 {
				t.Errorf("%s %q: the doc result names no file, lines or heading: %+v", mode, q, r)
			}
		}
	}
	// Deep recall follows links: the incident leads to its ADR and a rule,
	// though neither holds the query's words (keyword evidence only here, so
	// that nothing else matches).
	kw := recall.NewService(f.db)
	kw.Docs = vault.SQLStore{DB: f.db}
	resp, err := kw.Recall(ctx, engram.RecallRequest{Query: "do you remember month-end invoicing workers scaling to 40 pods", Mode: engram.ModeDeep, K: 20,
		Kinds: []string{engram.KindDoc}})
	if err != nil {
		t.Fatal(err)
	}
	linked := map[string]int{}
	found := map[string]bool{}
	for i, r := range resp.Results {
		found[r.Doc.Path] = true
		if r.Kind != engram.KindDoc {
			t.Errorf("only documents were asked for: %+v", r)
		}
		if i == 0 && !strings.Contains(r.Doc.Path, "incidents/2026-03-14") {
			t.Errorf("the incident is not first: %+v", r.Doc)
		}
		if r.Doc.LinkedFrom != "" {
			linked[r.Doc.Path] = r.Doc.Depth
		}
	}
	if !found["docs/adrs/0007-use-postgres.md"] || !slices.ContainsFunc(slices.Collect(maps.Keys(linked)), func(p string) bool { return strings.HasPrefix(p, "docs/rules/") }) ||
		linked["docs/adrs/0003-use-mysql-for-billing.md"] != 2 {
		t.Errorf("linked documents %v: want the ADR, a rule reached through a link, and the ADR it supersedes at depth 2", linked)
	}
	// At most two chunks of one document.
	perDoc := map[string]int{}
	for _, r := range resp.Results {
		if perDoc[r.Doc.Path]++; perDoc[r.Doc.Path] > maxChunksPerDoc {
			t.Errorf("%d chunks of %s", perDoc[r.Doc.Path], r.Doc.Path)
		}
	}

	// Turns still come: both kinds by default.
	resp, err = s.Recall(ctx, engram.RecallRequest{Query: "pgbouncer restart", Mode: engram.ModeKeyword})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, r := range resp.Results {
		kinds[r.Kind] = true
	}
	if !kinds[engram.KindDoc] || !kinds[engram.KindTurn] {
		t.Errorf("default kinds: %v", kinds)
	}
}

const maxChunksPerDoc = 2

func first(rs []engram.Result) any {
	if len(rs) == 0 {
		return nil
	}
	return rs[0]
}

func containsPrefix(list []string, prefix string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}
