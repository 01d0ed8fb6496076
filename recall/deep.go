package recall

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/engram-dev/engram"
)

// Fusion methods of the deep path.
const (
	FusionProduct = "product" // weighted geometric product of the normalised signals, times decay
	FusionRRF     = "rrf"     // reciprocal rank fusion (k = 60) of the signals' rankings, times decay
	FusionSum     = "sum"     // weighted sum of the normalised signals, times decay
)

// DeepConfig tunes the deep path. Zero values mean the defaults; a weight
// set to a negative number switches its signal off (for ablations).
type DeepConfig struct {
	Fusion string
	// Weights of the signals (exponents in the product, multipliers of the
	// rank terms in RRF).
	VectorWeight, BM25Weight, SessionWeight, NeighbourWeight float64
	// SceneWeight weighs the evidence of the turn's scene as a retrieval
	// unit (its full text by BM25 and vector), as SessionWeight weighs its
	// session's.
	SceneWeight float64
	// UnitTurns, when positive, lets the turns of the best units join the
	// candidates; negative: off.
	UnitTurns int
	// RM3Weight weighs relevance feedback (a second keyword search with
	// the heaviest words of the best candidates) and ExpansionWeight the
	// query's rare words' nearest neighbours by the builtin embedder's word
	// vectors. Both re-rank the candidates and are off unless positive:
	// neither helped on the development set.
	RM3Weight, ExpansionWeight float64
	// LayerWeight weighs the evidence of the derived layers (a memory or a
	// scene citing the turn) and KGWeight that of the knowledge graph (a
	// triple about an entity the query names citing the turn). Both only
	// raise a score: a turn no layer cites is not penalised.
	LayerWeight, KGWeight float64
	// PersonaWeight weighs a turn behind a persona facet of the set a
	// question asks for ("What are Kate's hobbies?": see askedSet), which
	// only raises a score.
	PersonaWeight float64
	// HalfLife of the time decay; negative switches decay off. DecayFloor
	// is the share of the score that never decays (0..1), so age orders
	// otherwise equal candidates without burying old decisions.
	HalfLife   time.Duration
	DecayFloor float64
	// Candidates is how many turns each source (vector, BM25) proposes.
	Candidates int
	// Neighbours is how many turns around each hit are returned as context
	// and scored as its neighbours.
	Neighbours int
	// BurstTurns is how many turns of a hit's burst (its speaker's messages
	// in a row) on each side of it join its result, on the deep and hybrid
	// paths; negative: single turns.
	BurstTurns int
	// SessionSpread (0 to 1) lowers a candidate's score by this share for
	// each better result of its session already taken, on the deep path: a
	// question with answers in several sessions gets more of them. 0: off.
	SessionSpread float64
	// TimeWeight weighs how near a candidate lies to the period a time
	// expression of the query names (1 inside it, 1/(1+days) outside).
	TimeWeight float64
	// PeriodReach widens the period a query names, on both sides, for the
	// search of its own candidates: an event is often told the day after
	// ("yesterday we played"), a plan the day before. Negative: the period
	// alone.
	PeriodReach time.Duration
	// SpeakerWeight weighs a candidate whose speaker the query names (see
	// namedSpeakers).
	SpeakerWeight float64
}

// Deep defaults. The fusion is a plain sum of the evidence of relevance:
// the turn's own words (BM25, at 1.5: the query's names left out, its words
// are more of its content than its vector, which reads the names too) and
// meaning (vector) at weight 1, its session
// part's at 0.5 and its scene's at 1 (each the mean of their BM25 and vector
// evidence), a share of its best neighbour's score, the derived layers',
// the graph's and the persona facets' evidence (which only raise a score),
// and the nearness to a period the query names. The weights that were
// searched (session, neighbour, time, the burst's reach, the keyword
// weight, the period's reach, the layers', the persona's) were each chosen
// by leaving one
// conversation out over both development corpora, from small grids; the
// others are round numbers. docs/benchmarks.md has the grids, the
// cross-validated figures and each signal switched off.
const (
	DefaultFusion          = FusionSum
	DefaultVectorWeight    = 1.0
	DefaultBM25Weight      = 1.5
	DefaultSessionWeight   = 0.5
	DefaultNeighbourWeight = 0.2
	DefaultSceneWeight     = 1.0
	DefaultLayerWeight     = 0.25
	DefaultKGWeight        = 0.5
	DefaultPersonaWeight   = 1.0
	DefaultSessionSpread   = 0.0
	DefaultTimeWeight      = 0.5
	DefaultSpeakerWeight   = 1.2
	DefaultHalfLife        = 180 * 24 * time.Hour
	DefaultPeriodReach     = 2 * 24 * time.Hour
	DefaultDecayFloor      = 0.8
	DefaultCandidates      = 100
	DefaultNeighbours      = 1
	rrfK                   = 60
	epsilon                = 0.05 // keeps a missing signal from zeroing a product
	scoredNeighbours       = 30   // candidates whose real neighbours are looked up
)

