package pgpalace

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/vectortest"
	"github.com/engram-dev/engram/vault"
)

// vaultDoc is a made-up document of the vault tests: i's chunks, its links
// to other documents (one to a document that does not exist), round r of
// its text.
func vaultDoc(i, r int) (engram.VaultDoc, []engram.DocChunk, []engram.DocLink) {
	words := strings.Fields(`replica lag failover pgbouncer port:6432 runbook incident quorum etcd 东京 会议 rollback canary`)
	rng := rand.New(rand.NewPCG(uint64(i), uint64(r)))
	doc := engram.VaultDoc{Vault: "/vaults/team", Namespace: []string{"work", "ops"}[i%2], Path: fmt.Sprintf("adr/%03d.md", i),
		Title: fmt.Sprintf("ADR %d: %s", i, words[i%len(words)]), Type: "adr", Tags: []string{"db"}, Aliases: []string{fmt.Sprintf("Decision %d", i)},
		Date: time.Date(2026, 1, 1+i, 0, 0, 0, 0, time.UTC), Hash: fmt.Sprintf("h%d-%d", i, r), Size: int64(100 * i), ModTime: time.Date(2026, 2, 1, 0, 0, i, 0, time.UTC)}
	if i%3 == 0 {
		doc.Tags, doc.Aliases = nil, nil
	}
	var chunks []engram.DocChunk
	for c := range 2 + i%3 {
		var b []string
		for range 6 + rng.IntN(8) {
			b = append(b, words[rng.IntN(len(words))])
		}
		chunks = append(chunks, engram.DocChunk{Heading: []string{doc.Title, fmt.Sprintf("Part %d", c)}, Text: strings.Join(b, " "),
			StartLine: 1 + 10*c, EndLine: 10 + 10*c})
	}
	links := []engram.DocLink{{FromPath: doc.Path, FromChunk: 0, Target: fmt.Sprintf("ADR %d", (i+1)%9), Kind: "wiki", Line: 2},
		{FromPath: doc.Path, FromChunk: 1, Target: fmt.Sprintf("adr/%03d.md", (i+3)%9), Kind: "markdown", Line: 12},
		{FromPath: doc.Path, FromChunk: 1, Target: "nowhere", Kind: "wiki", Line: 14}}
	return doc, chunks, links
}

