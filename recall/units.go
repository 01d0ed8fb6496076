package recall

import (
	"cmp"
	"context"
	"math"
	"slices"

	"github.com/engram-dev/engram"
)

// Unit evidence of the deep path.
const (
	// unitHits is how many units of each kind keyword search and vector
	// search propose per query.
	unitHits = 20
	// unitTurnsFrom is how many of the best units lend their turns to the
	// candidates: a turn whose own words miss the question but whose
	// session or scene matches it can then be found.
	unitTurnsFrom = 3
)

// unitScores is the evidence of the retrieval units for one query: each
// unit's BM25 (divided by the best of its kind) and cosine (min-max over
// the hits of its kind), by unit id.
type unitScores struct {
	bm25, vec map[string]float64
	kind      map[string]string
	order     []string           // units by their combined evidence, best first
	of        map[int64][]string // the units of the turns asked about, by seq
}

// unitEvidence scores the units of kind (both for "") scored by keyword
// (hits, from ScoreUnits) and found by vector (vhits, from the path's one
// vector query).
func unitEvidence(hits []engram.UnitScore, vhits []engram.VectorHit, kind string) unitScores {
	us := unitScores{bm25: map[string]float64{}, vec: map[string]float64{}, kind: map[string]string{}}
	best := map[string]float64{}
	for _, h := range hits {
		best[h.Kind] = math.Max(best[h.Kind], h.Score)
	}
	for _, h := range hits {
		if kind != "" && h.Kind != kind {
			continue
		}
		us.kind[h.ID] = h.Kind
		if b := best[h.Kind]; b > 0 {
			us.bm25[h.ID] = h.Score / b
		}
	}
	// Vector hits: min-max per kind, the kind read from the id's prefix.
	lo, hi := map[string]float64{}, map[string]float64{}
	n := map[string]int{}
	for _, h := range vhits {
		k := unitKindOfVector(h.Kind)
		if k == "" || n[k] == unitHits || (kind != "" && k != kind) {
			continue
		}
		if n[k] == 0 {
			lo[k], hi[k] = h.Score, h.Score
		}
		n[k]++
		lo[k], hi[k] = math.Min(lo[k], h.Score), math.Max(hi[k], h.Score)
	}
	seen := map[string]int{}
	for _, h := range vhits {
		k := unitKindOfVector(h.Kind)
		if k == "" || seen[k] == unitHits || (kind != "" && k != kind) {
			continue
		}
		seen[k]++
		us.kind[h.ID] = k
		if hi[k] > lo[k] {
			us.vec[h.ID] = (h.Score - lo[k]) / (hi[k] - lo[k])
		} else {
			us.vec[h.ID] = 1
		}
	}
	us.sort()
	return us
}

// candidateUnits scores the units (of kind; "" for both) of the candidates
// and those of vhits (the vector query's unit hits) by keyword, and returns
// their evidence.
func (s *Service) candidateUnits(ctx context.Context, q engram.TextQuery, cands []*candidate, vhits []engram.VectorHit, kind string) (unitScores, error) {
	if s.Units == nil {
		return unitEvidence(nil, nil, kind), nil
	}
	seqs := make([]int64, 0, len(cands))
	for _, c := range cands {
		if c.turn.Seq != 0 {
			seqs = append(seqs, c.turn.Seq)
		}
	}
	of, err := s.Units.TurnUnits(ctx, seqs)
	if err != nil {
		return unitEvidence(nil, vhits, kind), err
	}
	seen := map[string]bool{}
	var ids []string
	add := func(id string) {
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	for _, seq := range seqs {
		for _, id := range of[seq] {
			add(id)
		}
	}
	for _, h := range vhits {
		add(h.ID)
	}
	for _, seq := range seqs {
		if _, ok := of[seq]; !ok {
			of[seq] = nil // looked up: in no unit
		}
	}
	hits, err := s.Units.ScoreUnits(ctx, q, ids, kind)
	us := unitEvidence(hits, vhits, kind)
	us.of = of
	return us, err
}

// unitKindOfVector is the kind of unit a vector kind stands for, "" for
// none.
func unitKindOfVector(kind string) string {
	switch kind {
	case engram.KindSessionUnit:
		return engram.UnitSession
	case engram.KindSceneUnit:
		return engram.UnitScene
	}
	return ""
}

// score is a unit's evidence: the mean of its keyword and vector evidence
// (the vector half missing when vectors are off).
func (us unitScores) score(id string, vectors bool) float64 {
	if !vectors {
		return us.bm25[id]
	}
	return (us.bm25[id] + us.vec[id]) / 2
}

// unitSignals gives each candidate the evidence of its session part and of
// its scene.
func (s *Service) unitSignals(ctx context.Context, cands []*candidate, us unitScores, vectors bool) error {
	if s.Units == nil || len(us.kind) == 0 {
		return nil
	}
	// The units of the turns candidateUnits looked up are known.
	var seqs []int64
	for _, c := range cands {
		if _, ok := us.of[c.turn.Seq]; !ok {
			seqs = append(seqs, c.turn.Seq)
		}
	}
	of, err := s.Units.TurnUnits(ctx, seqs)
	if err != nil {
		return err
	}
	for seq, ids := range us.of {
		if _, ok := of[seq]; !ok {
			of[seq] = ids
		}
	}
	for _, c := range cands {
		for _, id := range of[c.turn.Seq] {
			v := us.score(id, vectors)
			if us.kind[id] == engram.UnitScene {
				c.sceneN = math.Max(c.sceneN, v)
			} else {
				c.sessN = math.Max(c.sessN, v)
			}
		}
	}
	return nil
}

// merge adds o's units to us (the wider search of a period with too little
// in it), keeping us's scores where both have one.
func (us unitScores) merge(o unitScores) unitScores {
	for id, k := range o.kind {
		if _, ok := us.kind[id]; ok {
			continue
		}
		us.kind[id] = k
		us.bm25[id], us.vec[id] = o.bm25[id], o.vec[id]
	}
	if us.of == nil {
		us.of = map[int64][]string{}
	}
	for seq, ids := range o.of {
		if _, ok := us.of[seq]; !ok {
			us.of[seq] = ids
		}
	}
	us.sort()
	return us
}

// sort orders the units by their evidence, ties in id order so that
// answers are stable.
func (us *unitScores) sort() {
	us.order = us.order[:0]
	for id := range us.kind {
		us.order = append(us.order, id)
	}
	slices.SortFunc(us.order, func(a, b string) int {
		if c := cmp.Compare(us.bm25[b]+us.vec[b], us.bm25[a]+us.vec[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
}