// WithDefaults fills zero fields.
func (c DeepConfig) WithDefaults() DeepConfig {
	if c.Fusion == "" {
		c.Fusion = DefaultFusion
	}
	def := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		} else if *v < 0 {
			*v = 0
		}
	}
	def(&c.VectorWeight, DefaultVectorWeight)
	def(&c.BM25Weight, DefaultBM25Weight)
	def(&c.SessionWeight, DefaultSessionWeight)
	def(&c.NeighbourWeight, DefaultNeighbourWeight)
	def(&c.SceneWeight, DefaultSceneWeight)
	if c.UnitTurns == 0 {
		c.UnitTurns = unitTurnsFrom
	} else if c.UnitTurns < 0 {
		c.UnitTurns = 0
	}
	def(&c.LayerWeight, DefaultLayerWeight)
	def(&c.KGWeight, DefaultKGWeight)
	def(&c.PersonaWeight, DefaultPersonaWeight)
	def(&c.SessionSpread, DefaultSessionSpread)
	def(&c.TimeWeight, DefaultTimeWeight)
	def(&c.SpeakerWeight, DefaultSpeakerWeight)
	def(&c.RM3Weight, 0)
	def(&c.ExpansionWeight, 0)
	if c.HalfLife == 0 {
		c.HalfLife = DefaultHalfLife
	}
	if c.PeriodReach == 0 {
		c.PeriodReach = DefaultPeriodReach
	} else if c.PeriodReach < 0 {
		c.PeriodReach = 0
	}
	if c.DecayFloor == 0 {
		c.DecayFloor = DefaultDecayFloor
	}
	if c.Candidates <= 0 {
		c.Candidates = DefaultCandidates
	}
	if c.Neighbours == 0 {
		c.Neighbours = DefaultNeighbours
	}
	if c.BurstTurns == 0 {
		c.BurstTurns = DefaultBurstTurns
	} else if c.BurstTurns < 0 {
		c.BurstTurns = 0
	}
	return c
}

// Validate reports a bad configuration.
func (c DeepConfig) Validate() error {
	switch c.Fusion {
	case "", FusionProduct, FusionRRF, FusionSum:
	default:
		return fmt.Errorf("deep fusion %q: want %s, %s or %s", c.Fusion, FusionProduct, FusionRRF, FusionSum)
	}
	if c.DecayFloor < 0 || c.DecayFloor > 1 {
		return fmt.Errorf("deep decay floor %v: want 0 to 1", c.DecayFloor)
	}
	if c.SessionSpread >= 1 {
		return fmt.Errorf("deep session spread %v: want below 1 (negative: off)", c.SessionSpread)
	}
	return nil
}

// candidate is a turn proposed by any source, with its raw signals.
type candidate struct {
	turn             engram.Turn
	cos              float64
	hasCos           bool
	bm25             float64
	vecN, bm25N      float64
	sessN, neighN    float64
	sceneN           float64
	rm3N, expN       float64 // relevance feedback, query expansion
	neighBase        float64 // the best adjacent turn's base score
	layerN, kgN      float64
	personaN         float64 // 1 behind a facet of the set the question asks for
	decay            float64
	base, final      float64
	inRange          bool
	timeN            float64 // how near the turn lies to the query's period
	speakerN         float64 // 1 when the query names the turn's speaker
	before, after    []engram.Turn
	aroundN          int // how many turns before and after were read (readAround)
	vecRank, bm25Rnk int
	// cited: the turn joined only because a derived layer cites it; no
	// search of the turns found it (see normalise).
	cited bool
}

