package recall

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/engram-dev/engram"
)

// AllNamespaces, given as a request's namespace, searches every namespace.
const AllNamespaces = engram.AllNamespaces

// MaxBudgetTokens bounds a request's context budget.
const MaxBudgetTokens = 1 << 20

// DefaultSyncWait bounds how long a recall waits for the indexes to take in
// the acknowledged turns before it answers from what is indexed, with a
// warning.
const DefaultSyncWait = 500 * time.Millisecond

// Vectors is the vector side of recall: the embedder of the active model and
// the index holding that model's vectors.
type Vectors struct {
	Embedder engram.Embedder
	Index    engram.VectorIndex
	// Sync, if set, waits until the index holds the turns a client may
	// expect (read-your-writes: those acknowledged), and fails while it
	// lacks some. Recall calls it bounded by SyncWait and warns when it
	// fails; it must not wait for writes still in flight, other clients'.
	Sync func(ctx context.Context) error
	// Unavailable, if set, says why vector recall is off (an embedder that
	// cannot start, say): shallow requests are answered by keyword search
	// with this as a warning.
	Unavailable string
}

// Service runs recall requests.
type Service struct {
	index   engram.TurnIndex
	vectors atomic.Pointer[Vectors]

	// Sync, if set, is the turn index's wait, as Vectors.Sync.
	Sync     func(ctx context.Context) error
	SyncWait time.Duration
	// Layers, if set, lets the deep path weigh the derived layers (L1
	// memories, L2 scenes, the L4 graph).
	Layers engram.LayerIndex
	// LayerLag, if set, describes the layers that have not taken in every
	// archived turn yet ("" when none): deep recall and layer results warn
	// with it, since they may rank otherwise once the layers catch up.
	LayerLag func(ctx context.Context) string
	// Units, if set, lets the deep path weigh each turn's session and scene
	// as retrieval units of their own.
	Units engram.UnitIndex
	// Words, if set, are the word vectors of query expansion (off unless
	// DeepConfig.ExpansionWeight is positive).
	Words WordVectors
	// Docs, if set, adds the chunks of the indexed vaults to the results.
	Docs engram.DocIndex
	// Deep tunes the deep path; Triggers decides when auto runs it.
	Deep     DeepConfig
	Triggers *TriggerMatcher
	// Now is the clock, for took_ms.
	Now func() time.Time
}

var _ engram.RecallService = (*Service)(nil)

// NewService returns a recall service over idx, keyword only until
// SetVectors is called.
func NewService(idx engram.TurnIndex) *Service {
	m, err := NewTriggerMatcher(DefaultTriggers())
	if err != nil {
		panic(fmt.Sprintf("recall: default triggers: %v", err)) // a bug in DefaultTriggers
	}
	return &Service{index: idx, SyncWait: DefaultSyncWait, Now: time.Now, Triggers: m}
}

// SetVectors switches the vector side atomically (nil: none). Requests in
// flight finish on the vectors they started with.
func (s *Service) SetVectors(v *Vectors) { s.vectors.Store(v) }

