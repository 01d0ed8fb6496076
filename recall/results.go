package recall

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/engram-dev/engram"
)

// layerAnchorPool is how many turn results are computed when layer results
// are wanted: a layer result is placed just before the best turn result it
// stems from, so the turn list is longer than k, then cut.
const layerAnchorPool = 30

// layersWanted reports whether req asks for any layer kind.
func layersWanted(req engram.RecallRequest) bool {
	return req.Wants(engram.KindMemory) || req.Wants(engram.KindScene) || req.Wants(engram.KindFact) || req.Wants(engram.KindPersona)
}

// layerItem is a memory, scene or fact matching the query, with the turns
// it stems from and its evidence (0..1).
type layerItem struct {
	result  engram.Result
	sources []string
	score   float64
}

// withLayers merges the layer results req asks for into the turn results
// (turns ranked first to last): each layer result goes just before the best
// turn result among its sources and takes its score; layer results whose
// sources are not among the turn results follow, by evidence. Without
// turns, layer results rank by their own evidence (0.7) and their best
// source turn's standing (0.3); the score is that mix, 0..1. Recall cuts
// the list to req.K. A failing layer
// search warns and leaves the turn results.
func (s *Service) withLayers(ctx context.Context, v *Vectors, req engram.RecallRequest, ns, text string,
	from, to time.Time, turns []engram.Result, warn func(string)) ([]engram.Result, error) {
	items, err := s.layerItems(ctx, v, req, ns, text, from, to)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		warn(fmt.Sprintf("the derived layers could not be searched (%s): turn results only", engram.ErrorMessage(err)))
		items = nil
	}
	rank := make(map[string]int, len(turns))
	for i, t := range turns {
		rank[t.ID] = i
	}
	type placed struct {
		r   engram.Result
		key float64 // position: a turn at i has i; a layer result just before its anchor
	}
	var out []placed
	if req.Wants(engram.KindTurn) {
		for i, t := range turns {
			out = append(out, placed{t, float64(i)})
		}
	}
	minScore := 0.0
	if len(turns) > 0 {
		minScore = turns[len(turns)-1].Score
	}
	withTurns := req.Wants(engram.KindTurn)
	for _, it := range items {
		anchor := -1
		for _, id := range it.sources {
			if i, ok := rank[id]; ok && (anchor < 0 || i < anchor) {
				anchor = i
			}
		}
		r := it.result
		switch {
		case !withTurns:
			// Layer results alone: mostly their own evidence, partly how
			// high their best source turn ranks.
			standing := 0.0
			if anchor >= 0 {
				standing = 1 - float64(anchor)/float64(len(turns))
			}
			r.Score = 0.7*it.score + 0.3*standing
			out = append(out, placed{r, -r.Score})
		case anchor >= 0:
			r.Score = turns[anchor].Score
			out = append(out, placed{r, float64(anchor) - 0.5 + (1-it.score)*0.1})
		default:
			r.Score = minScore * it.score
			out = append(out, placed{r, float64(len(turns)) + 1 - it.score})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].key < out[j].key })
	results := make([]engram.Result, 0, len(out))
	for _, p := range out {
		results = append(results, p.r)
	}
	return results, nil
}