// deep runs the fusion path for the search text (trigger and time
// expression already removed).
func (s *Service) deep(ctx context.Context, v *Vectors, ns, text string, k int, asOf time.Time, rng *engram.TimeRange, warn func(string)) ([]engram.Result, error) {
	cfg := s.Deep.WithDefaults()
	from, to := time.Time{}, asOf.Add(time.Nanosecond) // as_of: nothing dated after it
	if rng != nil {
		from = rng.From.Add(-cfg.PeriodReach)
		if end := rng.To.Add(cfg.PeriodReach); end.Before(to) {
			to = end
		}
	}
	cands, us, aliases, aliasNames, err := s.candidates(ctx, v, ns, text, cfg, from, to, warn)
	if err != nil {
		return nil, err
	}
	if rng != nil {
		// The named period is evidence, not a filter: "what did Kate cook on
		// 29 Dec" is often told the day after ("yesterday I made pasta").
		// The candidates of the period and the days around it
		// (PeriodReach) join everything before as_of, and each candidate
		// gains by how near its time lies to the period itself.
		more, mus, moreAliases, moreNames, err := s.candidates(ctx, v, ns, text, cfg, time.Time{}, asOf.Add(time.Nanosecond), warn)
		if err != nil {
			return nil, err
		}
		us, aliases, aliasNames = us.merge(mus), append(aliases, moreAliases...), append(aliasNames, moreNames...)
		have := make(map[string]*candidate, len(cands))
		for _, c := range cands {
			have[c.turn.ID] = c
		}
		for _, c := range more {
			if h, ok := have[c.turn.ID]; !ok {
				cands = append(cands, c)
			} else if !c.cited {
				h.cited = false // the wider search found it
			}
		}
		for _, c := range cands {
			c.timeN = nearness(c.turn.TS, rng.From, rng.To)
			c.inRange = c.timeN == 1
		}
	}
	if len(cands) == 0 {
		return []engram.Result{}, nil
	}
	if err := s.namelessKeywords(ctx, ns, text, cands, aliasNames, cfg.Candidates, asOf.Add(time.Nanosecond)); err != nil {
		return nil, err
	}
	normalise(cands)
	if cfg.SpeakerWeight > 0 {
		named := namedSpeakers(text, cands, aliases...)
		for _, c := range cands {
			c.speakerN = btoi(named[speakerOf(c.turn)])
		}
	}
	if s.Units != nil {
		if err := s.unitSignals(ctx, cands, us, v != nil && v.Unavailable == ""); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			warn(fmt.Sprintf("the sessions and scenes could not be read (%s): deep recall ran on single turns", engram.ErrorMessage(err)))
		}
	} else {
		sessionSignal(cands)
	}
	for _, c := range cands {
		c.decay = decay(asOf.Sub(c.turn.TS), cfg)
	}
	if cfg.ExpansionWeight > 0 {
		sig, err := s.keywordSignal(ctx, ns, expansionQuery(s.Words, text), cands, cfg.Candidates, from, to)
		if err != nil {
			return nil, fmt.Errorf("expanded keyword search: %w", err)
		}
		for c, v := range sig {
			c.expN = v
		}
	}
	fuse(cands, cfg, false)
	if cfg.RM3Weight > 0 {
		sig, err := s.keywordSignal(ctx, ns, rm3Query(cands, text), cands, cfg.Candidates, from, to)
		if err != nil {
			return nil, fmt.Errorf("feedback keyword search: %w", err)
		}
		for c, v := range sig {
			c.rm3N = v
		}
		fuse(cands, cfg, false)
	}
	if err := s.neighbours(ctx, cands, cfg); err != nil {
		return nil, err
	}
	fuse(cands, cfg, true)
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].final != cands[j].final {
			return cands[i].final > cands[j].final
		}
		return cands[i].turn.Seq > cands[j].turn.Seq
	})
	hits, err := s.bursts(ctx, cands, k, cfg.BurstTurns, cfg.SessionSpread)
	if err != nil {
		return nil, err
	}
	if err := s.attachContext(ctx, hits, cfg.Neighbours); err != nil {
		return nil, err
	}
	results := make([]engram.Result, len(hits))
	for i, h := range hits {
		c := h.c
		r := h.result(c.final)
		r.Signals = &engram.Signals{Vector: c.vecN, BM25: c.bm25N, Session: c.sessN, Scene: c.sceneN, Neighbour: c.neighN,
			Layer: c.layerN, KG: c.kgN, Persona: c.personaN, Speaker: c.speakerN, Decay: c.decay, InRange: c.inRange, Final: c.final}
		for _, t := range append(append([]engram.Turn{}, c.before...), c.after...) {
			r.Context = append(r.Context, engram.ContextTurn{ID: t.ID, Speaker: t.Speaker, Role: t.Role, Text: t.Content, TS: t.TS})
		}
		results[i] = r
	}
	return results, nil
}

// deepSearch is what deep recall's searches found, each a scan of an
// index run beside the others.
type deepSearch struct {
	qvec          []float32
	vhits         []engram.VectorHit // turns
	layerHits     []engram.VectorHit // memories, scenes, facts
	unitVecHits   []engram.VectorHit // sessions and scenes as units
	bhits         []engram.TurnHit
	ev            evidence
	facts         factLookups // the graph's facts the query names or matches
	factsErr      error
	vectorsFailed bool
}

