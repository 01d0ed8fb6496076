package recall

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/engram-dev/engram"
)

// hybridCandidates is how many turns each of BM25 and vector search
// proposes on the hybrid path (more when k is larger).
const hybridCandidates = 50

// hybridBM25Weight is the default path's keyword weight, equal to the
// vector's. Deep's (DeepConfig.BM25Weight) is its own: deep's keyword
// evidence leaves the query's names out, the default path's does not, and
// a heavier keyword weight lowers the default path on real chats.
const hybridBM25Weight = 1.0

// hybrid is the default path: BM25 and vector search of single turns, each
// signal normalised over the candidates (BM25 by the best, the cosine
// min-max) and summed with equal weights, plus, with SessionWeight on, the
// evidence of each turn's session as a whole (its text by BM25 and its
// vector) and the speaker signal (see namedSpeakers). No layers, no lookups of the turns around a hit. Turns dated at
// or after before (when set) are left out. A failing vector side (embedder
// or index) returns a *vectorError, and the caller answers with keyword
// search.
func (s *Service) hybrid(ctx context.Context, v *Vectors, ns, text string, k int, before time.Time, warn func(string)) ([]engram.Result, error) {
	cfg := s.Deep.WithDefaults()
	n := max(k, hybridCandidates)
	sessions := s.Units != nil && cfg.SessionWeight > 0
	var (
		wg    sync.WaitGroup
		qvec  []float32
		vhits []engram.VectorHit
		verr  error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		if qvec, verr = embedQuery(ctx, v.Embedder, text); verr != nil {
			return
		}
		q := engram.VectorQuery{Vector: qvec, K: n, Namespace: ns, Kinds: []string{engram.KindTurn}, To: before}
		if sessions {
			q.Kinds, q.K = append(q.Kinds, engram.KindSessionUnit), n+unitHits
		}
		vhits, verr = v.Index.Query(ctx, q)
	}()
	bhits, berr := s.index.SearchTurns(ctx, engram.TextQuery{Namespace: ns, Text: text, Limit: n, To: before})
	wg.Wait()
	if berr != nil {
		return nil, fmt.Errorf("keyword search: %w", berr)
	}
	if verr != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &vectorError{verr}
	}
	turnHits, _, unitVecHits := splitKinds(vhits, n)

	p := newPool(bhits, turnHits)
	if err := p.load(ctx, s); err != nil {
		return nil, err
	}
	cands := p.indexed(nil)
	if len(cands) == 0 {
		return []engram.Result{}, nil
	}
	if err := cosines(ctx, v, qvec, cands); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		warn(fmt.Sprintf("scoring keyword candidates by meaning failed (%s)", engram.ErrorMessage(err)))
	}
	normalise(cands)
	if sessions {
		us, err := s.candidateUnits(ctx, engram.TextQuery{Namespace: ns, Text: text, To: before}, cands, unitVecHits, engram.UnitSession)
		if err == nil {
			err = s.unitSignals(ctx, cands, us, true)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			warn(fmt.Sprintf("the sessions could not be searched (%s): answered on single turns", engram.ErrorMessage(err)))
		}
	}
	// Who said it counts on the default path too: it costs no lookup.
	var named map[string]bool
	if cfg.SpeakerWeight > 0 {
		named = namedSpeakers(text, cands)
	}
	for _, c := range cands {
		c.speakerN = btoi(named[speakerOf(c.turn)])
		c.final = cfg.VectorWeight*c.vecN + hybridBM25Weight*c.bm25N + cfg.SpeakerWeight*c.speakerN
		if sessions {
			c.final += cfg.SessionWeight * c.sessN
		}
	}
	// A candidate whose every signal is at the floor (the least similar by
	// meaning of all the candidates, no keyword in common, nothing from its
	// session) carries no evidence: listing it would only pad the results
	// of a small namespace with an unrelated turn scored 0.
	kept := cands[:0]
	for _, c := range cands {
		if c.final > 0 {
			kept = append(kept, c)
		}
	}
	cands = kept
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].final != cands[j].final {
			return cands[i].final > cands[j].final
		}
		return cands[i].turn.Seq > cands[j].turn.Seq
	})
	hits, err := s.bursts(ctx, cands, k, cfg.BurstTurns, 0)
	if err != nil {
		return nil, err
	}
	results := make([]engram.Result, len(hits))
	for i, h := range hits {
		results[i] = h.result(h.c.final)
	}
	return results, nil
}

// vectorError is a failure of the vector side (embedding the query or the
// vector query) on a path that can answer from keywords alone.
type vectorError struct{ err error }

func (e *vectorError) Error() string { return e.err.Error() }
func (e *vectorError) Unwrap() error { return e.err }
