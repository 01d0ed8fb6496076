package recall_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/recall"
)

// billingTalk is a conversation that settles the billing database (its
// second turn, which names it only as "PG"), followed by more turns.
func billingTalk(more ...string) []string {
	return append([]string{
		"Let's talk about the storage layer for the billing service.",
		"OK so after all that back and forth, final answer: PG it is, the JSONB support sold it.",
		"Agreed, and Redis only as a cache in front of it.",
	}, more...)
}

// TestDeepRecall_Layers checks that deep recall weighs the derived layers:
// a memory citing a turn raises it (layer signal), a graph triple about an
// entity the query names raises the turn it stems from (kg signal), and a
// turn only a layer cites joins the candidates.
func TestDeepRecall_Layers(t *testing.T) {
	f := mustOpenFixture(t, billingTalk("Unrelated: the cat sat on the mat all afternoon.",
		"Morning all, greetings from my new flat.",
		"Remind me to renew the TLS certificates next month."))
	ctx := context.Background()
	at := f.turns[1].TS
	mem := engram.Memory{ID: "mem-1", Namespace: "default", Type: engram.MemoryDecision, Subject: "Bob",
		Text: "Bob decided to use PostgreSQL for the billing database", Rationale: "JSONB support", Importance: 0.9,
		TS: at, ValidFrom: at, Sources: []string{f.turns[1].ID}}
	if _, err := f.db.PutMemories(ctx, "test", []engram.Memory{mem}, 6); err != nil {
		t.Fatal(err)
	}
	if err := f.db.ApplyTriples(ctx, "test", []engram.Triple{{Namespace: "default", Subject: "Dana", Predicate: "lives_in",
		Object: "Lisbon", ValidFrom: f.turns[4].TS, Sources: []string{f.turns[4].ID}}}, 1); err != nil {
		t.Fatal(err)
	}
	asOf := time.Date(2026, 5, 8, 12, 0, 0, 0, time.UTC)
	find := func(s interface {
		Recall(context.Context, engram.RecallRequest) (engram.RecallResponse, error)
	}, q, id string) (int, *engram.Signals) {
		t.Helper()
		resp, err := s.Recall(ctx, engram.RecallRequest{Query: q, Mode: engram.ModeDeep, AsOf: asOf})
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range resp.Results {
			if r.ID == id {
				return i, r.Signals
			}
		}
		return -1, nil
	}

	without := f.service()
	with := f.service()
	with.Layers = f.db
	q := "which database did we pick for billing"
	rankOff, sigOff := find(without, q, f.turns[1].ID)
	rank, sig := find(with, q, f.turns[1].ID)
	if rank < 0 || rank > rankOff || sig.Layer != 1 || (sigOff != nil && sig.Final <= sigOff.Final) {
		t.Errorf("with layers the decision turn is at rank %d with %+v (without: rank %d, %+v), want layer 1 and a higher score", rank, sig, rankOff, sigOff)
	}
	if sigOff != nil && sigOff.Layer != 0 {
		t.Errorf("without layers the layer signal is %v", sigOff.Layer)
	}
	rank, sig = find(with, "where does Dana live", f.turns[4].ID)
	if rank < 0 || sig.KG <= 0 || sig.KG > 0.5 {
		t.Errorf("the turn behind (Dana, lives_in, Lisbon): rank %d, signals %+v, want kg in (0, 0.5]: the fact's evidence times its confidence", rank, sig)
	}
	// As of before the statement, the graph says nothing.
	resp, err := with.Recall(ctx, engram.RecallRequest{Query: "where does Dana live", Mode: engram.ModeDeep, AsOf: f.turns[3].TS})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range resp.Results {
		if r.Signals.KG != 0 {
			t.Errorf("as of before the triple, %s has kg %v", r.ID, r.Signals.KG)
		}
	}
}