// search runs the vector query, the turns' BM25 and the layers' keyword
// search concurrently. A failing vector side or layer search only warns.
func (s *Service) search(ctx context.Context, v *Vectors, ns, text string, cfg DeepConfig, from, to time.Time, warn func(string)) (deepSearch, error) {
	var (
		r          deepSearch
		wg         sync.WaitGroup
		verr, lerr error
	)
	n := cfg.Candidates
	// With the layers on, one vector query returns turns, memories and
	// scenes (one scan of the index, not two); they are split below.
	kinds, k := []string{engram.KindTurn}, n
	if s.Layers != nil && cfg.LayerWeight > 0 {
		kinds, k = append(kinds, engram.KindMemory, engram.KindScene), k+layerMemoryHits+layerSceneHits
	}
	if s.Layers != nil && cfg.KGWeight > 0 {
		kinds, k = append(kinds, engram.KindFact), k+kgTriples
	}
	if s.Units != nil {
		kinds, k = append(kinds, engram.KindSessionUnit, engram.KindSceneUnit), k+2*unitHits
	}
	if v != nil && v.Unavailable == "" {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r.qvec, verr = embedQuery(ctx, v.Embedder, text); verr != nil {
				return
			}
			r.vhits, verr = v.Index.Query(ctx, engram.VectorQuery{Vector: r.qvec, K: k, Namespace: ns,
				Kinds: kinds, From: from, To: to})
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		r.ev, lerr = s.layerEvidence(ctx, ns, text, from, to, cfg)
		if s.Layers != nil && cfg.KGWeight > 0 {
			r.facts, r.factsErr = s.lookUpFacts(ctx, ns, text, periodEnd(to))
		}
	}()
	bhits, berr := s.index.SearchTurns(ctx, engram.TextQuery{Namespace: ns, Text: text, Limit: n, From: from, To: to})
	wg.Wait()
	r.bhits = bhits
	if lerr != nil {
		if ctx.Err() != nil {
			return r, ctx.Err()
		}
		warn(fmt.Sprintf("the derived layers could not be searched (%s): deep recall ran on turns only", engram.ErrorMessage(lerr)))
	}
	if berr != nil {
		return r, fmt.Errorf("keyword search: %w", berr)
	}
	if verr != nil {
		if ctx.Err() != nil {
			return r, ctx.Err()
		}
		warn(fmt.Sprintf("vector search failed (%s): deep recall ran on keyword evidence only", engram.ErrorMessage(verr)))
		r.vhits, r.vectorsFailed = nil, true
	}
	r.vhits, r.layerHits, r.unitVecHits = splitKinds(r.vhits, n)
	return r, nil
}

// hitEvidence adds to r.ev what the layers' vector hits say (the memories
// and scenes they cite, the facts close in meaning) and the graph's facts
// (as of at), reading the items the hits name. It returns the warnings of
// a layer or graph that could not be read, in order, and an error only
// for ctx's.
func (s *Service) hitEvidence(ctx context.Context, r *deepSearch, text string, at time.Time, cfg DeepConfig) ([]string, error) {
	var warns []string
	if err := s.layerVectorEvidence(ctx, &r.ev, r.layerHits); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		warns = append(warns, fmt.Sprintf("the derived layers could not be read (%s): deep recall ran without their vector matches", engram.ErrorMessage(err)))
	}
	if s.Layers != nil && cfg.KGWeight > 0 {
		err := r.factsErr
		if err == nil {
			err = s.kgEvidence(ctx, &r.ev, text, at, r.facts, r.layerHits)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			warns = append(warns, fmt.Sprintf("the knowledge graph could not be read (%s): deep recall ran without it", engram.ErrorMessage(err)))
		}
	}
	return warns, nil
}

