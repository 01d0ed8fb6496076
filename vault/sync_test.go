package vault_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/embedder"
	"github.com/engram-dev/engram/palace"
	"github.com/engram-dev/engram/vault"
)

// copyVault copies testdata/vault into a temporary folder (the test vault
// is never written to).
func copyVault(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "vault")
	if err := os.CopyFS(dst, os.DirFS("../testdata/vault")); err != nil {
		t.Fatal(err)
	}
	return dst
}

func mustSyncer(t testing.TB) (*vault.Syncer, *palace.DB, *palace.VectorStore) {
	t.Helper()
	db, err := palace.Open(filepath.Join(t.TempDir(), "palace.db"), palace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	emb := embedder.New()
	vi, err := db.Vectors(context.Background(), emb.Model(), emb.Dim())
	if err != nil {
		t.Fatal(err)
	}
	return &vault.Syncer{Store: vault.SQLStore{DB: db, Vectors: vi}, Embedder: emb}, db, vi
}

func TestSync_Incremental(t *testing.T) {
	ctx := context.Background()
	root := copyVault(t)
	s, db, vi := mustSyncer(t)
	rep, err := s.Sync(ctx, root, "team")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("first sync: %d files, %d indexed, %d skipped %v, %d unresolved", rep.Files, len(rep.Indexed), len(rep.Skipped), rep.Skipped, rep.Unresolved)
	if len(rep.Indexed) < 8 || rep.Unresolved == 0 || len(rep.Skipped) == 0 {
		t.Fatalf("first sync: %+v", rep)
	}
	for _, sk := range rep.Skipped {
		if sk.Reason == "" {
			t.Errorf("skip without a reason: %+v", sk)
		}
	}
	vectors, _ := vi.Count(ctx)
	if vectors == 0 {
		t.Fatal("no chunk vectors")
	}

	// The incident -> ADR -> rule chain is traversable.
	docs, err := vault.SQLStore{DB: db}.Docs(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	var incident string
	for _, d := range docs {
		if d.Type == "incident" && strings.Contains(d.Path, "billing") {
			incident = d.Path
		}
	}
	if incident == "" {
		t.Fatalf("no billing incident among %d docs", len(docs))
	}
	typeOf := func(path string) string {
		return docs[slices.IndexFunc(docs, func(x engram.VaultDoc) bool { return x.Path == path })].Type
	}
	reach, err := vault.SQLStore{DB: db}.Reach(ctx, root, []string{incident}, 2)
	if err != nil {
		t.Fatal(err)
	}
	var adrs []string
	for _, g := range reach {
		if typeOf(g.Path) == "adr" && g.Depth == 1 {
			adrs = append(adrs, g.Path)
		}
	}
	if len(adrs) == 0 {
		t.Fatalf("the incident links no ADR: %+v", reach)
	}
	fromADR, err := vault.SQLStore{DB: db}.Reach(ctx, root, adrs[:1], 1)
	if err != nil || !slices.ContainsFunc(fromADR, func(g engram.GraphDoc) bool { return typeOf(g.Path) == "rule" }) {
		t.Errorf("the ADR %s links no rule: %+v %v", adrs[0], fromADR, err)
	}

	// Nothing changed: nothing is indexed again.
	rep, err = s.Sync(ctx, root, "team")
	if err != nil || len(rep.Indexed) != 0 || len(rep.Removed) != 0 || rep.Unchanged != rep.Files {
		t.Fatalf("second sync: %+v %v", rep, err)
	}

	// One changed file.
	adr := ""
	for _, d := range docs {
		if d.Type == "adr" && strings.Contains(d.Path, "postgres") {
			adr = d.Path
		}
	}
	p := filepath.Join(root, filepath.FromSlash(adr))
	b, _ := os.ReadFile(p)
	if err := os.WriteFile(p, append(b, []byte("\n## Addendum\n\nWe revisit this decision in Q3 with a zebracorn benchmark.\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(p, time.Now(), time.Now().Add(time.Second))
	rep, err = s.Sync(ctx, root, "team")
	if err != nil || !slices.Equal(rep.Indexed, []string{adr}) {
		t.Fatalf("after a change: %+v %v", rep, err)
	}
	hits, err := vault.SQLStore{DB: db}.SearchChunks(ctx, engram.TextQuery{Text: "zebracorn", Limit: 3})
	if err != nil || len(hits) != 1 || hits[0].Chunk.Path != adr {
		t.Fatalf("the changed text: %+v %v", hits, err)
	}

	// A rename leaves the old path and adds the new one; a deletion leaves.
	newPath := filepath.Join(root, "docs", "adrs", "renamed-postgres.md")
	if err := os.Rename(p, newPath); err != nil {
		t.Fatal(err)
	}
	rep, err = s.Sync(ctx, root, "team")
	if err != nil || !slices.Equal(rep.Removed, []string{adr}) || !slices.Equal(rep.Indexed, []string{"docs/adrs/renamed-postgres.md"}) {
		t.Fatalf("after a rename: %+v %v", rep, err)
	}
	if err := os.Remove(newPath); err != nil {
		t.Fatal(err)
	}
	rep, err = s.Sync(ctx, root, "team")
	if err != nil || !slices.Equal(rep.Removed, []string{"docs/adrs/renamed-postgres.md"}) {
		t.Fatalf("after a deletion: %+v %v", rep, err)
	}
	if hits, _ := (vault.SQLStore{DB: db}).SearchChunks(ctx, engram.TextQuery{Text: "zebracorn", Limit: 3}); len(hits) != 0 {
		t.Errorf("a deleted file is still found: %+v", hits)
	}
	if n, _ := vi.Count(ctx); n >= vectors {
		t.Errorf("the deleted file's vectors stayed: %d vectors, %d before", n, vectors)
	}
	un, _ := vault.SQLStore{DB: db}.UnresolvedLinks(ctx, root)
	if !slices.ContainsFunc(un, func(l engram.DocLink) bool { return l.FromPath == incident }) {
		t.Errorf("the incident's link to the deleted ADR should be unresolved now: %+v", un)
	}
}