func TestRecall_LayerKinds(t *testing.T) {
	f := mustOpenFixture(t, billingTalk("Morning all, greetings from my new flat."))
	ctx := context.Background()
	at := f.turns[1].TS
	mems := []engram.Memory{
		{ID: "mem-pg", Namespace: "default", Type: engram.MemoryDecision, Subject: "Bob", Text: "Bob decided to use PostgreSQL for the billing database",
			Rationale: "JSONB support", Importance: 0.9, TS: at, ValidFrom: at, Sources: []string{f.turns[1].ID}},
		{ID: "mem-old", Namespace: "default", Type: engram.MemoryFact, Subject: "Dana", Text: "Dana lives in Porto", Importance: 0.6,
			TS: f.turns[0].TS, ValidFrom: f.turns[0].TS, Sources: []string{f.turns[0].ID}, Relation: &engram.Relation{Subject: "Dana", Predicate: "lives_in", Object: "Porto"}},
		{ID: "mem-new", Namespace: "default", Type: engram.MemoryFact, Subject: "Dana", Text: "Dana lives in Lisbon", Importance: 0.6,
			TS: f.turns[3].TS, ValidFrom: f.turns[3].TS, Sources: []string{f.turns[3].ID}, Relation: &engram.Relation{Subject: "Dana", Predicate: "lives_in", Object: "Lisbon"}},
	}
	if _, err := f.db.PutMemories(ctx, "test", mems, 4); err != nil {
		t.Fatal(err)
	}
	if err := f.db.ApplyTriples(ctx, "test", []engram.Triple{{Namespace: "default", Subject: "Dana", Predicate: "lives_in",
		Object: "Lisbon", ValidFrom: f.turns[3].TS, Sources: []string{f.turns[3].ID}}}, 1); err != nil {
		t.Fatal(err)
	}
	s := f.service()
	s.Layers = f.db
	asOf := time.Date(2026, 5, 8, 12, 0, 0, 0, time.UTC)
	for _, mode := range []string{engram.ModeDeep, engram.ModeShallow, engram.ModeKeyword} {
		resp, err := s.Recall(ctx, engram.RecallRequest{Query: "billing database Dana", Mode: mode, AsOf: asOf,
			Kinds: []string{engram.KindMemory, engram.KindFact}})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]engram.Result{}
		for _, r := range resp.Results {
			if r.Kind == engram.KindTurn {
				t.Errorf("%s: a turn result when only memories and facts were asked for: %+v", mode, r)
			}
			got[r.ID] = r
		}
		pg, ok := got["mem-pg"]
		if !ok || len(pg.Sources) != 1 || pg.Sources[0].ID != f.turns[1].ID || pg.Sources[0].Session == "" || !strings.Contains(pg.Text, "JSONB") {
			t.Errorf("%s: the decision memory with its source: %+v", mode, pg)
		}
		if _, ok := got["mem-old"]; ok {
			t.Errorf("%s: a superseded memory was returned", mode)
		}
		var fact *engram.Result
		for _, r := range resp.Results {
			if r.Kind == engram.KindFact {
				fact = &r
			}
		}
		if fact == nil || !strings.Contains(fact.Text, "Dana lives in Lisbon (since") || len(fact.Sources) != 1 {
			t.Errorf("%s: the fact result: %+v", mode, fact)
		}
	}
	// Turns and memories together: the memory comes right before its turn.
	resp, err := s.Recall(ctx, engram.RecallRequest{Query: "billing database", Mode: engram.ModeDeep, AsOf: asOf,
		Kinds: []string{engram.KindTurn, engram.KindMemory}, K: 4})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range resp.Results {
		if r.ID == "mem-pg" && (i+1 >= len(resp.Results) || resp.Results[i+1].ID != f.turns[1].ID) {
			t.Errorf("the memory is not followed by its source turn: %+v", resp.Results)
		}
	}
	if len(resp.Results) != 4 {
		t.Errorf("k 4 gave %d results", len(resp.Results))
	}
	// Without layers, asking for them warns and answers with what there is.
	bare := f.service()
	resp, err = bare.Recall(ctx, engram.RecallRequest{Query: "billing", Mode: engram.ModeDeep, Kinds: []string{engram.KindTurn, engram.KindMemory}})
	if err != nil || len(resp.Warnings) == 0 || len(resp.Results) == 0 {
		t.Errorf("layers asked of a service without them: %+v %v", resp, err)
	}
	// Persona facets of the speaker the query names.
	if err := f.db.ApplyFacets(ctx, "test", []engram.FacetUpdate{
		{Namespace: "default", Speaker: "Dana", Facet: engram.FacetIdentity, Key: "lives_in", Value: "Porto", At: f.turns[0].TS, Evidence: []string{f.turns[0].ID}},
		{Namespace: "default", Speaker: "Dana", Facet: engram.FacetIdentity, Key: "lives_in", Value: "Lisbon", At: f.turns[3].TS, Evidence: []string{f.turns[3].ID}},
		{Namespace: "default", Speaker: "Dana", Facet: engram.FacetPreference, Key: "jazz", Value: "likes", At: f.turns[2].TS, Evidence: []string{f.turns[2].ID}},
	}, 1); err != nil {
		t.Fatal(err)
	}
	resp, err = s.Recall(ctx, engram.RecallRequest{Query: "where does dana live", Mode: engram.ModeKeyword, Kinds: []string{engram.KindPersona}})
	if err != nil || len(resp.Results) != 2 {
		t.Fatalf("persona results: %+v %v", resp.Results, err)
	}
	if r := resp.Results[0]; r.Kind != engram.KindPersona || !strings.Contains(r.Text, "lives in: Lisbon") || !strings.Contains(r.Text, "before: Porto") ||
		len(r.Sources) != 1 || r.Sources[0].ID != f.turns[3].ID {
		t.Errorf("the home facet first, with its source: %+v", r)
	}
	if _, err := recall.Validate(engram.RecallRequest{Query: "x", Kinds: []string{"memory", "memories"}}); engram.ErrorField(err) != "kinds[1]" {
		t.Errorf("unknown kind: %v", err)
	}
}

