package recall

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/engram-dev/engram"
)

func cand(id, session string, vecN, bm25N float64, age time.Duration) *candidate {
	return &candidate{turn: engram.Turn{ID: id, Namespace: "n", Session: session, TS: time.Unix(1e9, 0).Add(-age)},
		vecN: vecN, hasCos: true, bm25N: bm25N}
}

// rank fuses hand-built candidates and returns the ids best first.
func rank(cfg DeepConfig, cands ...*candidate) []string {
	cfg = cfg.WithDefaults()
	sessionSignal(cands)
	asOf := time.Unix(1e9, 0)
	for _, c := range cands {
		c.decay = decay(asOf.Sub(c.turn.TS), cfg)
	}
	fuse(cands, cfg, false)
	fuse(cands, cfg, true)
	best, second := cands[0], cands[1]
	if second.final > best.final {
		best, second = second, best
	}
	return []string{best.turn.ID, second.turn.ID}
}

// TestFusionEachSignalDecides builds pairs of candidates equal in every
// signal but one, and checks that the one decides, under both fusions.
func TestFusionEachSignalDecides(t *testing.T) {
	for _, fusion := range []string{FusionProduct, FusionRRF} {
		cfg := DeepConfig{Fusion: fusion}
		cases := []struct {
			name string
			a, b *candidate // a must win
		}{
			{"vector", cand("a", "s1", 0.9, 0.5, 0), cand("b", "s2", 0.2, 0.5, 0)},
			{"bm25", cand("a", "s1", 0.5, 0.9, 0), cand("b", "s2", 0.5, 0.2, 0)},
			{"decay", cand("a", "s1", 0.5, 0.5, 24*time.Hour), cand("b", "s2", 0.5, 0.5, 400*24*time.Hour)},
		}
		for _, tc := range cases {
			if got := rank(cfg, tc.b, tc.a); got[0] != "a" {
				t.Errorf("%s fusion: %s must decide, got %v", fusion, tc.name, got)
			}
		}
		// Session: equal turns, but a's session holds more keyword evidence.
		a, b := cand("a", "s1", 0.5, 0.3, 0), cand("b", "s2", 0.5, 0.3, 0)
		extra := cand("x", "s1", 0, 0.9, 0)
		sessionSignal([]*candidate{a, b, extra})
		if a.sessN <= b.sessN {
			t.Fatalf("session signal: %v <= %v", a.sessN, b.sessN)
		}
		if got := rank(cfg, b, a, extra); got[0] != "a" && got[1] != "a" {
			t.Errorf("%s fusion: the session must lift a above b: %v", fusion, got)
		}
	}
}

func TestDecayConfig(t *testing.T) {
	cfg := DeepConfig{}.WithDefaults()
	if d := decay(0, cfg); d != 1 {
		t.Errorf("decay at age 0 = %v", d)
	}
	if d := decay(cfg.HalfLife, cfg); d < cfg.DecayFloor+(1-cfg.DecayFloor)/2-1e-9 || d > cfg.DecayFloor+(1-cfg.DecayFloor)/2+1e-9 {
		t.Errorf("decay at one half-life = %v", d)
	}
	if d := decay(100*cfg.HalfLife, cfg); d < cfg.DecayFloor {
		t.Errorf("decay below its floor: %v", d)
	}
	off := DeepConfig{HalfLife: -1}.WithDefaults()
	if d := decay(1000*time.Hour, off); d != 1 {
		t.Errorf("decay off = %v", d)
	}
	if err := (DeepConfig{Fusion: "max"}).Validate(); err == nil {
		t.Error("unknown fusion accepted")
	}
	if w := (DeepConfig{VectorWeight: -1}).WithDefaults().VectorWeight; w != 0 {
		t.Errorf("a negative weight switches the signal off, got %v", w)
	}
}

