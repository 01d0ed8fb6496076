package engine_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/chroma"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/embedder"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/internal/testutil"
)

// TestForgetAndRedactInChroma forgets a turn and redacts another on a home
// whose vector index is the shared Chroma test server: the forgotten
// turn's vector leaves the collection, the redacted turn's is made again
// from its new text, and the doctor finds the collection and SQLite equal.
func TestForgetAndRedactInChroma(t *testing.T) {
	env := testutil.Servers(t, "ENGRAM_TEST_CHROMA_URL")
	ctx := t.Context()
	home := filepath.Join(t.TempDir(), "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	// A database of its own on the shared server, so tests do not collide.
	database := "forget-" + time.Now().Format("150405.000000")
	toml := "extractor = \"none\"\nvector_index = \"chroma\"\nchroma_url = \"" + env["ENGRAM_TEST_CHROMA_URL"] + "\"\nchroma_database = \"" + database + "\"\n"
	if err := os.WriteFile(filepath.Join(home, config.ConfigFile), []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	b := embedder.New()
	ix, err := chroma.Open(ctx, chroma.Config{URL: env["ENGRAM_TEST_CHROMA_URL"], Database: database, Model: b.Model(), Dim: b.Dim()})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	defer ix.DropCollection(ctx)
	cfg, err := config.LoadConfig(home, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.Open(ctx, cfg, quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var turns []engram.Turn
	for _, in := range []engram.TurnInput{
		{ID: "c1", Session: "s1", Speaker: "Ana", Content: "I moved to Quokkaville last spring."},
		{ID: "c2", Session: "s1", Speaker: "Ana", Content: "My token is sk-plumbus-4242 for the billing API."},
		{ID: "c3", Session: "s2", Speaker: "Bo", Content: "We keep the API on port 30001."},
	} {
		turn, err := in.Turn("", time.Now(), cfg.Limits())
		if err != nil {
			t.Fatal(err)
		}
		turns = append(turns, turn)
	}
	if _, err := e.Ingest(ctx, turns); err != nil {
		t.Fatal(err)
	}
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
	testutil.WaitUntil(t, "the turns' vectors in Chroma", func() bool {
		h := e.Health(ctx)
		return h.Vectors != nil && h.Vectors.EmbeddedSeq == 3 && h.Vectors.ChromaLag == 0
	})
	testutil.MustFindCheck(t, e.Doctor(ctx), "chroma", "ok", "holds the 3 stored vectors")
	if n, err := ix.Count(ctx); err != nil || n != 3 {
		t.Fatalf("Chroma holds %d vectors (%v), want 3", n, err)
	}
	if _, ok := score("c1", "I moved to Quokkaville last spring."); !ok {
		t.Fatal("the turn to forget has no vector in Chroma")
	}

	if _, err := e.Forget(ctx, engram.ForgetRequest{IDs: []string{"c1"}}); err != nil {
		t.Fatalf("forget: %v", err)
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
	if _, err := e.Redact(ctx, engram.RedactRequest{IDs: []string{"c2"}, Texts: []string{"sk-plumbus-4242"}}); err != nil {
		t.Fatalf("redact: %v", err)
	}
	if s, ok := score("c2", old); ok && s >= oldBefore-1e-6 {
		t.Error("the redacted turn's old vector is still in Chroma")
	}
	rep := e.Doctor(ctx)
	testutil.MustFindCheck(t, rep, "chroma", "ok", "holds the 2 stored vectors")
	oldAfter, _ := score("c2", old)
	newAfter, ok := score("c2", redacted)
	if !ok || newAfter <= oldAfter || newAfter <= newBefore {
		t.Errorf("after the redaction the vector scores %v against the redacted text (found %v), %v against the old; want it made from the new text", newAfter, ok, oldAfter)
	}
	if n, err := ix.Count(ctx); err != nil || n != 2 {
		t.Errorf("Chroma holds %d vectors (%v), want 2", n, err)
	}
	testutil.MustFindCheck(t, rep, "chroma", "ok", "none of the 1 forgotten turns")

	// A forgotten turn's vector back in the collection (a restored Chroma
	// volume, say) is found by its id, then taken out by the fix named.
	err = ix.Upsert(ctx, []engram.VectorItem{{ID: "c1", Kind: engram.KindTurn, Namespace: engram.DefaultNamespace,
		Vector: vec("I moved to Quokkaville last spring.")}})
	if err != nil {
		t.Fatal(err)
	}
	c := testutil.MustFindCheck(t, e.Doctor(ctx), "chroma", "fail", "holds the vectors of 1 forgotten turn (first: c1)")
	if c.Fix != "engram reindex vectors" {
		t.Fatalf("the fix of a forgotten turn's vector in Chroma: %q, want engram reindex vectors", c.Fix)
	}
	if _, err := e.ReindexVectors(ctx, false, nil); err != nil {
		t.Fatalf("%s: %v", c.Fix, err)
	}
	testutil.MustFindCheck(t, e.Doctor(ctx), "chroma", "ok", "holds the 2 stored vectors and none of the 1 forgotten turns")
}