// TestDeepRecall_PersonaFacets: a question asking for a kind of thing in a
// named person's life ("What are Ana's hobbies?") brings the turns behind
// that person's facets of the kind, which share no word with the question,
// as candidates with layer evidence; another person's facets and facets of
// another kind bring nothing.
func TestDeepRecall_PersonaFacets(t *testing.T) {
	f := mustOpenFixtureBy(t, []string{
		"Morning! Weather looks fine today.",
		"Went climbing at the gym again after work, my forearms are gone",
		"I bought a new kettle for the office",
		"Bo here: I played chess all evening",
		"Lunch was okay, nothing special.",
	}, func(i int) string { return []string{"Ana", "Ana", "Ana", "Bo", "Ana"}[i] })
	ctx := context.Background()
	at := f.turns[1].TS
	if err := f.db.ApplyFacets(ctx, "test", []engram.FacetUpdate{
		{Namespace: "default", Speaker: "Ana", Facet: engram.FacetActivity, Key: "climbing", Value: "went", At: at, Evidence: []string{f.turns[1].ID}},
		{Namespace: "default", Speaker: "Ana", Facet: engram.FacetPossession, Key: "kettle", Value: "bought", At: at, Evidence: []string{f.turns[2].ID}},
		{Namespace: "default", Speaker: "Bo", Facet: engram.FacetActivity, Key: "chess", Value: "played", At: at, Evidence: []string{f.turns[3].ID}},
	}, 5); err != nil {
		t.Fatal(err)
	}
	s := f.service()
	s.Layers = f.db
	resp, err := s.Recall(ctx, engram.RecallRequest{Query: "What are ana's hobbies?", Mode: engram.ModeDeep, K: 5})
	if err != nil {
		t.Fatal(err)
	}
	layer := map[string]float64{}
	for _, r := range resp.Results {
		layer[r.ID] = r.Signals.Layer
	}
	if layer[f.turns[1].ID] <= 0 {
		t.Errorf("results %v: want Ana's climbing turn %s with layer evidence", resultIDs(resp.Results), f.turns[1].ID)
	}
	if layer[f.turns[2].ID] > 0 || layer[f.turns[3].ID] > 0 {
		t.Errorf("layer evidence %v: a possession and Bo's activity answer no question about Ana's hobbies", layer)
	}
	// The question asks for the set of Ana's hobbies: the turn behind
	// each gets the persona signal too; a question about one thing of the
	// kind gets the layer evidence alone.
	for _, q := range []struct {
		query   string
		persona float64
	}{{"What are ana's hobbies?", 1}, {"What did ana play after work?", 0}} {
		resp, err := s.Recall(ctx, engram.RecallRequest{Query: q.query, Mode: engram.ModeDeep, K: 5})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, r := range resp.Results {
			if r.ID == f.turns[1].ID {
				found = true
				if r.Signals.Persona != q.persona || r.Signals.Layer <= 0 {
					t.Errorf("%q: the climbing turn's signals %+v, want persona %v and layer evidence", q.query, *r.Signals, q.persona)
				}
			} else if r.Signals.Persona != 0 {
				t.Errorf("%q: result %s has the persona signal %v, which no facet of the kind cites", q.query, r.ID, r.Signals.Persona)
			}
		}
		if !found {
			t.Errorf("%q: results %v lack the climbing turn %s", q.query, resultIDs(resp.Results), f.turns[1].ID)
		}
	}
}

