package recall

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/engram-dev/engram"
)

// Layer evidence of the deep path.
const (
	layerMemoryHits = 30  // memories searched per query
	layerSceneHits  = 10  // scenes searched per query
	layerNewTurns   = 40  // turns cited by layers that may join the candidates
	sceneShare      = 0.5 // a scene's evidence for its turns, relative to a memory's
	// layerVectorShare scales the evidence of a vector match of a memory or
	// scene against a keyword match: the best vector match of a query is
	// close whatever the query, the best keyword match shares its words.
	// On LoCoMo with the builtin embedder 1.0 costs a point at @10, 0.5 and
	// below cost nothing (docs/benchmarks.md).
	layerVectorShare = 0.5
	kgTriples        = 50 // triples weighed per query
	// Shares of a fact's evidence (they sum to 1): named, keyword, meaning.
	factNamed, factKeyword, factMeaning = 0.35, 0.45, 0.2
	maxEntityNgram                      = 3 // words in an entity name looked up in the graph
	maxEntityLookups                    = 40
)

// splitKinds separates turn hits (at most n) from layer hits (memories,
// scenes, facts) and unit hits, keeping their order.
func splitKinds(hits []engram.VectorHit, n int) (turns, layers, units []engram.VectorHit) {
	for _, h := range hits {
		switch h.Kind {
		case engram.KindTurn:
			if len(turns) < n {
				turns = append(turns, h)
			}
		case engram.KindSessionUnit, engram.KindSceneUnit:
			units = append(units, h)
		default:
			layers = append(layers, h)
		}
	}
	return turns, layers, units
}

// layerVectorEvidence adds the vector matches of memories and scenes to ev:
// each hit's cosine divided by the best of its kind, given to the turns the
// item cites (memories) or holds (scenes, and only to turns other evidence
// found). Superseded memories are dropped.
func (s *Service) layerVectorEvidence(ctx context.Context, ev *evidence, hits []engram.VectorHit) error {
	if s.Layers == nil {
		return nil
	}
	score := map[string]float64{}
	best := map[string]float64{}
	var memIDs, sceneIDs []string
	for _, h := range hits {
		if h.Score <= 0 {
			continue
		}
		score[h.ID] = h.Score
		best[h.Kind] = max(best[h.Kind], h.Score)
		if h.Kind == engram.KindMemory && len(memIDs) < layerMemoryHits {
			memIDs = append(memIDs, h.ID)
		} else if h.Kind == engram.KindScene && len(sceneIDs) < layerSceneHits {
			sceneIDs = append(sceneIDs, h.ID)
		}
	}
	mems, err := s.Layers.GetMemories(ctx, memIDs)
	if err != nil {
		return err
	}
	for _, m := range mems {
		if !m.Active() {
			continue
		}
		for _, id := range m.Sources {
			ev.cite(ev.layer, id, layerVectorShare*score[m.ID]/best[engram.KindMemory])
		}
	}
	scenes, err := s.Layers.GetScenes(ctx, sceneIDs)
	if err != nil {
		return err
	}
	for _, sc := range scenes {
		v := layerVectorShare * sceneShare * score[sc.ID] / best[engram.KindScene]
		for _, id := range sc.Turns {
			ev.layer[id] = max(ev.layer[id], v)
		}
	}
	return nil
}

// proposals returns the turns cited, the best evidence first (the first
// cited first among equals; a facet of the set a question asks for above
// any other): the cited turns that may join the candidates are taken from
// its head, so a facet of the kind a question asks for, cited after thirty
// memories' sources, is not cut for coming late.
func (ev *evidence) proposals() []string {
	order := slices.Clone(ev.order)
	strength := func(id string) float64 { return max(ev.layer[id], ev.kg[id]) + ev.persona[id] }
	slices.SortStableFunc(order, func(a, b string) int { return cmp.Compare(strength(b), strength(a)) })
	return order
}

// cite records that an item with evidence v cites turn id in m, and
// remembers the order turns were first cited in.
func (ev *evidence) cite(m map[string]float64, id string, v float64) {
	if !ev.cited[id] {
		if ev.cited == nil {
			ev.cited = map[string]bool{}
		}
		ev.cited[id] = true
		ev.order = append(ev.order, id)
	}
	if v > m[id] {
		m[id] = v
	}
}

