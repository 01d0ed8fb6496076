package palace

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/kgchain"
)

// TestRedactTurns_SpeakerMetaGraphAndModels redacts spans a turn holds in
// its speaker, its meta and its content, after the graph, the persona and
// two vector models took them: the turn row and its speaker index, the
// entities (one nothing else names, deleted; an alias of another, and an
// entity another turn's statement names, renamed), the persona facets
// keyed by the speaker or by a liked thing, a fact correction's key and
// every vector of the turn lose them, and the palace's files hold them
// nowhere, in any case.
func TestRedactTurns_SpeakerMetaGraphAndModels(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "palace.db")
	db := MustOpenDBAt(t, path, Options{})
	a := engram.Turn{ID: "a", Seq: 1, Namespace: "default", Session: "s", Role: engram.RoleUser, Speaker: "Ana Zorblewski",
		Content: "I moved to Quokkaville, I am Zorblewski", Meta: json.RawMessage(`{"from":"Zorblewski's phone","n":1}`), TS: day(0), ReceivedAt: day(0)}
	b := engram.Turn{ID: "b", Seq: 2, Namespace: "default", Session: "s", Role: engram.RoleUser, Speaker: "Ana",
		Content: "I work at Acme", TS: day(1), ReceivedAt: day(1)}
	c := engram.Turn{ID: "c", Seq: 3, Namespace: "default", Session: "s", Role: engram.RoleUser, Speaker: "Bo",
		Content: "I visit the town every summer", TS: day(2), ReceivedAt: day(2)}
	mustPut(t, db, a, b, c)
	err := db.ApplyTriples(ctx, "g", []engram.Triple{
		triple("Ana", "name", "Ana Zorblewski", day(0), "a"),
		triple("Ana Zorblewski", "lives_in", "Quokkaville", day(0), "a"),
		triple("Ana", "works_at", "Acme", day(1), "b"),
		triple("Bo", "visits", "Quokkaville", day(2), "c"),
	}, 3)
	if err != nil {
		t.Fatal(err)
	}
	// Bo visits Lisbon, in truth: the correction is keyed by the names.
	fix := engram.Correction{ID: "cor-1", Target: engram.CorrectFact, Of: "kg-x", Object: "Lisbon", Namespace: "default",
		Subject: "Bo", Predicate: "visits", Original: "Quokkaville", Key: kgchain.FactKey("default", "Bo", "visits", "Quokkaville")}
	// A memory of another turn, corrected with the span in its text.
	if _, err := db.PutMemories(ctx, "l1", []engram.Memory{mem("m-b", engram.MemoryFact, "Ana", "Ana works at Acme", day(1), "b", nil)}, 3); err != nil {
		t.Fatal(err)
	}
	typed := engram.Correction{ID: "cor-2", Target: engram.CorrectMemory, Of: "m-b", Text: "Ana Zorblewski works at Acme", Namespace: "default",
		Type: engram.MemoryFact, Original: "Ana works at Acme"}
	if _, err := db.ApplyCorrections(ctx, []engram.Correction{fix, typed}); err != nil {
		t.Fatal(err)
	}
	err = db.ApplyFacets(ctx, "p", []engram.FacetUpdate{
		{Namespace: "default", Speaker: "Ana Zorblewski", Facet: engram.FacetIdentity, Key: "lives_in", Value: "Quokkaville", At: day(0), Evidence: []string{"a"}},
		{Namespace: "default", Speaker: "Ana", Facet: engram.FacetPreference, Key: "quokkaville", Value: "likes", At: day(0), Evidence: []string{"a"}},
		{Namespace: "default", Speaker: "Ana", Facet: engram.FacetIdentity, Key: "lives_in", Value: "Quokkaville", At: day(0), Evidence: []string{"a"}},
		{Namespace: "default", Speaker: "Ana", Facet: engram.FacetIdentity, Key: "works_at", Value: "Acme", At: day(1), Evidence: []string{"b"}},
	}, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, model := range []string{"model-x", "model-y"} {
		v, err := db.Vectors(ctx, model, 2)
		if err != nil {
			t.Fatal(err)
		}
		if err := v.PutTurnVectors(ctx, []engram.VectorItem{{ID: "a", Kind: engram.KindTurn, Namespace: "default", Vector: []float32{1, 0}},
			{ID: "b", Kind: engram.KindTurn, Namespace: "default", Vector: []float32{0, 1}}}, 3); err != nil {
			t.Fatal(err)
		}
	}
	if g := graphState(t, db, "Bo"); !slices.Equal(g, []string{"Bo visits Lisbon 2026-03-03..0001-01-01 c"}) {
		t.Fatalf("before: %v", g)
	}

	spans := []string{"Zorblewski", "Quokkaville"}
	red, n := a.RedactSpans(spans, "[redacted]")
	if n != 4 {
		t.Fatalf("%d spans in the turn, want 4", n)
	}
	res, err := db.RedactTurns(ctx, []engram.Turn{red}, spans, "[redacted]")
	if err != nil {
		t.Fatal(err)
	}
	if res.Turns != 1 || res.Entities != 1 || !slices.Equal(res.TurnVectors["model-x"], []string{"a"}) || !slices.Equal(res.TurnVectors["model-y"], []string{"a"}) {
		t.Errorf("result %+v", res)
	}

	got, err := db.GetTurns(ctx, []string{"a"})
	if err != nil || len(got) != 1 || got[0].Speaker != "Ana [redacted]" || string(got[0].Meta) != `{"from":"[redacted]'s phone","n":1}` ||
		got[0].Content != "I moved to [redacted], I am [redacted]" {
		t.Fatalf("the stored turn: %+v %v", got, err)
	}
	for _, q := range []string{"Zorblewski", "Quokkaville"} {
		if hits, err := db.SearchTurns(ctx, engram.TextQuery{Text: q, Limit: 10}); err != nil || len(hits) != 0 {
			t.Errorf("search %q finds %+v (%v)", q, hits, err)
		}
	}
	if hits, err := db.SearchTurns(ctx, engram.TextQuery{Text: "Ana moved", Limit: 10}); err != nil || len(hits) == 0 || hits[0].Turn.ID != "a" {
		t.Errorf("the redacted turn is not found by its speaker and words: %+v %v", hits, err)
	}
	// The entity only the turn named goes; the alias of Ana is renamed;
	// the correction still applies to the renamed entity's chain.
	if _, err := db.Graph(ctx, engram.GraphQuery{Entity: "Ana Zorblewski"}); engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Errorf("Ana Zorblewski is still known: %v", err)
	}
	g, err := db.Graph(ctx, engram.GraphQuery{Entity: "Ana [redacted]"})
	if err != nil || g.Entity.Name != "Ana" {
		t.Errorf("the renamed alias: %+v %v", g, err)
	}
	if g := graphState(t, db, "Bo"); !slices.Equal(g, []string{"Bo visits Lisbon 2026-03-03..0001-01-01 c"}) {
		t.Errorf("after: %v", g)
	}
	if g, err := db.Graph(ctx, engram.GraphQuery{Entity: "[redacted]"}); err != nil || g.Entity.Name != "[redacted]" {
		t.Errorf("the renamed entity: %+v %v", g, err)
	}
	if ms, err := db.GetMemories(ctx, []string{"m-b"}); err != nil || len(ms) != 1 || ms[0].Text != "Ana [redacted] works at Acme" {
		t.Errorf("the memory corrected with the span: %+v %v", ms, err)
	}
	personas, err := db.Persona(ctx, "default", "")
	if err != nil {
		t.Fatal(err)
	}
	var facets []string
	for _, p := range personas {
		for _, f := range p.Facets {
			facets = append(facets, p.Speaker+" "+f.Key+" "+f.Value)
		}
	}
	if want := []string{"Ana lives_in [redacted]", "Ana works_at Acme"}; !slices.Equal(facets, want) {
		t.Errorf("persona %v, want %v", facets, want)
	}
	// Each model's watermark went back before the turn, to embed it
	// again; putting its vector back restores the watermark.
	for _, model := range []string{"model-x", "model-y"} {
		v, _ := db.Vectors(ctx, model, 2)
		if n, err := v.Count(ctx); err != nil || n != 1 {
			t.Errorf("%s holds %d vectors (%v), want b's only", model, n, err)
		}
		if wm, err := v.Watermark(ctx); err != nil || wm != 0 || res.Watermarks[model] != 3 {
			t.Errorf("%s: watermark %d (%v), was %d; want 0, was 3", model, wm, err, res.Watermarks[model])
		}
	}
	x, _ := db.Vectors(ctx, "model-x", 2)
	if err := x.PutTurnVectors(ctx, []engram.VectorItem{{ID: "a", Kind: engram.KindTurn, Namespace: "default", Vector: []float32{1, 1}}},
		res.Watermarks["model-x"]); err != nil {
		t.Fatal(err)
	}
	if wm, _ := x.Watermark(ctx); wm != 3 {
		t.Errorf("model-x's watermark is %d after its vector came back, want 3", wm)
	}
	checkInvariants(t, db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(path + "*")
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range spans {
			if bytes.Contains(bytes.ToLower(raw), []byte(strings.ToLower(w))) {
				t.Errorf("%s still holds %q", f, w)
			}
		}
	}
}

