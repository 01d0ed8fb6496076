package main_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/chroma"
	"github.com/engram-dev/engram/embedder"
)

// TestForgetAndRedactInChroma forgets a turn and redacts another on a home
// whose vector index is the shared Chroma test server: the forgotten
// turn's vector leaves the collection, the redacted turn's is made again
// from its new text, and the doctor finds the collection and SQLite equal.
func TestForgetAndRedactInChroma(t *testing.T) {
	home, ix := chromaHome(t, "forget")
	lines := `{"id":"c1","session":"s1","speaker":"Ana","content":"I moved to Quokkaville last spring."}
{"id":"c2","session":"s1","speaker":"Ana","content":"My token is sk-plumbus-4242 for the billing API."}
{"id":"c3","session":"s2","speaker":"Bo","content":"We keep the API on port 30001."}
`
	if r := runCLI(t, home, lines, "ingest", "-"); r.code != 0 {
		t.Fatalf("ingest: %+v", r)
	}
	ctx := context.Background()
	b := embedder.New()
	defer ix.DropCollection(ctx)
	vec := func(text string) []float32 {
		v, err := b.Embed(ctx, []string{text})
		if err != nil {
			t.Fatal(err)
		}
		return v[0]
	}
	score := func(id, text string) (float64, bool) {
		hits, err := ix.Query(ctx, engram.VectorQuery{Vector: vec(text), K: 1, IDs: []string{id}})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 {
			return 0, false
		}
		return hits[0].Score, true
	}
	rep, _ := runDoctor(t, home, 0) // a command's open pushes what the collection lacks
	rep.mustFind(t, "chroma", "ok", "holds the 3 stored vectors")
	if n, err := ix.Count(ctx); err != nil || n != 3 {
		t.Fatalf("Chroma holds %d vectors (%v), want 3", n, err)
	}
	if _, ok := score("c1", "I moved to Quokkaville last spring."); !ok {
		t.Fatal("the turn to forget has no vector in Chroma")
	}

	if r := runCLI(t, home, "", "forget", "--turn", "c1", "--yes"); r.code != 0 {
		t.Fatalf("forget: %+v", r)
	}
	if _, ok := score("c1", "I moved to Quokkaville last spring."); ok {
		t.Error("the forgotten turn's vector is still in Chroma")
	}
	// The embedded text is the speaker's and the content: the vector
	// scores highest against its own content, not 1.
	old, redacted := "My token is sk-plumbus-4242 for the billing API.", "My token is [redacted] for the billing API."
	oldBefore, ok := score("c2", old)
	newBefore, _ := score("c2", redacted)
	if !ok || oldBefore <= newBefore {
		t.Fatalf("before the redaction the vector scores %v against its text, %v against the redacted one (found %v)", oldBefore, newBefore, ok)
	}
	if r := runCLI(t, home, "", "redact", "--turn", "c2", "--span", "sk-plumbus-4242", "--yes"); r.code != 0 {
		t.Fatalf("redact: %+v", r)
	}
	if s, ok := score("c2", old); ok && s >= oldBefore-1e-6 {
		t.Error("the redacted turn's old vector is still in Chroma")
	}
	rep, _ = runDoctor(t, home, 0)
	rep.mustFind(t, "chroma", "ok", "holds the 2 stored vectors")
	oldAfter, _ := score("c2", old)
	newAfter, ok := score("c2", redacted)
	if !ok || newAfter <= oldAfter || newAfter <= newBefore {
		t.Errorf("after the redaction the vector scores %v against the redacted text (found %v), %v against the old; want it made from the new text", newAfter, ok, oldAfter)
	}
	if n, err := ix.Count(ctx); err != nil || n != 2 {
		t.Errorf("Chroma holds %d vectors (%v), want 2", n, err)
	}
	rep.mustFind(t, "chroma", "ok", "none of the 1 forgotten turns")

	// A forgotten turn's vector back in the collection (a restored Chroma
	// volume, say) is found by its id, then taken out by the fix named.
	err := ix.Upsert(ctx, []engram.VectorItem{{ID: "c1", Kind: engram.KindTurn, Namespace: engram.DefaultNamespace,
		Vector: vec("I moved to Quokkaville last spring.")}})
	if err != nil {
		t.Fatal(err)
	}
	rep, _ = runDoctor(t, home, 1)
	c := rep.mustFind(t, "chroma", "fail", "holds the vectors of 1 forgotten turn (first: c1)")
	if r := runCLI(t, home, "", strings.Fields(c.Fix)[1:]...); r.code != 0 {
		t.Fatalf("%s: %+v", c.Fix, r)
	}
	rep, _ = runDoctor(t, home, 0)
	rep.mustFind(t, "chroma", "ok", "holds the 2 stored vectors and none of the 1 forgotten turns")
}

// chromaHome makes a home whose vector index is the shared Chroma test
// server, in a database of its own named after prefix, and opens that
// database's collection of the builtin model for the test to look into
// (closed at the end).
func chromaHome(t *testing.T, prefix string) (string, *chroma.Index) {
	t.Helper()
	env := testServers(t, "ENGRAM_TEST_CHROMA_URL")
	home := filepath.Join(t.TempDir(), "home")
	database := prefix + "-" + time.Now().Format("150405.000000")
	writeConfig(t, home, "extractor = \"none\"\nvector_index = \"chroma\"\nchroma_url = \""+env["ENGRAM_TEST_CHROMA_URL"]+"\"\nchroma_database = \""+database+"\"\n")
	b := embedder.New()
	ix, err := chroma.Open(context.Background(), chroma.Config{URL: env["ENGRAM_TEST_CHROMA_URL"], Database: database, Model: b.Model(), Dim: b.Dim()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return home, ix
}