// Validate checks a request and fills in its defaults. Errors are EINVALID
// (ETOOLARGE for an overlong query) and name the field.
func Validate(req engram.RecallRequest) (engram.RecallRequest, error) {
	if req.Namespace == "" {
		req.Namespace = engram.DefaultNamespace
	}
	if err := engram.CheckReadNamespace("namespace", req.Namespace); err != nil {
		return req, err
	}
	if !utf8.ValidString(req.Query) {
		return req, engram.FieldError("query", "query is not valid UTF-8")
	}
	if strings.TrimSpace(req.Query) == "" {
		return req, engram.FieldError("query", "query is required and must not be blank")
	}
	if err := engram.CheckQueryText("query", req.Query); err != nil {
		return req, err
	}
	switch {
	case req.K == 0:
		req.K = engram.DefaultK
	case req.K < 0 || req.K > engram.MaxK:
		return req, engram.FieldError("k", "k must be between 1 and %d, got %d", engram.MaxK, req.K)
	}
	switch req.Mode {
	case "":
		req.Mode = engram.ModeAuto
	case engram.ModeAuto, engram.ModeHybrid, engram.ModeShallow, engram.ModeDeep, engram.ModeKeyword:
	default:
		return req, engram.FieldError("mode", "unknown mode %q (available: %s, %s, %s, %s, %s)", req.Mode,
			engram.ModeAuto, engram.ModeHybrid, engram.ModeShallow, engram.ModeDeep, engram.ModeKeyword)
	}
	if !req.AsOf.IsZero() && !engram.InTimeRange(req.AsOf) {
		return req, engram.OutOfRange("as_of", "as_of")
	}
	seen := map[string]bool{}
	for i, k := range req.Kinds {
		switch k {
		case engram.KindTurn, engram.KindDoc, engram.KindMemory, engram.KindScene, engram.KindFact, engram.KindPersona:
		default:
			return req, engram.FieldError(fmt.Sprintf("kinds[%d]", i), "unknown kind %q (available: %s, %s, %s, %s, %s, %s)", k,
				engram.KindTurn, engram.KindDoc, engram.KindMemory, engram.KindScene, engram.KindFact, engram.KindPersona)
		}
		if seen[k] {
			return req, engram.FieldError(fmt.Sprintf("kinds[%d]", i), "kind %q is listed twice", k)
		}
		seen[k] = true
	}
	if req.BudgetTokens < 0 || req.BudgetTokens > MaxBudgetTokens {
		return req, engram.FieldError("budget_tokens", "budget_tokens must be between 0 and %d, got %d", MaxBudgetTokens, req.BudgetTokens)
	}
	return req, nil
}

// Recall validates req and answers it. In auto mode a trigger phrase runs
// the deep path (the phrase is removed from the search text); otherwise
// shallow. A failing vector side (embedder or vector index down) degrades
// shallow recall to keyword recall, and deep recall to its keyword
// evidence, with a warning; it is never an error.
func (s *Service) Recall(ctx context.Context, req engram.RecallRequest) (engram.RecallResponse, error) {
	start := s.Now()
	req, err := Validate(req)
	if err != nil {
		return engram.RecallResponse{}, err
	}
	var resp engram.RecallResponse
	warn := func(w string) { resp.Warnings = append(resp.Warnings, w) }
	ns := req.Namespace
	if ns == AllNamespaces {
		ns = ""
	}
	asOf := req.AsOf
	if asOf.IsZero() {
		asOf = s.Now()
	}
	text := req.Query
	v := s.vectors.Load()
	// Layer results are placed among the turn results they stem from: look
	// at more turns than asked for, then cut.
	turnK := req.K
	if layersWanted(req) {
		turnK = max(req.K, layerAnchorPool)
	}
	if !req.Wants(engram.KindTurn) && !layersWanted(req) {
		turnK = 1 // documents only: the turns are not shown
	}
	mode := req.Mode
	if mode == engram.ModeAuto {
		mode = engram.ModeHybrid
		if phrase, rest, ok := s.Triggers.Match(text); ok {
			mode, resp.Trigger = engram.ModeDeep, phrase
			if strings.TrimSpace(rest) != "" {
				text = rest
			}
		} else if v == nil {
			mode = engram.ModeKeyword
		}
	}
	// as_of bounds shallow and keyword recall too: nothing dated after it.
	var before time.Time
	if !req.AsOf.IsZero() {
		before = req.AsOf.Add(time.Nanosecond)
	}
	mode, err = s.turnResults(ctx, turnQuery{req: req, mode: mode, v: v, ns: ns, text: text, turnK: turnK, asOf: asOf, before: before}, &resp, warn)
	if err != nil {
		return engram.RecallResponse{}, err
	}
	if layersWanted(req) {
		from := time.Time{}
		to := before
		if mode == engram.ModeDeep {
			to = asOf.Add(time.Nanosecond)
			if r := resp.TimeRange; r != nil {
				from = r.From
				if r.To.Before(to) {
					to = r.To
				}
			}
		}
		results, err := s.withLayers(ctx, v, req, ns, text, from, to, resp.Results, warn)
		if err != nil {
			return engram.RecallResponse{}, err
		}
		resp.Results = results
	}
	if req.Wants(engram.KindDoc) && s.Docs != nil {
		others := req.Wants(engram.KindTurn) || layersWanted(req)
		if !req.Wants(engram.KindTurn) && !layersWanted(req) {
			resp.Results = nil
		}
		results, err := s.withDocs(ctx, v, ns, text, resp.Results, others, warn)
		if err != nil {
			return engram.RecallResponse{}, err
		}
		resp.Results = results
	}
	if len(resp.Results) > req.K {
		resp.Results = resp.Results[:req.K]
	}
	s.annotateTimes(ctx, resp.Results, warn)
	if req.BudgetTokens > 0 {
		resp.Context, resp.ContextTokens, _ = Pack(resp.Results, req.BudgetTokens)
	}
	resp.Mode = mode
	resp.TookMS = float64(s.Now().Sub(start).Microseconds()) / 1000
	return resp, nil
}