// TestVault_AsSQLite checks that this palace keeps the vaults' documents,
// chunks, links and chunk vectors as package vault's store does in
// package palace's file: the same listings, searches (scores too),
// reaches, graphs and unresolved links, through documents written,
// written again and deleted.
func TestVault_AsSQLite(t *testing.T) {
	ctx := t.Context()
	pg, lite := bothPalaces(t, nil, 1)
	const dim = 8
	pv, err := pg.Vectors(ctx, "m", dim)
	if err != nil {
		t.Fatal(err)
	}
	lv, err := lite.Vectors(ctx, "m", dim)
	if err != nil {
		t.Fatal(err)
	}
	type store interface {
		engram.VaultStore
		engram.DocIndex
		DocGraph(ctx context.Context, vault, doc string, depth int) (engram.DocGraph, error)
		UnresolvedLinks(ctx context.Context, vault string) ([]engram.DocLink, error)
	}
	stores := []store{pg.Vault(pv), vault.SQLStore{DB: lite, Vectors: lv}}
	rng := rand.New(rand.NewPCG(9, 9))
	put := func(i, r int) {
		t.Helper()
		doc, chunks, links := vaultDoc(i, r)
		var vecs []engram.VectorItem
		for c, ch := range chunks {
			it := vectortest.RandomItems(rng, "x", 1, dim)[0]
			it.ID, it.Kind, it.Namespace = engram.ChunkID(doc.Vault, doc.Path, c, ch.Text), "chunk", doc.Namespace
			vecs = append(vecs, it)
		}
		for _, s := range stores {
			if err := s.PutVaultDoc(ctx, doc, chunks, links, vecs); err != nil {
				t.Fatal(err)
			}
		}
	}
	resolve := func(s store) {
		t.Helper()
		docs, err := s.Docs(ctx, "/vaults/team")
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]string{}
		for _, d := range docs {
			byName[d.Path] = d.Path
			byName[strings.ToLower(d.Title)] = d.Path
			byName[strings.ToLower(strings.SplitN(d.Title, ":", 2)[0])] = d.Path
		}
		if _, err := s.ResolveVaultLinks(ctx, "/vaults/team", func(_, target string) (string, bool) {
			p, ok := byName[strings.ToLower(target)]
			return p, ok
		}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 9 {
		put(i, 0)
	}
	for _, s := range stores {
		resolve(s)
	}
	compare := func(when string) {
		t.Helper()
		reads := map[string]func(store) (any, error){
			"VaultFiles": func(s store) (any, error) { return s.VaultFiles(ctx, "/vaults/team") },
			"Docs":       func(s store) (any, error) { return s.Docs(ctx, "") },
			"Reach": func(s store) (any, error) {
				return s.Reach(ctx, "/vaults/team", []string{"adr/000.md", "adr/004.md"}, 3)
			},
			"FirstChunks": func(s store) (any, error) {
				return s.FirstChunks(ctx, "/vaults/team", []string{"adr/005.md", "adr/nope.md", "adr/001.md"})
			},
			"UnresolvedLinks": func(s store) (any, error) { return s.UnresolvedLinks(ctx, "") },
		}
		for _, name := range []string{"adr/002.md", "adr 3: etcd", "DECISION 7", "nobody"} {
			reads["DocGraph "+name] = func(s store) (any, error) {
				g, err := s.DocGraph(ctx, "", name, 2)
				if engram.ErrorCode(err) == engram.ENOTFOUND {
					err = nil
				}
				return g, err
			}
		}
		for what, read := range reads {
			sameRead(t, when, what, stores[0], stores[1], read)
		}
		var ids []string
		for _, text := range []string{"replica lag", "6432", "port:6432", "ouncer", "会议", "canary rollback", "Part", "nothing"} {
			for _, q := range []engram.TextQuery{{Text: text, Limit: 6}, {Text: text, Namespace: "ops", Limit: 50}} {
				want, err := stores[1].SearchChunks(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				got, err := stores[0].SearchChunks(ctx, q)
				if err != nil || !sameChunkHits(got, want) {
					t.Errorf("%s: SearchChunks(%+v) = %v, %v\nwant %v", when, q, chunkHits(got), err, chunkHits(want))
				}
				for _, h := range want {
					ids = append(ids, h.Chunk.ID)
				}
			}
		}
		want, _ := stores[1].GetChunks(ctx, append(ids, "chunk-unknown"))
		if got, err := stores[0].GetChunks(ctx, append(ids, "chunk-unknown")); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: GetChunks differ: %v", when, err)
		}
		pn, _ := pv.Count(ctx)
		ln, _ := lv.Count(ctx)
		if pn != ln || pn == 0 {
			t.Errorf("%s: %d chunk vectors; the SQLite palace %d", when, pn, ln)
		}
	}
	compare("written")
	put(4, 1) // written again, other text
	if err := stores[0].DeleteVaultDocs(ctx, "/vaults/team", []string{"adr/006.md"}); err != nil {
		t.Fatal(err)
	}
	if err := stores[1].DeleteVaultDocs(ctx, "/vaults/team", []string{"adr/006.md"}); err != nil {
		t.Fatal(err)
	}
	for _, s := range stores {
		resolve(s)
	}
	compare("rewritten and deleted")
	if err := stores[0].PutVaultDoc(ctx, engram.VaultDoc{Vault: "/v", Namespace: "ns"}, nil, nil, nil); engram.ErrorCode(err) != engram.EINVALID {
		t.Fatalf("PutVaultDoc without a path = %v; want EINVALID", err)
	}
}

// sameChunkHits compares two searches of chunks: the same chunks in the
// same order, with the same scores.
func sameChunkHits(a, b []engram.ChunkHit) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !reflect.DeepEqual(a[i].Chunk, b[i].Chunk) || math.Abs(a[i].Score-b[i].Score) > 1e-9*math.Max(1, math.Abs(b[i].Score)) {
			return false
		}
	}
	return true
}

func chunkHits(hs []engram.ChunkHit) []string {
	var out []string
	for _, h := range hs {
		out = append(out, fmt.Sprintf("%s#%d:%.6f", h.Chunk.Path, h.Chunk.StartLine, h.Score))
	}
	return out
}
