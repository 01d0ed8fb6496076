package vault_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/palace"
	"github.com/engram-dev/engram/vault"
	"github.com/engram-dev/engram/vecindex"
)

var modTime = time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)

func mustStore(t *testing.T) (vault.SQLStore, *palace.DB) {
	t.Helper()
	db, err := palace.Open(filepath.Join(t.TempDir(), "palace.db"), palace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return vault.SQLStore{DB: db}, db
}

func putDoc(t *testing.T, s vault.SQLStore, path, title string, text string, links ...string) {
	t.Helper()
	doc := engram.VaultDoc{Vault: "/v", Namespace: "default", Path: path, Title: title, Hash: "h-" + path, Size: int64(len(text)), ModTime: modTime}
	var ls []engram.DocLink
	for _, l := range links {
		ls = append(ls, engram.DocLink{FromPath: path, Target: l, Kind: "wiki", Line: 3, ToPath: l})
	}
	if err := s.PutVaultDoc(context.Background(), doc, []engram.DocChunk{{Heading: []string{title}, Text: text, StartLine: 1, EndLine: 5}}, ls, nil); err != nil {
		t.Fatal(err)
	}
}

func TestStore_GraphSearchAndDelete(t *testing.T) {
	ctx := context.Background()
	s, _ := mustStore(t)
	putDoc(t, s, "incidents/outage.md", "Billing outage", "The pool ran dry; see the ADR.", "adrs/0007.md")
	putDoc(t, s, "adrs/0007.md", "Use Postgres for billing", "We use Postgres behind pgbouncer.", "rules/pools.md", "adrs/0007.md")
	putDoc(t, s, "rules/pools.md", "Connection pools", "Pools listen on port:6432; error E4021 means the pool is exhausted.")
	if err := s.PutVaultDoc(ctx, engram.VaultDoc{Vault: "/v", Namespace: "default", Path: "notes/x.md", Title: "X", Hash: "x", ModTime: modTime},
		[]engram.DocChunk{{Text: "broken", StartLine: 1, EndLine: 1}}, []engram.DocLink{{FromPath: "notes/x.md", Target: "nowhere", Kind: "wiki", Line: 1}}, nil); err != nil {
		t.Fatal(err)
	}

	reach, err := s.Reach(ctx, "/v", []string{"incidents/outage.md"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range reach {
		got = append(got, g.Path+"@"+string(rune('0'+g.Depth))+" via "+g.Via)
	}
	if want := []string{"adrs/0007.md@1 via incidents/outage.md", "rules/pools.md@2 via adrs/0007.md"}; !slices.Equal(got, want) {
		t.Errorf("reach: %v, want %v", got, want)
	}
	if r, _ := s.Reach(ctx, "/v", []string{"incidents/outage.md"}, 1); len(r) != 1 {
		t.Errorf("depth 1 reached %v", r)
	}
	g, err := s.DocGraph(ctx, "", "use postgres for billing", 2)
	if err != nil {
		t.Fatal(err)
	}
	if g.Doc.Path != "adrs/0007.md" || len(g.Linked) != 1 || len(g.Backlinks) != 1 || g.Backlinks[0].Path != "incidents/outage.md" {
		t.Errorf("graph of the ADR by title: %+v", g)
	}
	if _, err := s.DocGraph(ctx, "", "nope", 2); engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Errorf("unknown doc: %v", err)
	}
	un, err := s.UnresolvedLinks(ctx, "/v")
	if err != nil || len(un) != 1 || un[0].Target != "nowhere" {
		t.Errorf("unresolved: %+v %v", un, err)
	}
	// An identifier inside a longer token, and an error code.
	for _, q := range []string{"6432", "E4021"} {
		hits, err := s.SearchChunks(ctx, engram.TextQuery{Text: q, Limit: 5})
		if err != nil || len(hits) == 0 || hits[0].Chunk.Path != "rules/pools.md" {
			t.Errorf("search %s: %+v %v", q, hits, err)
		}
	}
	// Deleting a document unresolves the links to it and drops its chunks.
	if err := s.DeleteVaultDocs(ctx, "/v", []string{"rules/pools.md"}); err != nil {
		t.Fatal(err)
	}
	if hits, _ := s.SearchChunks(ctx, engram.TextQuery{Text: "E4021", Limit: 5}); len(hits) != 0 {
		t.Errorf("deleted doc still found: %+v", hits)
	}
	un, _ = s.UnresolvedLinks(ctx, "/v")
	if len(un) != 2 {
		t.Errorf("after the delete, unresolved links: %+v", un)
	}
	n, err := s.ResolveVaultLinks(ctx, "/v", func(from, target string) (string, bool) {
		return target, target != "nowhere" && target != "rules/pools.md"
	})
	if err != nil || n != 2 {
		t.Errorf("resolve: %d %v", n, err)
	}
	files, err := s.VaultFiles(ctx, "/v")
	if err != nil || len(files) != 3 || files["adrs/0007.md"].Hash != "h-adrs/0007.md" || !files["adrs/0007.md"].ModTime.Equal(modTime) {
		t.Errorf("vault files: %+v %v", files, err)
	}
}

func TestStore_ChunkVectorsInTheSameTransaction(t *testing.T) {
	ctx := context.Background()
	s, db := mustStore(t)
	vi, err := db.Vectors(ctx, "m", 2)
	if err != nil {
		t.Fatal(err)
	}
	idx := vecindex.New(vi)
	if err := idx.Load(ctx); err != nil {
		t.Fatal(err)
	}
	s.Vectors = vi
	doc := engram.VaultDoc{Vault: "/v", Namespace: "default", Path: "a.md", Title: "A", Hash: "1", ModTime: modTime}
	chunks := []engram.DocChunk{{Text: "one", StartLine: 1, EndLine: 1}}
	id := engram.ChunkID("/v", "a.md", 0, "one")
	vectors := []engram.VectorItem{{ID: id, Kind: engram.KindDoc, Namespace: "default", Vector: []float32{1, 0}}}
	if err := s.PutVaultDoc(ctx, doc, chunks, nil, vectors); err != nil {
		t.Fatal(err)
	}
	hits, err := idx.Query(ctx, engram.VectorQuery{Vector: []float32{1, 0}, K: 1, Kinds: []string{engram.KindDoc}})
	if err != nil || len(hits) != 1 || hits[0].ID != id {
		t.Fatalf("query: %+v %v", hits, err)
	}
	if err := s.DeleteVaultDocs(ctx, "/v", []string{"a.md"}); err != nil {
		t.Fatal(err)
	}
	if n, _ := vi.Count(ctx); n != 0 {
		t.Errorf("%d vectors after the delete", n)
	}
	if hits, _ := idx.Query(ctx, engram.VectorQuery{Vector: []float32{1, 0}, K: 1, Kinds: []string{engram.KindDoc}}); len(hits) != 0 {
		t.Errorf("the matrix still holds the deleted chunk: %+v", hits)
	}
}