func TestBurstOf(t *testing.T) {
	at := func(id, speaker string, min int) engram.Turn {
		return engram.Turn{ID: id, Speaker: speaker, TS: time.Date(2024, 1, 1, 10, min, 0, 0, time.UTC)}
	}
	before := []engram.Turn{at("a", "Kate", 0), at("b", "elise", 1), at("c", "Elise", 2), at("d", "Elise", 3)}
	hit := at("e", "ELISE", 4)
	after := []engram.Turn{at("f", "Elise", 5), at("g", "Elise", 20), at("h", "Elise", 21)}
	ids := func(ts []engram.Turn) string {
		var out []string
		for _, t := range ts {
			out = append(out, t.ID)
		}
		return strings.Join(out, "")
	}
	for _, tc := range []struct {
		n     int
		taken map[string]bool
		want  string
	}{
		{4, nil, "bcdef"},                       // the name's case aside; the 15-minute pause ends it
		{2, nil, "cdef"},                        // n on each side at most
		{0, nil, "e"},                           // single turns
		{4, map[string]bool{"c": true}, "def"},  // an earlier result's turn ends it
		{4, map[string]bool{"f": true}, "bcde"}, // on either side
	} {
		if got := ids(burstOf(hit, before, after, tc.n, tc.taken)); got != tc.want {
			t.Errorf("burstOf(n=%d, taken %v) = %s, want %s", tc.n, tc.taken, got, tc.want)
		}
	}
	// A turn without a speaker (an agent's transcript) bursts by role.
	u := engram.Turn{ID: "u", Role: engram.RoleUser, TS: hit.TS}
	v := engram.Turn{ID: "v", Role: engram.RoleAssistant, TS: hit.TS}
	w := engram.Turn{ID: "w", Role: engram.RoleUser, TS: hit.TS}
	if got := ids(burstOf(u, nil, []engram.Turn{w, v}, 4, nil)); got != "uw" {
		t.Errorf("by role: %s, want uw", got)
	}
}

func TestBurstResult(t *testing.T) {
	turns := []engram.Turn{{ID: "a", Session: "s", Content: "I'm taking a cooking class"}, {ID: "b", Session: "s", Content: "we make pasta"}}
	r := burstHit{c: &candidate{turn: turns[1]}, turns: turns}.result(0.5)
	if r.ID != "b" || r.Text != "I'm taking a cooking class\nwe make pasta" || len(r.Sources) != 2 || r.Sources[0].ID != "a" || r.Sources[1].ID != "b" {
		t.Fatalf("burst result %+v", r)
	}
	if r := (burstHit{c: &candidate{turn: turns[0]}, turns: turns[:1]}).result(1); r.Text != turns[0].Content || len(r.Sources) != 1 {
		t.Fatalf("single turn result %+v", r)
	}
}

func TestDiverse(t *testing.T) {
	a := cand("a", "s1", 1, 1, 0)
	a.turn.Content = "Sounds good!"
	dup := cand("b", "s2", 0.9, 0.9, 0)
	dup.turn.Content = "  sounds   GOOD! "
	c := cand("c", "s1", 0.8, 0.8, 0)
	c.turn.Content = "We chose PostgreSQL."
	same := cand("a", "s1", 0.7, 0.7, 0) // the same turn again
	same.turn.Content = "Sounds good!"
	s := &Service{} // single turns (n = 0) look nothing up
	got, err := s.bursts(context.Background(), []*candidate{a, dup, c, same}, 10, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].c.turn.ID != "a" || got[1].c.turn.ID != "c" {
		ids := []string{}
		for _, g := range got {
			ids = append(ids, g.c.turn.ID)
		}
		t.Fatalf("bursts kept %v, want [a c]", ids)
	}
	if got, _ := s.bursts(context.Background(), []*candidate{a, c}, 1, 0, 0); len(got) != 1 {
		t.Fatalf("k not respected: %d", len(got))
	}
}

// A hit's context comes from the turns its burst's lookup read when they
// reach n turns past the burst on each side, or the session's end.
func TestBurstHitContext(t *testing.T) {
	turn := func(id string) engram.Turn { return engram.Turn{ID: id} }
	h := burstHit{around: [2][]engram.Turn{{turn("a"), turn("b")}, {turn("c")}}, ends: [2]bool{false, true}}
	before, after, ok := h.context(1)
	if !ok || len(before) != 1 || before[0].ID != "b" || len(after) != 1 || after[0].ID != "c" {
		t.Fatalf("context(1) = %v %v %v", before, after, ok)
	}
	if before, after, ok = h.context(2); !ok || len(before) != 2 || len(after) != 1 {
		t.Fatalf("context(2), the session ending after c: %v %v %v", before, after, ok)
	}
	if _, _, ok = h.context(3); ok {
		t.Fatal("context(3) reaches past what was read before the burst")
	}
	if _, _, ok = (burstHit{}).context(1); ok {
		t.Fatal("a hit whose burst was not looked up has no context")
	}
}