// TestTurnIDsHolding finds a span in a turn's content, its speaker or its
// meta, as a client wrote it or as JSON escapes it.
func TestTurnIDsHolding(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	turn := func(seq int64, id, ns, speaker, content, meta string) engram.Turn {
		tr := engram.Turn{ID: id, Seq: seq, Namespace: ns, Session: "s", Role: engram.RoleUser, Speaker: speaker, Content: content,
			TS: day(0), ReceivedAt: day(0)}
		if meta != "" {
			tr.Meta = json.RawMessage(meta)
		}
		return tr
	}
	mustPut(t, db,
		turn(1, "content", "default", "Ana", "the key is <k&y> ok", ""),
		turn(2, "speaker", "default", "<k&y>", "hello", ""),
		turn(3, "meta-raw", "default", "Bo", "hello", `{"note":"<k&y>"}`),
		turn(4, "meta-escaped", "default", "Bo", "hello", `{"note":"\u003ck\u0026y\u003e"}`),
		turn(5, "other-ns", "work", "Bo", "<k&y>", ""),
		turn(6, "none", "default", "Bo", "nothing here", `{"<k&y>":1}`),
	)
	// A meta key holding it is found too (RedactSpans then leaves it).
	ids, err := db.TurnIDsHolding(ctx, "default", "", []string{"<k&y>"}, false)
	if want := []string{"content", "speaker", "meta-raw", "meta-escaped", "none"}; err != nil || !slices.Equal(ids, want) {
		t.Errorf("got %v (%v), want %v", ids, err, want)
	}
	if ids, err := db.TurnIDsHolding(ctx, "", "", []string{"<k&y>"}, false); err != nil || len(ids) != 6 {
		t.Errorf("every namespace: %v (%v)", ids, err)
	}
	// Everywhere: a span in an id, a namespace or a session finds the
	// turn too, and many spans are looked for at once.
	mustPut(t, db, engram.Turn{ID: "id-zorb", Seq: 7, Namespace: "default", Session: "s", Role: engram.RoleUser, Content: "x", TS: day(0), ReceivedAt: day(0)},
		engram.Turn{ID: "t8", Seq: 8, Namespace: "ns-zorb", Session: "s", Role: engram.RoleUser, Content: "x", TS: day(0), ReceivedAt: day(0)},
		engram.Turn{ID: "t9", Seq: 9, Namespace: "default", Session: "s-zorb", Role: engram.RoleUser, Content: "x", TS: day(0), ReceivedAt: day(0)})
	if ids, err := db.TurnIDsHolding(ctx, "", "", []string{"zorb", "<k&y>"}, false); err != nil || len(ids) != 6 {
		t.Errorf("not everywhere: %v (%v)", ids, err)
	}
	ids, err = db.TurnIDsHolding(ctx, "", "", []string{"zorb", "<k&y>"}, true)
	if want := []string{"content", "speaker", "meta-raw", "meta-escaped", "other-ns", "none", "id-zorb", "t8", "t9"}; err != nil || !slices.Equal(ids, want) {
		t.Errorf("everywhere: %v (%v), want %v", ids, err, want)
	}
}