// evidence is what the derived layers say about turns: the best normalised
// memory or scene match citing a turn (layer), the confidence of the
// knowledge-graph triples of the query's entities citing it (kg), and 1
// for a turn behind a facet of the set a question asks for (persona).
type evidence struct {
	layer, kg, persona map[string]float64
	order              []string // turn ids cited, in the order first cited
	// cited holds the ids in order: a turn a scene backs (in layer, not
	// cited) may still be proposed by a memory, a facet or a fact.
	cited map[string]bool
	// aliases are the people (lower case) the query names by a name the
	// graph knows them by.
	aliases []string
	// aliasNames are those names, as the graph holds them.
	aliasNames []string
}

// layerEvidence searches the layers for text. The graph is read as of to
// (the end of the searched period). A nil Layers gives no evidence.
func (s *Service) layerEvidence(ctx context.Context, ns, text string, from, to time.Time, cfg DeepConfig) (evidence, error) {
	ev := evidence{layer: map[string]float64{}, kg: map[string]float64{}, persona: map[string]float64{}}
	if s.Layers == nil {
		return ev, nil
	}
	if cfg.LayerWeight > 0 {
		q := engram.TextQuery{Namespace: ns, Text: text, Limit: layerMemoryHits, From: from, To: to}
		mems, err := s.Layers.SearchMemories(ctx, q)
		if err != nil {
			return ev, fmt.Errorf("search memories: %w", err)
		}
		for _, h := range mems {
			for _, id := range h.Memory.Sources {
				ev.cite(ev.layer, id, h.Score/mems[0].Score)
			}
		}
		q.Limit = layerSceneHits
		scenes, err := s.Layers.SearchScenes(ctx, q)
		if err != nil {
			return ev, fmt.Errorf("search scenes: %w", err)
		}
		for _, h := range scenes {
			v := sceneShare * h.Score / scenes[0].Score
			for _, id := range h.Scene.Turns {
				// Scenes back turns other evidence found; they do not
				// propose all their turns.
				if v > ev.layer[id] {
					ev.layer[id] = v
				}
			}
		}
		if err := s.personaFacetEvidence(ctx, &ev, ns, text); err != nil {
			return ev, err
		}
	}
	return ev, nil
}

// scoredFact is a triple with the evidence that the query is about it.
type scoredFact struct {
	triple engram.Triple
	score  float64 // 0..1
}

// factLookups are the facts valid at a time that a query names an entity
// of (named) or matches the words of (found, best first).
type factLookups struct {
	named []engram.Triple
	found []engram.TripleHit
}

// lookUpFacts finds the facts valid at at (zero: now) that text names an
// entity of or matches the words of: matchFacts' searches that need no
// vector, so that deep recall runs them beside its vector query.
func (s *Service) lookUpFacts(ctx context.Context, ns, text string, at time.Time) (factLookups, error) {
	var l factLookups
	var err error
	if l.named, err = s.Layers.EntityTriples(ctx, namespaceOrDefault(ns), entityNames(text), at, kgTriples); err != nil {
		return l, err
	}
	l.found, err = s.Layers.SearchTriples(ctx, engram.TextQuery{Namespace: ns, Text: text, Limit: kgTriples}, at)
	return l, err
}

// matchFacts returns the triples valid at at (zero: now) that the query is
// about, with evidence (0..1) summed from three sources: naming one of its
// entities (0.35), matching its words (0.45 times BM25 divided by the best)
// and, from hits (vector hits of kind fact), closeness in meaning (0.2
// times the cosine divided by the best).
func (s *Service) matchFacts(ctx context.Context, ns, text string, at time.Time, hits []engram.VectorHit) ([]scoredFact, error) {
	l, err := s.lookUpFacts(ctx, ns, text, at)
	if err != nil {
		return nil, err
	}
	return s.scoreFacts(ctx, l, at, hits)
}