// layerItems finds the memories, scenes and facts req asks for: memories and
// scenes by BM25 and, with vectors, by meaning, within [from, to); facts
// valid at the end of the period, through the entities the query names, BM25
// and meaning. Superseded memories are left out.
func (s *Service) layerItems(ctx context.Context, v *Vectors, req engram.RecallRequest, ns, text string, from, to time.Time) ([]layerItem, error) {
	if s.Layers == nil {
		return nil, engram.Errorf(engram.EUNSUPPORTED, "this engram builds no derived layers (extractor none)")
	}
	score := map[string]float64{} // by item id: the best evidence
	add := func(id string, v float64) { score[id] = max(score[id], v) }
	q := engram.TextQuery{Namespace: ns, Text: text, Limit: layerMemoryHits, From: from, To: to}
	var memIDs, sceneIDs []string
	if req.Wants(engram.KindMemory) {
		hits, err := s.Layers.SearchMemories(ctx, q)
		if err != nil {
			return nil, err
		}
		for _, h := range hits {
			add(h.Memory.ID, h.Score/hits[0].Score)
			memIDs = append(memIDs, h.Memory.ID)
		}
	}
	if req.Wants(engram.KindScene) {
		q.Limit = layerSceneHits
		hits, err := s.Layers.SearchScenes(ctx, q)
		if err != nil {
			return nil, err
		}
		for _, h := range hits {
			add(h.Scene.ID, h.Score/hits[0].Score)
			sceneIDs = append(sceneIDs, h.Scene.ID)
		}
	}
	var kinds []string // searched by meaning
	for _, k := range []string{engram.KindMemory, engram.KindScene, engram.KindFact} {
		if req.Wants(k) {
			kinds = append(kinds, k)
		}
	}
	var vhits []engram.VectorHit
	if v != nil && v.Unavailable == "" && len(kinds) > 0 {
		qvec, err := embedQuery(ctx, v.Embedder, text)
		if err != nil {
			return nil, err
		}
		vhits, err = v.Index.Query(ctx, engram.VectorQuery{Vector: qvec, K: layerMemoryHits + layerSceneHits + kgTriples, Namespace: ns,
			Kinds: kinds})
		if err != nil {
			return nil, fmt.Errorf("vector query: %w", err)
		}
		best := map[string]float64{}
		for _, h := range vhits {
			best[h.Kind] = max(best[h.Kind], h.Score)
		}
		for _, h := range vhits {
			if h.Score <= 0 {
				continue
			}
			add(h.ID, layerVectorShare*h.Score/best[h.Kind])
			if h.Kind == engram.KindMemory && !slices.Contains(memIDs, h.ID) {
				memIDs = append(memIDs, h.ID)
			} else if h.Kind == engram.KindScene && !slices.Contains(sceneIDs, h.ID) {
				sceneIDs = append(sceneIDs, h.ID)
			}
		}
	}
	var items []layerItem
	mems, err := s.Layers.GetMemories(ctx, memIDs)
	if err != nil {
		return nil, err
	}
	for _, m := range mems {
		if !m.Active() || !inPeriod(m.TS, from, to) {
			continue
		}
		text := m.Text
		if m.Rationale != "" {
			text += " (because " + m.Rationale + ")"
		}
		items = append(items, layerItem{engram.Result{ID: m.ID, Kind: engram.KindMemory, Text: text, TS: m.TS,
			Namespace: m.Namespace, Speaker: m.Subject}, m.Sources, score[m.ID]})
	}
	scenes, err := s.Layers.GetScenes(ctx, sceneIDs)
	if err != nil {
		return nil, err
	}
	for _, sc := range scenes {
		if (!to.IsZero() && !sc.Start.Before(to)) || (!from.IsZero() && sc.End.Before(from)) {
			continue // outside the period: vector hits are not filtered by time
		}
		items = append(items, layerItem{engram.Result{ID: sc.ID, Kind: engram.KindScene, Text: sc.Title + ": " + sc.Summary,
			TS: sc.Start, Namespace: sc.Namespace, Session: sc.Session}, sc.Turns, score[sc.ID]})
	}
	if req.Wants(engram.KindFact) {
		facts, err := s.matchFacts(ctx, ns, text, periodEnd(to), vhits)
		if err != nil {
			return nil, err
		}
		for _, f := range facts {
			t := f.triple
			items = append(items, layerItem{engram.Result{ID: t.ID, Kind: engram.KindFact, Text: FactText(t), TS: t.ValidFrom,
				Namespace: t.Namespace}, t.Sources, f.score * (0.5 + 0.5*t.Confidence)})
		}
	}
	if req.Wants(engram.KindPersona) {
		facets, err := s.personaItems(ctx, ns, text)
		if err != nil {
			return nil, err
		}
		items = append(items, facets...)
	}
	if err := s.attachSources(ctx, items); err != nil {
		return nil, err
	}
	return items, nil
}