// TestEvidenceProposals: the cited turns that may join the candidates come
// best evidence first, and a turn a scene backs before a memory or facet
// cites it is still proposed (a scene's backing used to hide it).
func TestEvidenceProposals(t *testing.T) {
	ev := evidence{layer: map[string]float64{}, kg: map[string]float64{}, persona: map[string]float64{}}
	for i := range layerNewTurns + 5 {
		ev.cite(ev.layer, fmt.Sprintf("mem-%d", i), 0.3)
	}
	ev.layer["backed"] = 0.2 // a scene's backing, which proposes nothing
	ev.cite(ev.layer, "backed", personaEvidence)
	ev.cite(ev.kg, "fact", 0.6)
	ev.cite(ev.layer, "set", personaEvidence) // a facet of the set a question asks for, cited last
	ev.persona["set"] = 1
	got := ev.proposals()
	if len(got) != layerNewTurns+8 {
		t.Fatalf("%d proposals, want %d: %v", len(got), layerNewTurns+8, got)
	}
	if got[0] != "set" || got[1] != "backed" || got[2] != "fact" || got[3] != "mem-0" {
		t.Errorf("proposals start %v, want the set's facet turn, the other facet's, the fact's, then the memories' in citation order", got[:4])
	}
}

// TestAskedSet: a question asks for the set of a kind when the thing it
// asks for, after "what", "which" or "how many" or after the possessive of
// "What are X's", is a kind of facet named in the plural; a question about
// one thing of a kind, or one whose plural kind is its subject ("What do
// Ana's kids like?") or an adjunct ("with her friends"), does not. The
// questions are made up.
func TestAskedSet(t *testing.T) {
	for _, c := range []struct {
		q    string
		want bool
	}{
		{"What are Ana's hobbies?", true},
		{"what are ana’s favourite hobbies", true},
		{"Which countries has Bo visited?", true},
		{"What new sports did Ana take up last year?", true},
		{"What kind of pets does Bo want?", true},
		{"How many cities did Ana fly to?", true},
		{"In what countries has Ana lived?", true},
		{"What did Ana play on 5 May?", false},
		{"What is Ana's favourite sport?", false},
		{"What do Ana's kids like?", false},
		{"When did Ana have lunch with her friends?", false},
		{"Where is Ana planning to go with her friends?", false},
		{"What illness did Bo have in May?", false},
		{"Can we assume that Ana likes outdoor activities more than indoors?", false},
		{"What does Bo think of the new office?", false},
	} {
		if got := askedSet(c.q) != nil; got != c.want {
			t.Errorf("askedSet(%q) = %v, want %v", c.q, got, c.want)
		}
	}
	// The set is of the kind asked for, not of another the question names.
	if got := askedSet("What sports does Bo play with his friends?"); !got[engram.FacetActivity] || got[engram.FacetRelationship] {
		t.Errorf("kinds of a set of sports asked with friends: %v", got)
	}
}

// TestFusionPersonaSignal: a turn behind a facet of the set a question asks
// for wins over an equal turn, in every fusion, unless the signal is off.
func TestFusionPersonaSignal(t *testing.T) {
	for _, fusion := range []string{FusionSum, FusionProduct, FusionRRF} {
		a, b := cand("a", "s1", 0.5, 0.5, 0), cand("b", "s2", 0.5, 0.5, 0)
		a.personaN = 1
		if got := rank(DeepConfig{Fusion: fusion}, b, a); got[0] != "a" {
			t.Errorf("%s fusion: the persona signal must decide, got %v", fusion, got)
		}
		a.personaN = 1
		if rank(DeepConfig{Fusion: fusion, PersonaWeight: -1}, b, a); a.final != b.final {
			t.Errorf("%s fusion, persona weight off: %v and %v, want equal scores", fusion, a.final, b.final)
		}
	}
}