// candidates gathers turns from vector search and BM25 concurrently, and
// the turns the derived layers cite. A failing vector side only warns: BM25
// candidates remain; failing layers warn too.
func (s *Service) candidates(ctx context.Context, v *Vectors, ns, text string, cfg DeepConfig, from, to time.Time, warn func(string)) ([]*candidate, unitScores, []string, []string, error) {
	r, err := s.search(ctx, v, ns, text, cfg, from, to, warn)
	if err != nil {
		return nil, unitScores{}, nil, nil, err
	}
	// The turns of the hits are read while the layers' hits are: the
	// layers' evidence decides which cited turns join the candidates.
	p := newPool(r.bhits, r.vhits)
	var (
		warns       []string
		hitErr      error
		evidenceRan = make(chan struct{})
	)
	go func() {
		defer close(evidenceRan)
		warns, hitErr = s.hitEvidence(ctx, &r, text, periodEnd(to), cfg)
	}()
	loadErr := p.load(ctx, s)
	<-evidenceRan
	for _, w := range warns {
		warn(w)
	}
	if err := cmp.Or(hitErr, loadErr); err != nil {
		return nil, unitScores{}, nil, nil, err
	}
	added := 0
	for _, id := range r.ev.proposals() {
		if added == layerNewTurns {
			break
		}
		if _, ok := p.byID[id]; !ok {
			p.add(id).cited = true
			added++
		}
	}
	for id, c := range p.byID {
		c.layerN, c.kgN, c.personaN = r.ev.layer[id], r.ev.kg[id], r.ev.persona[id]
	}
	if err := p.load(ctx, s); err != nil {
		return nil, unitScores{}, nil, nil, err
	}
	// The units: those of the candidates and those the vector query found,
	// scored by keyword (only these: the cost follows the candidates, not
	// the index); the turns of the best join the candidates.
	us, err := s.candidateUnits(ctx, engram.TextQuery{Namespace: ns, Text: text, From: from, To: to}, p.list, r.unitVecHits, "")
	if err != nil {
		if ctx.Err() != nil {
			return nil, unitScores{}, nil, nil, ctx.Err()
		}
		warn(fmt.Sprintf("the sessions and scenes could not be searched (%s): deep recall ran on single turns", engram.ErrorMessage(err)))
	}
	if cfg.UnitTurns > 0 && len(us.order) > 0 {
		top := us.order[:min(cfg.UnitTurns, len(us.order))]
		ids, err := s.Units.UnitTurnIDs(ctx, top)
		if err != nil {
			return nil, unitScores{}, nil, nil, fmt.Errorf("unit turns: %w", err)
		}
		for _, u := range top {
			for _, id := range ids[u] {
				if _, ok := p.byID[id]; !ok {
					c := p.add(id)
					c.layerN, c.kgN, c.personaN = r.ev.layer[id], r.ev.kg[id], r.ev.persona[id]
				}
			}
		}
		if err := p.load(ctx, s); err != nil {
			return nil, unitScores{}, nil, nil, err
		}
	}
	// A vector whose turn is not indexed yet is skipped, as is a turn a
	// layer cites from outside the searched period.
	kept := p.indexed(func(c *candidate) bool { return inPeriod(c.turn.TS, from, to) })
	if !r.vectorsFailed && r.qvec != nil {
		// A keyword candidate the vector search did not return still has a
		// similarity: embed it, so that a missing signal does not read as
		// zero evidence (which would bury it in a product).
		if err := cosines(ctx, v, r.qvec, kept); err != nil {
			if ctx.Err() != nil {
				return nil, unitScores{}, nil, nil, ctx.Err()
			}
			warn(fmt.Sprintf("embedding keyword candidates failed (%s)", engram.ErrorMessage(err)))
		}
	}
	return kept, us, r.ev.aliases, r.ev.aliasNames, nil
}

// namelessKeywords gives the candidates the keyword evidence of the query
// without its words that name a speaker of the candidates, or a person by
// a name the graph holds for them (names). A name in a question says whose
// turns answer it, which the speaker signal weighs; as a keyword it finds
// the turns that address that person ("Hey Kate!", "Thanks Kate"), which
// BM25 ranks high for being short, and not the person's own turns, since
// people do not write their own name. The search covers everything before
// to, as the candidates do (a period the query names is a signal, not a
// filter). A query of names alone, or of no name, keeps its evidence.
func (s *Service) namelessKeywords(ctx context.Context, ns, text string, cands []*candidate, names []string, limit int, to time.Time) error {
	rest, cut := nonNameWords(text, cands, names...)
	if !cut || len(rest) == 0 {
		return nil
	}
	hits, err := s.index.SearchTurns(ctx, engram.TextQuery{Namespace: ns, Text: strings.Join(rest, " "), Limit: limit, To: to})
	if err != nil {
		return fmt.Errorf("keyword search without names: %w", err)
	}
	score := make(map[string]float64, len(hits))
	for _, h := range hits {
		score[h.Turn.ID] = h.Score
	}
	for _, c := range cands {
		c.bm25 = score[c.turn.ID]
	}
	return nil
}

// pool is a query's candidates by turn id, in the order they were found.
type pool struct {
	byID    map[string]*candidate
	list    []*candidate
	missing []string // added by id: their turns are to be read (load)
}

// newPool starts a pool with the keyword hits, then the vector hits: a turn
// both found is one candidate with both scores.
func newPool(bhits []engram.TurnHit, vhits []engram.VectorHit) *pool {
	p := &pool{byID: make(map[string]*candidate, len(bhits)+len(vhits))}
	for i, h := range bhits {
		c := &candidate{turn: h.Turn, bm25: h.Score, bm25Rnk: i + 1}
		p.byID[h.Turn.ID] = c
		p.list = append(p.list, c)
	}
	for i, h := range vhits {
		c, ok := p.byID[h.ID]
		if !ok {
			c = p.add(h.ID)
		}
		c.cos, c.hasCos, c.vecRank = h.Score, true, i+1
	}
	return p
}