// turnQuery is a recall request as the turn paths read it: the mode asked
// for (auto resolved), the vector side, the search text, the turns wanted
// and the times that bound them.
type turnQuery struct {
	req          engram.RecallRequest
	mode         string
	v            *Vectors
	ns, text     string
	turnK        int
	asOf, before time.Time
}

// turnResults answers q with turns on the path of its mode, falling back
// to keyword search where the vector side fails, and returns the mode that
// answered; the layers' lag is warned of on the way.
func (s *Service) turnResults(ctx context.Context, q turnQuery, resp *engram.RecallResponse, warn func(string)) (string, error) {
	mode, req, v, ns, text, turnK, asOf, before := q.mode, q.req, q.v, q.ns, q.text, q.turnK, q.asOf, q.before
	if mode == engram.ModeDeep {
		// The time words stay in the query: the period is evidence (see
		// deep), and the turn that tells of the event often names the date
		// itself ("a vacation to Athens on the 10th of February").
		if r, _, ok := ParseTimeExpr(text, asOf); ok {
			resp.TimeRange = &engram.TimeRange{From: r.From, To: r.To, Expr: r.Expr}
		}
		s.sync(ctx, s.Sync, "index", resp)
		if v != nil && v.Unavailable == "" {
			s.sync(ctx, v.Sync, "vector index", resp)
		} else if v != nil {
			warn(v.Unavailable + ": deep recall ran on keyword evidence only")
		}
		results, err := s.deep(ctx, v, ns, text, turnK, asOf, resp.TimeRange, warn)
		if err != nil {
			return mode, err
		}
		resp.Results = results
	}
	if s.LayerLag != nil && s.Layers != nil && (mode == engram.ModeDeep || layersWanted(req)) {
		if lag := s.LayerLag(ctx); lag != "" {
			warn("the derived layers are behind the archive (" + lag + "): results may rank otherwise once they catch up")
		}
	}
	if mode == engram.ModeHybrid && noVectors(v, req.Mode == engram.ModeAuto, warn) {
		mode = engram.ModeKeyword
	}
	if mode == engram.ModeHybrid {
		s.sync(ctx, s.Sync, "index", resp)
		s.sync(ctx, v.Sync, "vector index", resp)
		results, err := s.hybrid(ctx, v, ns, text, turnK, before, warn)
		var ve *vectorError
		switch {
		case err == nil:
			resp.Results = results
		case errors.As(err, &ve):
			warn(fmt.Sprintf("vector search failed (%s): answered with keyword search", engram.ErrorMessage(ve.err)))
			mode = engram.ModeKeyword
		default:
			return mode, err
		}
	}
	if mode == engram.ModeShallow && noVectors(v, false, warn) {
		mode = engram.ModeKeyword
	}
	if mode == engram.ModeShallow {
		s.sync(ctx, v.Sync, "vector index", resp)
		sreq := req
		sreq.K = turnK
		results, err := s.shallow(ctx, v, ns, sreq, before)
		switch {
		case err == nil:
			resp.Results = results
		case ctx.Err() != nil:
			return mode, ctx.Err()
		default:
			warn(fmt.Sprintf("vector search failed (%s): answered with keyword search", engram.ErrorMessage(err)))
			mode = engram.ModeKeyword
		}
	}
	if mode == engram.ModeKeyword {
		s.sync(ctx, s.Sync, "index", resp)
		hits, err := s.index.SearchTurns(ctx, engram.TextQuery{Namespace: ns, Text: text, Limit: turnK, To: before})
		if err != nil {
			return mode, fmt.Errorf("keyword search: %w", err)
		}
		resp.Results = make([]engram.Result, 0, len(hits))
		for _, h := range hits {
			resp.Results = append(resp.Results, engram.TurnResult(h.Turn, h.Score))
		}
	}
	return mode, nil
}