// TestDeepRecall_PersonaFacetsByName: a person who chats under an account
// name and gave their own name ("I'm Sam") is asked about by that name:
// the facets of the persona whose identity holds it answer.
func TestDeepRecall_PersonaFacetsByName(t *testing.T) {
	f := mustOpenFixtureBy(t, []string{
		"Went climbing at the gym again after work, my forearms are gone",
		"Morning! Weather looks fine today.",
		"Lunch was okay, nothing special.",
		"haha forgot to say, I'm Sam by the way",
	}, func(i int) string { return []string{"sk8r", "Bo", "Bo", "sk8r"}[i] })
	ctx := context.Background()
	at := f.turns[0].TS
	if err := f.db.ApplyFacets(ctx, "test", []engram.FacetUpdate{
		{Namespace: "default", Speaker: "sk8r", Facet: engram.FacetIdentity, Key: "name", Value: "Sam", At: f.turns[3].TS, Evidence: []string{f.turns[3].ID}},
		{Namespace: "default", Speaker: "sk8r", Facet: engram.FacetActivity, Key: "climbing", Value: "went", At: at, Evidence: []string{f.turns[0].ID}},
	}, 5); err != nil {
		t.Fatal(err)
	}
	s := f.service()
	s.Layers = f.db
	for _, q := range []struct {
		query string
		want  bool
	}{{"What are Sam's hobbies?", true}, {"What are Bo's hobbies?", false}} {
		resp, err := s.Recall(ctx, engram.RecallRequest{Query: q.query, Mode: engram.ModeDeep, K: 5})
		if err != nil {
			t.Fatal(err)
		}
		var layer float64
		for _, r := range resp.Results {
			if r.ID == f.turns[0].ID {
				layer = r.Signals.Layer
			}
		}
		if (layer > 0) != q.want {
			t.Errorf("%q: the climbing turn's layer evidence %v, want some: %v", q.query, layer, q.want)
		}
	}
}