// add makes a candidate of the turn of id, which the pool does not hold,
// known by its id until load reads it.
func (p *pool) add(id string) *candidate {
	c := &candidate{}
	c.turn.ID = id
	p.byID[id] = c
	p.list = append(p.list, c)
	p.missing = append(p.missing, id)
	return c
}

// load reads the turns of the candidates added since the last load.
func (p *pool) load(ctx context.Context, s *Service) error {
	err := s.loadTurns(ctx, p.byID, p.missing)
	p.missing = p.missing[:0]
	return err
}

// indexed returns the candidates whose turn is indexed (a vector's turn may
// not be yet: no seq) and that keep accepts (nil: all).
func (p *pool) indexed(keep func(*candidate) bool) []*candidate {
	kept := p.list[:0]
	for _, c := range p.list {
		if c.turn.Seq != 0 && (keep == nil || keep(c)) {
			kept = append(kept, c)
		}
	}
	return kept
}

// loadTurns reads the turns of the candidates of ids (which hold only an
// id so far).
func (s *Service) loadTurns(ctx context.Context, byID map[string]*candidate, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	turns, err := s.index.GetTurns(ctx, ids)
	if err != nil {
		return fmt.Errorf("load turns: %w", err)
	}
	for _, t := range turns {
		byID[t.ID].turn = t
	}
	return nil
}