// sync waits, bounded, for an index to catch up, and warns when it did not.
func (s *Service) sync(ctx context.Context, fn func(context.Context) error, what string, resp *engram.RecallResponse) {
	if fn == nil {
		return
	}
	sctx, cancel := context.WithTimeout(ctx, s.SyncWait)
	defer cancel()
	if err := fn(sctx); err != nil && ctx.Err() == nil {
		resp.Warnings = append(resp.Warnings, fmt.Sprintf("the %s is behind the archive: the newest turns may be missing from these results", what))
	}
}

// noVectors reports whether v cannot answer a vector search, and warns
// that keyword search answers instead: no index is configured (said unless
// quietNone) or it is unavailable.
func noVectors(v *Vectors, quietNone bool, warn func(string)) bool {
	switch {
	case v == nil:
		if !quietNone {
			warn("no vector index is configured: answered with keyword search")
		}
		return true
	case v.Unavailable != "":
		warn(v.Unavailable + ": answered with keyword search")
		return true
	}
	return false
}

// embedQuery embeds the text of a query: one vector, or an error that says
// it was the query's embedding that failed.
func embedQuery(ctx context.Context, e engram.Embedder, text string) ([]float32, error) {
	vecs, err := e.Embed(ctx, []string{text})
	if err != nil {
		return nil, fmt.Errorf("embed query: %w", err)
	}
	if len(vecs) != 1 {
		return nil, fmt.Errorf("embed query: got %d vectors for 1 text", len(vecs))
	}
	return vecs[0], nil
}

// shallow embeds the query and searches turn vectors.
func (s *Service) shallow(ctx context.Context, v *Vectors, ns string, req engram.RecallRequest, before time.Time) ([]engram.Result, error) {
	qvec, err := embedQuery(ctx, v.Embedder, req.Query)
	if err != nil {
		return nil, err
	}
	hits, err := v.Index.Query(ctx, engram.VectorQuery{Vector: qvec, K: req.K, Namespace: ns, Kinds: []string{engram.KindTurn}, To: before})
	if err != nil {
		return nil, fmt.Errorf("vector query: %w", err)
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	turns, err := s.index.GetTurns(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("load turns: %w", err)
	}
	byID := make(map[string]engram.Turn, len(turns))
	for _, t := range turns {
		byID[t.ID] = t
	}
	results := make([]engram.Result, 0, len(hits))
	for _, h := range hits {
		// A cosine of 0 or less is no similarity at all: such a turn would
		// only pad the list. Above it a cosine means different things for
		// different models (unrelated texts score 0.3 to 0.4 with bge-m3),
		// so no fixed floor cuts more; the rank is the information.
		if h.Score <= 0 {
			continue
		}
		if t, ok := byID[h.ID]; ok { // a vector whose turn is not indexed yet is skipped
			results = append(results, engram.TurnResult(t, h.Score))
		}
	}
	return results, nil
}
