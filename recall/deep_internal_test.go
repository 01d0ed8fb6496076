package recall

import (
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

func TestDiverse(t *testing.T) {
	a := cand("a", "s1", 1, 1, 0)
	a.turn.Content = "Sounds good!"
	dup := cand("b", "s2", 0.9, 0.9, 0)
	dup.turn.Content = "  sounds   GOOD! "
	c := cand("c", "s1", 0.8, 0.8, 0)
	c.turn.Content = "We chose PostgreSQL."
	same := cand("a", "s1", 0.7, 0.7, 0) // the same turn again
	same.turn.Content = "Sounds good!"
	got := diverse([]*candidate{a, dup, c, same}, 10)
	if len(got) != 2 || got[0].turn.ID != "a" || got[1].turn.ID != "c" {
		ids := []string{}
		for _, g := range got {
			ids = append(ids, g.turn.ID)
		}
		t.Fatalf("diverse kept %v, want [a c]", ids)
	}
	if got := diverse([]*candidate{a, c}, 1); len(got) != 1 {
		t.Fatalf("k not respected: %d", len(got))
	}
}