// cosines fills the cosine similarity of the candidates that lack one: from
// their stored vectors (a lookup by id in the vector index), and for turns
// not embedded yet by embedding them.
func cosines(ctx context.Context, v *Vectors, q []float32, cands []*candidate) error {
	var todo []*candidate
	for _, c := range cands {
		if !c.hasCos {
			todo = append(todo, c)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	ids := make([]string, len(todo))
	for i, c := range todo {
		ids[i] = c.turn.ID
	}
	hits, err := v.Index.Query(ctx, engram.VectorQuery{Vector: q, K: len(ids), Kinds: []string{engram.KindTurn}, IDs: ids})
	if err != nil {
		return err
	}
	score := make(map[string]float64, len(hits))
	for _, h := range hits {
		score[h.ID] = h.Score
	}
	var texts []string
	rest := todo[:0]
	for _, c := range todo {
		if sc, ok := score[c.turn.ID]; ok {
			c.cos, c.hasCos = sc, true
			continue
		}
		rest = append(rest, c)
		texts = append(texts, c.turn.EmbedText())
	}
	if len(rest) == 0 {
		return nil
	}
	vecs, err := v.Embedder.Embed(ctx, texts)
	if err != nil {
		return err
	}
	if len(vecs) != len(rest) {
		return fmt.Errorf("embedder returned %d vectors for %d texts", len(vecs), len(rest))
	}
	for i, c := range rest {
		c.cos, c.hasCos = engram.Cosine(q, vecs[i]), true
	}
	return nil
}

// normalise scales cosine min-max and BM25 by the best over the candidates
// the searches found. A turn only a layer cites is scored on their scale
// (clipped to 0..1) and does not set it: the searches passed it over, so
// its cosine lies below theirs, and as the minimum it would squeeze every
// other turn's vector evidence towards 1; its keyword score (from the
// search without names) could likewise become the best and shrink the
// others'. Either way a layer would reorder the turns it does not cite.
func normalise(cands []*candidate) {
	searched := slices.ContainsFunc(cands, func(c *candidate) bool { return !c.cited })
	cmin, cmax, bmax := math.Inf(1), math.Inf(-1), 0.0
	for _, c := range cands {
		if c.cited && searched {
			continue
		}
		if c.hasCos {
			cmin, cmax = math.Min(cmin, c.cos), math.Max(cmax, c.cos)
		}
		bmax = math.Max(bmax, c.bm25)
	}
	for _, c := range cands {
		if c.hasCos && cmax > cmin {
			c.vecN = min(max((c.cos-cmin)/(cmax-cmin), 0), 1)
		} else if c.hasCos {
			c.vecN = 1
		}
		if bmax > 0 {
			c.bm25N = min(c.bm25/bmax, 1)
		}
	}
}

// sessionSignal gives each candidate the keyword evidence of its whole
// session: the sum of its session's candidates' BM25, scaled by the best
// session's. An answer often sits in a turn whose own words miss the
// question while its session's words match it.
func sessionSignal(cands []*candidate) {
	sum := map[string]float64{}
	best := 0.0
	for _, c := range cands {
		key := c.turn.Namespace + "\x00" + c.turn.Session
		sum[key] += c.bm25N
		best = math.Max(best, sum[key])
	}
	if best == 0 {
		return
	}
	for _, c := range cands {
		c.sessN = sum[c.turn.Namespace+"\x00"+c.turn.Session] / best
	}
}

func decay(age time.Duration, cfg DeepConfig) float64 {
	if cfg.HalfLife < 0 {
		return 1
	}
	if age < 0 {
		age = 0
	}
	return cfg.DecayFloor + (1-cfg.DecayFloor)*math.Exp2(-age.Hours()/cfg.HalfLife.Hours())
}

// fuse combines the signals into base (without the neighbour signal) or,
// with neighbours set, final.
func fuse(cands []*candidate, cfg DeepConfig, withNeighbours bool) {
	switch cfg.Fusion {
	case FusionRRF:
		rank := func(get func(*candidate) float64) map[*candidate]int {
			sorted := append([]*candidate(nil), cands...)
			sort.SliceStable(sorted, func(i, j int) bool { return get(sorted[i]) > get(sorted[j]) })
			r := make(map[*candidate]int, len(sorted))
			for i, c := range sorted {
				if get(c) <= 0 {
					continue
				}
				// Ties share a rank: 1 + how many are strictly better.
				if i > 0 && get(sorted[i-1]) == get(c) {
					r[c] = r[sorted[i-1]]
				} else {
					r[c] = i + 1
				}
			}
			return r
		}
		rv, rb, rs := rank(func(c *candidate) float64 { return c.vecN + btoi(c.hasCos)*1e-9 }),
			rank(func(c *candidate) float64 { return c.bm25N }), rank(func(c *candidate) float64 { return c.sessN })
		rl, rk := rank(func(c *candidate) float64 { return c.layerN }), rank(func(c *candidate) float64 { return c.kgN })
		rp := rank(func(c *candidate) float64 { return c.personaN })
		var rn map[*candidate]int
		if withNeighbours {
			rn = rank(func(c *candidate) float64 { return c.neighN })
		}
		term := func(w float64, r int) float64 {
			if r == 0 {
				return 0
			}
			return w / float64(rrfK+r)
		}
		for _, c := range cands {
			score := term(cfg.VectorWeight, rv[c]) + term(cfg.BM25Weight, rb[c]) + term(cfg.SessionWeight, rs[c]) +
				term(cfg.LayerWeight, rl[c]) + term(cfg.KGWeight, rk[c]) + term(cfg.PersonaWeight, rp[c]) +
				cfg.SpeakerWeight*c.speakerN/float64(rrfK+1)
			if withNeighbours {
				score += term(cfg.NeighbourWeight, rn[c]) + cfg.TimeWeight*c.timeN/float64(rrfK+1)
				c.final = score * c.decay
			} else {
				c.base = score
			}
		}
	case FusionSum:
		for _, c := range cands {
			score := cfg.VectorWeight*c.vecN + cfg.BM25Weight*c.bm25N + cfg.SessionWeight*c.sessN + cfg.SceneWeight*c.sceneN +
				cfg.LayerWeight*c.layerN + cfg.KGWeight*c.kgN + cfg.PersonaWeight*c.personaN + cfg.RM3Weight*c.rm3N +
				cfg.ExpansionWeight*c.expN + cfg.SpeakerWeight*c.speakerN
			if withNeighbours {
				// A share of the best adjacent turn's relevance.
				score += cfg.NeighbourWeight*c.neighBase + cfg.TimeWeight*c.timeN
				c.final = score * c.decay
			} else {
				c.base = score
			}
		}
	default:
		for _, c := range cands {
			score := math.Pow(epsilon+c.vecN, cfg.VectorWeight) * math.Pow(epsilon+c.bm25N, cfg.BM25Weight) *
				math.Pow(epsilon+c.sessN, cfg.SessionWeight) * math.Pow(epsilon+c.sceneN, cfg.SceneWeight) *
				math.Pow(1+c.layerN, cfg.LayerWeight) * math.Pow(1+c.kgN, cfg.KGWeight) * math.Pow(1+c.personaN, cfg.PersonaWeight) *
				math.Pow(1+c.rm3N, cfg.RM3Weight) * math.Pow(1+c.expN, cfg.ExpansionWeight) *
				math.Pow(1+c.speakerN, cfg.SpeakerWeight)
			if withNeighbours {
				score *= math.Pow(1+c.neighN, cfg.NeighbourWeight) * math.Pow(1+c.timeN, cfg.TimeWeight)
				c.final = score * c.decay
			} else {
				c.base = score
			}
		}
	}
}

func btoi(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// neighbours looks up the turns around the best candidates and gives each
// the best base score of its adjacent turns (normalised): a question's
// answer often follows the turn that matches it. The lookup reads as far as
// a burst's first look (burstLook), so that the bursts of these candidates
// need no lookup of their own.
func (s *Service) neighbours(ctx context.Context, cands []*candidate, cfg DeepConfig) error {
	if cfg.NeighbourWeight == 0 && cfg.Neighbours <= 0 {
		return nil
	}
	sorted := append([]*candidate(nil), cands...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].base > sorted[j].base })
	byID := make(map[string]*candidate, len(cands))
	maxBase := 0.0
	for _, c := range cands {
		byID[c.turn.ID] = c
		maxBase = math.Max(maxBase, c.base)
	}
	if maxBase == 0 {
		return nil
	}
	top := sorted[:min(scoredNeighbours, len(sorted))]
	if err := s.readAround(ctx, top, max(cfg.Neighbours, 1, burstLook)); err != nil {
		return err
	}
	for _, c := range top {
		adj := make([]engram.Turn, 0, 2)
		if len(c.before) > 0 {
			adj = append(adj, c.before[len(c.before)-1])
		}
		if len(c.after) > 0 {
			adj = append(adj, c.after[0])
		}
		for _, t := range adj {
			if n, ok := byID[t.ID]; ok {
				c.neighN, c.neighBase = math.Max(c.neighN, n.base/maxBase), math.Max(c.neighBase, n.base)
				n.neighN, n.neighBase = math.Max(n.neighN, c.base/maxBase), math.Max(n.neighBase, c.base)
			}
		}
	}
	return nil
}

// readAround reads, in one lookup, n turns on each side of every candidate
// of cs that has fewer read.
func (s *Service) readAround(ctx context.Context, cs []*candidate, n int) error {
	var need []*candidate
	var turns []engram.Turn
	for _, c := range cs {
		if c.aroundN < n {
			need = append(need, c)
			turns = append(turns, c.turn)
		}
	}
	if len(need) == 0 {
		return nil
	}
	around, err := s.index.TurnsAround(ctx, turns, n)
	if err != nil {
		return fmt.Errorf("turns around %d candidates: %w", len(turns), err)
	}
	for i, c := range need {
		c.before, c.after, c.aroundN = around[i].Before, around[i].After, n
	}
	return nil
}

// attachContext gives every hit the n turns before its burst and the n
// after it (the burst's own turns are in the result): from the turns read
// around its burst, else those read around a single turn (readAround),
// else from one lookup that serves every hit still without them.
func (s *Service) attachContext(ctx context.Context, hits []burstHit, n int) error {
	// The lookups still needed, made in one: before the burst's first turn
	// and after its last.
	var turns []engram.Turn
	var set []func(engram.Around)
	for _, h := range hits {
		c := h.c
		if n <= 0 {
			c.before, c.after = nil, nil
			continue
		}
		if before, after, ok := h.context(n); ok {
			c.before, c.after = before, after
			continue
		}
		first, last := h.turns[0], h.turns[len(h.turns)-1]
		read := c.aroundN >= n
		if first.ID != c.turn.ID || !read {
			turns = append(turns, first)
			set = append(set, func(a engram.Around) { c.before = a.Before })
		}
		if last.ID != c.turn.ID || !read {
			turns = append(turns, last)
			set = append(set, func(a engram.Around) { c.after = a.After })
		}
	}
	if len(turns) > 0 {
		around, err := s.index.TurnsAround(ctx, turns, n)
		if err != nil {
			return fmt.Errorf("turns around %d results: %w", len(hits), err)
		}
		for i, a := range around {
			set[i](a)
		}
	}
	for _, h := range hits {
		c := h.c
		if len(c.before) > n {
			c.before = c.before[len(c.before)-n:]
		}
		if len(c.after) > n {
			c.after = c.after[:n]
		}
	}
	return nil
}

// nearness is 1 for a time in [from, to), and falls with the days between
// it and the period: 1/(1 + days).
func nearness(ts, from, to time.Time) float64 {
	var gap time.Duration
	switch {
	case ts.Before(from):
		gap = from.Sub(ts)
	case !ts.Before(to):
		gap = ts.Sub(to) + time.Nanosecond
	default:
		return 1
	}
	return 1 / (1 + gap.Hours()/24)
}

// inPeriod reports whether ts lies in [from, to), zero bounds open.
func inPeriod(ts, from, to time.Time) bool {
	return (from.IsZero() || !ts.Before(from)) && (to.IsZero() || ts.Before(to))
}