// FactText reads a triple as a sentence: "Alice lives in Lisbon (since
// 2026-02-09)".
func FactText(t engram.Triple) string {
	when := " (since " + t.ValidFrom.Format(time.DateOnly) + ")"
	if !t.ValidTo.IsZero() {
		when = " (" + t.ValidFrom.Format(time.DateOnly) + " to " + t.ValidTo.Format(time.DateOnly) + ")"
	}
	return t.Sentence() + when
}

// attachSources loads the turns layer items stem from and sets their
// sources (turn id, session, time, meta), in the order the item lists them.
func (s *Service) attachSources(ctx context.Context, items []layerItem) error {
	var ids []string
	seen := map[string]bool{}
	for _, it := range items {
		for _, id := range it.sources {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	turns, err := s.index.GetTurns(ctx, ids)
	if err != nil {
		return fmt.Errorf("load source turns: %w", err)
	}
	byID := make(map[string]engram.Turn, len(turns))
	for _, t := range turns {
		byID[t.ID] = t
	}
	for i := range items {
		it := &items[i]
		it.result.Sources = []engram.Source{}
		for _, id := range it.sources {
			if t, ok := byID[id]; ok {
				it.result.Sources = append(it.result.Sources, engram.Source{ID: t.ID, Session: t.Session, TS: t.TS, Meta: t.Meta})
				if it.result.Session == "" {
					it.result.Session = t.Session
				}
			}
		}
	}
	return nil
}

// maxPersonaLookups bounds the names looked up as speakers per query.
const maxPersonaLookups = 8

// personaItems returns the persona facets of the speakers the query names:
// each facet with evidence 0.5, plus up to 0.5 for the share of the query's
// other words it holds ("what does Alice like" ranks her preferences
// first).
func (s *Service) personaItems(ctx context.Context, ns, text string) ([]layerItem, error) {
	var items []layerItem
	seen := map[string]bool{}
	words := contentWords(text)
	for i, name := range entityNames(text) {
		if i == maxPersonaLookups {
			break
		}
		ps, err := s.Layers.Persona(ctx, namespaceOrDefault(ns), name)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			if seen[p.Speaker] {
				continue
			}
			seen[p.Speaker] = true
			rest := slices.DeleteFunc(slices.Clone(words), func(w string) bool { return strings.Contains(strings.ToLower(p.Speaker), w) })
			for _, f := range p.Facets {
				text := p.Speaker + " " + f.Facet + " " + strings.ReplaceAll(f.Key, "_", " ") + ": " + f.Value +
					" (since " + f.Since.Format(time.DateOnly)
				if n := len(f.History); n > 0 {
					text += "; before: " + f.History[n-1].Value
				}
				text += ")"
				hold := 0
				lower := strings.ToLower(text)
				for _, w := range rest {
					if strings.Contains(lower, w) {
						hold++
					}
				}
				score := 0.5
				if len(rest) > 0 {
					score += 0.5 * float64(hold) / float64(len(rest))
				}
				id := "persona:" + p.Namespace + ":" + p.Speaker + ":" + f.Facet + ":" + f.Key
				items = append(items, layerItem{engram.Result{ID: id, Kind: engram.KindPersona, Text: text, TS: f.Since,
					Namespace: p.Namespace, Speaker: p.Speaker}, f.Evidence, score})
			}
		}
	}
	return items, nil
}

// contentWords returns the lower-case words of text of three or more
// letters that are not stop words, with a plural or verb "s" dropped
// ("likes" matches "like").
func contentWords(text string) []string {
	var out []string
	for _, w := range words(strings.ToLower(text)) {
		if len([]rune(w)) < 3 || entityStop[w] {
			continue
		}
		if len(w) > 3 {
			w = strings.TrimSuffix(w, "s")
		}
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}