// scoreFacts is matchFacts given the facts looked up (lookUpFacts).
func (s *Service) scoreFacts(ctx context.Context, l factLookups, at time.Time, hits []engram.VectorHit) ([]scoredFact, error) {
	byID := map[string]*scoredFact{}
	var order []string
	add := func(t engram.Triple, v float64) {
		if f, ok := byID[t.ID]; ok {
			f.score += v
			return
		}
		byID[t.ID] = &scoredFact{t, v}
		order = append(order, t.ID)
	}
	for _, t := range l.named {
		add(t, factNamed)
	}
	for _, h := range l.found {
		add(h.Triple, factKeyword*h.Score/l.found[0].Score)
	}
	var ids []string
	best, cos := 0.0, map[string]float64{}
	for _, h := range hits {
		if h.Kind == engram.KindFact && h.Score > 0 {
			ids = append(ids, h.ID)
			cos[h.ID] = h.Score
			best = max(best, h.Score)
		}
	}
	close, err := s.Layers.GetTriples(ctx, ids)
	if err != nil {
		return nil, err
	}
	for _, t := range close {
		if t.ValidAt(orNow(at)) {
			add(t, factMeaning*cos[t.ID]/best)
		}
	}
	out := make([]scoredFact, 0, len(order))
	for _, id := range order {
		out = append(out, *byID[id])
	}
	return out, nil
}

// kgEvidence gives the turns behind the facts the query is about (those
// looked up, l, and the facts among the vector hits) their evidence times
// the fact's confidence, and notes the people the query names by a name
// the graph holds for them. The graph is read as of at.
func (s *Service) kgEvidence(ctx context.Context, ev *evidence, text string, at time.Time, l factLookups, hits []engram.VectorHit) error {
	facts, err := s.scoreFacts(ctx, l, at, hits)
	if err != nil {
		return err
	}
	qwords := words(text)
	for _, f := range facts {
		for _, id := range f.triple.Sources {
			ev.cite(ev.kg, id, f.score*f.triple.Confidence)
		}
		// A name the query says that the graph holds as another name of
		// someone ("I'm Kate", said by Emi): the query names Emi.
		if t := f.triple; engram.AliasPredicate(t.Predicate) && namesSpeaker(qwords, strings.ToLower(text), strings.ToLower(t.Object)) {
			ev.aliases = append(ev.aliases, strings.ToLower(t.Subject))
			ev.aliasNames = append(ev.aliasNames, t.Object)
		}
	}
	return nil
}

// periodEnd is the last moment of a period ending (exclusively) at to;
// zero stays zero (now).
func periodEnd(to time.Time) time.Time {
	if to.IsZero() {
		return to
	}
	return to.Add(-time.Nanosecond)
}

func orNow(t time.Time) time.Time {
	if t.IsZero() {
		return time.Now()
	}
	return t
}

func namespaceOrDefault(ns string) string {
	if ns == "" {
		return engram.DefaultNamespace
	}
	return ns
}

// entityNames returns the runs of one to three words of text that could
// name an entity, longest first, at most maxEntityLookups: the graph
// resolves them by normalised name and alias, so "what does Alice's sister
// do" tries "alice's sister", "alice", "sister" and so on.
func entityNames(text string) []string {
	words := strings.FieldsFunc(text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' && r != '-' && r != '.' && r != '_' && r != '#' && r != '+'
	})
	for i, w := range words {
		w = strings.Trim(w, "'.-")
		w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "’s")
		words[i] = w
	}
	var out []string
	seen := map[string]bool{}
	for n := maxEntityNgram; n >= 1; n-- {
		for i := 0; i+n <= len(words); i++ {
			part := words[i : i+n]
			if n == 1 && entityStop[strings.ToLower(part[0])] {
				continue
			}
			name := strings.Join(part, " ")
			key := strings.ToLower(name)
			if name == "" || seen[key] {
				continue
			}
			seen[key] = true
			out = append(out, name)
			if len(out) == maxEntityLookups {
				return out
			}
		}
	}
	return out
}

// entityStop are words never looked up alone as entities.
var entityStop = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the i me my we our you your he him his she her it its they them their
		is are was were be been do does did have has had what which who whom when where why how
		and or but if then of at by for with about to from in on up down out over this that these those
		remember recall tell say said think know did does not no yes`) {
		m[w] = true
	}
	return m
}()
