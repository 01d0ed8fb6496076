package palace

import (
	"context"
	"slices"
	"testing"
	"time"

	engram "github.com/engram-dev/engram"
)

func putDoc(t *testing.T, db *DB, path, title string, text string, links ...string) {
	t.Helper()
	doc := engram.VaultDoc{Vault: "/v", Namespace: "default", Path: path, Title: title, Hash: "h-" + path, Size: int64(len(text)), ModTime: day(0)}
	var ls []engram.DocLink
	for _, l := range links {
		ls = append(ls, engram.DocLink{FromPath: path, Target: l, Kind: "wiki", Line: 3, ToPath: l})
	}
	if err := db.putVaultDoc(context.Background(), doc, []engram.DocChunk{{Heading: []string{title}, Text: text, StartLine: 1, EndLine: 5}}, ls, nil); err != nil {
		t.Fatal(err)
	}
}

func TestVault_GraphSearchAndDelete(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	putDoc(t, db, "incidents/outage.md", "Billing outage", "The pool ran dry; see the ADR.", "adrs/0007.md")
	putDoc(t, db, "adrs/0007.md", "Use Postgres for billing", "We use Postgres behind pgbouncer.", "rules/pools.md", "adrs/0007.md")
	putDoc(t, db, "rules/pools.md", "Connection pools", "Pools listen on port:6432; error E4021 means the pool is exhausted.")
	if err := db.putVaultDoc(ctx, engram.VaultDoc{Vault: "/v", Namespace: "default", Path: "notes/x.md", Title: "X", Hash: "x", ModTime: day(0)},
		[]engram.DocChunk{{Text: "broken", StartLine: 1, EndLine: 1}}, []engram.DocLink{{FromPath: "notes/x.md", Target: "nowhere", Kind: "wiki", Line: 1}}, nil); err != nil {
		t.Fatal(err)
	}

	reach, err := db.Reach(ctx, "/v", []string{"incidents/outage.md"}, 2)
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
	if r, _ := db.Reach(ctx, "/v", []string{"incidents/outage.md"}, 1); len(r) != 1 {
		t.Errorf("depth 1 reached %v", r)
	}
	g, err := db.DocGraph(ctx, "", "use postgres for billing", 2)
	if err != nil {
		t.Fatal(err)
	}
	if g.Doc.Path != "adrs/0007.md" || len(g.Linked) != 1 || len(g.Backlinks) != 1 || g.Backlinks[0].Path != "incidents/outage.md" {
		t.Errorf("graph of the ADR by title: %+v", g)
	}
	if _, err := db.DocGraph(ctx, "", "nope", 2); engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Errorf("unknown doc: %v", err)
	}
	un, err := db.UnresolvedLinks(ctx, "/v")
	if err != nil || len(un) != 1 || un[0].Target != "nowhere" {
		t.Errorf("unresolved: %+v %v", un, err)
	}
	// An identifier inside a longer token, and an error code.
	for _, q := range []string{"6432", "E4021"} {
		hits, err := db.SearchChunks(ctx, engram.TextQuery{Text: q, Limit: 5})
		if err != nil || len(hits) == 0 || hits[0].Chunk.Path != "rules/pools.md" {
			t.Errorf("search %s: %+v %v", q, hits, err)
		}
	}
	// Deleting a document unresolves the links to it and drops its chunks.
	if err := db.deleteVaultDocs(ctx, "/v", []string{"rules/pools.md"}, nil); err != nil {
		t.Fatal(err)
	}
	if hits, _ := db.SearchChunks(ctx, engram.TextQuery{Text: "E4021", Limit: 5}); len(hits) != 0 {
		t.Errorf("deleted doc still found: %+v", hits)
	}
	un, _ = db.UnresolvedLinks(ctx, "/v")
	if len(un) != 2 {
		t.Errorf("after the delete, unresolved links: %+v", un)
	}
	n, err := db.ResolveVaultLinks(ctx, "/v", func(from, target string) (string, bool) {
		return target, target != "nowhere" && target != "rules/pools.md"
	})
	if err != nil || n != 2 {
		t.Errorf("resolve: %d %v", n, err)
	}
	files, err := db.VaultFiles(ctx, "/v")
	if err != nil || len(files) != 3 || files["adrs/0007.md"].Hash != "h-adrs/0007.md" || !files["adrs/0007.md"].ModTime.Equal(day(0)) {
		t.Errorf("vault files: %+v %v", files, err)
	}
	_ = time.Second
}

func TestVault_ChunkVectorsInTheSameTransaction(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	vi, err := db.Vectors(ctx, "m", 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := indexOf(vi).Load(ctx); err != nil {
		t.Fatal(err)
	}
	doc := engram.VaultDoc{Vault: "/v", Namespace: "default", Path: "a.md", Title: "A", Hash: "1", ModTime: day(0)}
	chunks := []engram.DocChunk{{Text: "one", StartLine: 1, EndLine: 1}}
	id := engram.ChunkID("/v", "a.md", 0, "one")
	w, err := vi.Stage([]engram.VectorItem{{ID: id, Kind: engram.KindDoc, Namespace: "default", Vector: []float32{1, 0}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.putVaultDoc(ctx, doc, chunks, nil, w); err != nil {
		t.Fatal(err)
	}
	hits, err := indexOf(vi).Query(ctx, engram.VectorQuery{Vector: []float32{1, 0}, K: 1, Kinds: []string{engram.KindDoc}})
	if err != nil || len(hits) != 1 || hits[0].ID != id {
		t.Fatalf("query: %+v %v", hits, err)
	}
	w, _ = vi.Stage(nil, []string{id})
	if err := db.deleteVaultDocs(ctx, "/v", []string{"a.md"}, w); err != nil {
		t.Fatal(err)
	}
	if n, _ := vi.Count(ctx); n != 0 {
		t.Errorf("%d vectors after the delete", n)
	}
}