// TestDeepRecall_SpeakerByAlias: a question naming a person by a name the
// graph knows as theirs ("I'm Kate", said by Emi) favours that speaker's
// turns as if it named them.
func TestDeepRecall_SpeakerByAlias(t *testing.T) {
	f := mustOpenFixtureBy(t, []string{
		"I made pasta with ham and peas for dinner",
		"I made pasta with mushrooms for dinner",
		"Morning! Weather looks fine today.",
	}, func(i int) string { return []string{"Emi", "Elise", "Emi"}[i] })
	ctx := context.Background()
	if err := f.db.ApplyTriples(ctx, "test", []engram.Triple{{Namespace: "default", Subject: "Emi", Predicate: "name",
		Object: "Kate", ValidFrom: f.turns[0].TS, Sources: []string{f.turns[2].ID}}}, 3); err != nil {
		t.Fatal(err)
	}
	s := f.service()
	s.Layers = f.db
	resp, err := s.Recall(ctx, engram.RecallRequest{Query: "what pasta did Kate make for dinner", Mode: engram.ModeDeep, K: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) == 0 || resp.Results[0].ID != f.turns[0].ID || resp.Results[0].Signals.Speaker != 1 {
		t.Fatalf("results %v: want Emi's pasta %s first, with the speaker signal", resultIDs(resp.Results), f.turns[0].ID)
	}
}

// TestDeepRecall_CitedTurnKeepsTheScale checks that a turn only a layer
// brings into deep recall's candidates (a memory cites it; neither search
// found it) is scored on the scale of the turns the searches found and
// does not set it: the others' vector and keyword signals are what they
// were without the memory. A turn the searches passed over lies below
// them, and counted in the min-max of the cosines it squeezed every other
// turn's vector evidence towards 1, which reorders them (on the real chats
// it pushed a question's answer out of the ten).
func TestDeepRecall_CitedTurnKeepsTheScale(t *testing.T) {
	f := mustOpenFixture(t, billingTalk(
		"Which database do we use for the billing reports?",
		"We pick the billing dates for the reports tomorrow.",
		"The database of the billing team is slow on reports.",
		"Unrelated: the cat sat on the mat all afternoon.",
		"Morning all, greetings from my new flat."))
	ctx := context.Background()
	s := f.service()
	s.Layers = f.db
	s.Deep.Candidates = 2 // the searches find a few turns; the decision turn is not among them
	asOf := time.Date(2026, 5, 8, 12, 0, 0, 0, time.UTC)
	q := "which database did we pick for billing"
	signals := func() map[string]engram.Signals {
		t.Helper()
		resp, err := s.Recall(ctx, engram.RecallRequest{Query: q, Mode: engram.ModeDeep, AsOf: asOf})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]engram.Signals{}
		for _, r := range resp.Results {
			got[r.ID] = *r.Signals
		}
		return got
	}
	before := signals()
	decision := f.turns[1].ID
	if _, ok := before[decision]; ok {
		t.Fatalf("the searches found the decision turn without the memory: %v", before)
	}
	at := f.turns[1].TS
	if _, err := f.db.PutMemories(ctx, "test", []engram.Memory{{ID: "mem-pg", Namespace: "default", Type: engram.MemoryDecision,
		Subject: "Bob", Text: "Bob decided to use PostgreSQL for the billing database", Importance: 0.9, TS: at, ValidFrom: at,
		Sources: []string{decision}}}, 2); err != nil {
		t.Fatal(err)
	}
	after := signals()
	if sig, ok := after[decision]; !ok || sig.Layer != 1 {
		t.Fatalf("the memory's turn: %+v (found %v), want it among the results with layer 1", sig, ok)
	}
	for id, b := range before {
		a, ok := after[id]
		if !ok {
			t.Errorf("%s left the results when the memory cited another turn", id)
			continue
		}
		if a.Vector != b.Vector || a.BM25 != b.BM25 {
			t.Errorf("%s: vector %.3f bm25 %.3f with the memory, %.3f and %.3f without: a cited turn moved the scale",
				id, a.Vector, a.BM25, b.Vector, b.BM25)
		}
	}
}
