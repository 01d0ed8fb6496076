package recall_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/embedder"
	"github.com/engram-dev/engram/palace"
	"github.com/engram-dev/engram/recall"
	"github.com/engram-dev/engram/vecindex"
)

// fixture is a real palace holding turns and their builtin vectors.
type fixture struct {
	db    *palace.DB
	vecs  *palace.VectorStore
	index *vecindex.Index // over vecs
	emb   *embedder.Builtin
	turns []engram.Turn
}

func mustOpenFixture(tb testing.TB, contents []string) *fixture {
	tb.Helper()
	return mustOpenFixtureBy(tb, contents, func(i int) string { return []string{"Ana", "Bo", "Cy"}[i%3] })
}

// mustOpenFixtureBy is mustOpenFixture with the speaker of each turn.
func mustOpenFixtureBy(tb testing.TB, contents []string, speaker func(i int) string) *fixture {
	tb.Helper()
	db, err := palace.Open(filepath.Join(tb.TempDir(), "palace.db"), palace.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	base := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	var turns []engram.Turn
	for i, c := range contents {
		turns = append(turns, engram.Turn{ID: fmt.Sprintf("t%06d", i+1), Seq: int64(i + 1), Namespace: "default",
			Session: fmt.Sprintf("s%d", i/20), Role: engram.RoleUser, Speaker: speaker(i),
			Content: c, TS: base.Add(time.Duration(i) * time.Minute), ReceivedAt: base})
	}
	return mustOpenTurns(tb, db, turns)
}

// mustOpenTurns stores turns (ids, seqs and times set) and their builtin
// vectors in db.
func mustOpenTurns(tb testing.TB, db *palace.DB, turns []engram.Turn) *fixture {
	tb.Helper()
	ctx := context.Background()
	f := &fixture{db: db, emb: embedder.New(), turns: turns}
	var err error
	f.vecs, err = db.Vectors(ctx, f.emb.Model(), f.emb.Dim())
	if err != nil {
		tb.Fatal(err)
	}
	f.index = vecindex.New(f.vecs)
	for start := 0; start < len(f.turns); start += 2000 {
		batch := f.turns[start:min(start+2000, len(f.turns))]
		if err := db.PutTurns(ctx, batch); err != nil {
			tb.Fatal(err)
		}
		texts := make([]string, len(batch))
		for i, t := range batch {
			texts[i] = t.EmbedText()
		}
		vs, err := f.emb.Embed(ctx, texts)
		if err != nil {
			tb.Fatal(err)
		}
		items := make([]engram.VectorItem, len(batch))
		for i, t := range batch {
			items[i] = engram.VectorItem{ID: t.ID, Kind: engram.KindTurn, Namespace: t.Namespace, TS: t.TS, Vector: vs[i]}
		}
		if err := f.vecs.PutTurnVectors(ctx, items, batch[len(batch)-1].Seq); err != nil {
			tb.Fatal(err)
		}
	}
	return f
}

func (f *fixture) service() *recall.Service {
	s := recall.NewService(f.db)
	s.SetVectors(&recall.Vectors{Embedder: f.emb, Index: f.index})
	return s
}

var small = []string{
	"We decided to keep the API on port 30001",
	"The cat sat on the mat all afternoon",
	"Our database will be PostgreSQL because of its JSONB support",
	"Lunch with the design team moved to Thursday",
}

func TestShallowAndKeyword(t *testing.T) {
	f := mustOpenFixture(t, small)
	s := f.service()
	ctx := context.Background()
	for _, tc := range []struct{ ask, ran string }{
		{engram.ModeShallow, engram.ModeShallow},
		{engram.ModeHybrid, engram.ModeHybrid},
		{"", engram.ModeHybrid}, // auto without a trigger phrase
	} {
		resp, err := s.Recall(ctx, engram.RecallRequest{Query: "which database did we pick?", Mode: tc.ask})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Mode != tc.ran || len(resp.Results) == 0 || !strings.Contains(resp.Results[0].Text, "PostgreSQL") {
			t.Fatalf("mode %q runs %s and finds the database turn first: %+v", tc.ask, tc.ran, resp)
		}
		for i, r := range resp.Results {
			if len(r.Sources) != 1 || r.Sources[0].ID != r.ID || r.Kind != engram.KindTurn {
				t.Errorf("result %d does not list itself as its source: %+v", i, r)
			}
			if i > 0 && r.Score > resp.Results[i-1].Score {
				t.Errorf("results not in score order: %v > %v", r.Score, resp.Results[i-1].Score)
			}
		}
	}
	resp, err := s.Recall(ctx, engram.RecallRequest{Query: "PostgreSQL", Mode: engram.ModeKeyword, K: 5})
	if err != nil || resp.Mode != engram.ModeKeyword || len(resp.Results) != 1 {
		t.Fatalf("keyword: %+v %v", resp, err)
	}
	resp, err = s.Recall(ctx, engram.RecallRequest{Query: "database", Namespace: "other"})
	if err != nil || len(resp.Results) != 0 {
		t.Fatalf("another namespace must find nothing: %+v %v", resp, err)
	}
	resp, err = s.Recall(ctx, engram.RecallRequest{Query: "database", Namespace: recall.AllNamespaces})
	if err != nil || len(resp.Results) == 0 {
		t.Fatalf("all namespaces: %+v %v", resp, err)
	}
}

// brokenEmbedder stands for an embedding server that fails (a process edge
// misbehaving).
type brokenEmbedder struct{}

var _ engram.Embedder = brokenEmbedder{}

func (brokenEmbedder) Embed(context.Context, []string) ([][]float32, error) {
	return nil, engram.Errorf(engram.EUNAVAILABLE, "ollama server at http://127.0.0.1:1 not reachable")
}
func (brokenEmbedder) Model() string { return "broken" }
func (brokenEmbedder) Dim() int      { return 512 }

func TestShallowDegradesToKeyword(t *testing.T) {
	f := mustOpenFixture(t, small)
	s := recall.NewService(f.db)
	ctx := context.Background()

	// No vector side at all: auto is keyword without a warning; an explicit
	// shallow request says why it ran keyword.
	resp, err := s.Recall(ctx, engram.RecallRequest{Query: "PostgreSQL"})
	if err != nil || resp.Mode != engram.ModeKeyword || len(resp.Warnings) != 0 || len(resp.Results) != 1 {
		t.Fatalf("no vectors, auto: %+v %v", resp, err)
	}
	resp, err = s.Recall(ctx, engram.RecallRequest{Query: "PostgreSQL", Mode: engram.ModeShallow})
	if err != nil || resp.Mode != engram.ModeKeyword || len(resp.Warnings) != 1 {
		t.Fatalf("no vectors, shallow: %+v %v", resp, err)
	}

	// A failing embedder: keyword results and a warning naming the cause,
	// for the hybrid path (auto) and the vector path alike.
	s.SetVectors(&recall.Vectors{Embedder: brokenEmbedder{}, Index: f.index})
	for _, mode := range []string{engram.ModeAuto, engram.ModeShallow} {
		resp, err = s.Recall(ctx, engram.RecallRequest{Query: "PostgreSQL", Mode: mode})
		if err != nil || resp.Mode != engram.ModeKeyword || len(resp.Results) != 1 ||
			len(resp.Warnings) != 1 || !strings.Contains(resp.Warnings[0], "not reachable") {
			t.Fatalf("failing embedder, %s: %+v %v", mode, resp, err)
		}
	}

	// Vectors switched off with a reason.
	s.SetVectors(&recall.Vectors{Unavailable: "vector recall is off (model missing)"})
	resp, err = s.Recall(ctx, engram.RecallRequest{Query: "PostgreSQL"})
	if err != nil || resp.Mode != engram.ModeKeyword || !strings.Contains(strings.Join(resp.Warnings, ""), "model missing") {
		t.Fatalf("unavailable: %+v %v", resp, err)
	}

	// An index lagging: the sync wait is bounded and warns.
	s.SetVectors(&recall.Vectors{Embedder: f.emb, Index: f.index, Sync: func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	}})
	s.SyncWait = 10 * time.Millisecond
	resp, err = s.Recall(ctx, engram.RecallRequest{Query: "PostgreSQL"})
	if err != nil || resp.Mode != engram.ModeHybrid || !strings.Contains(strings.Join(resp.Warnings, ""), "behind the archive") {
		t.Fatalf("lagging: %+v %v", resp, err)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		req   engram.RecallRequest
		field string
	}{
		{engram.RecallRequest{Query: " "}, "query"},
		{engram.RecallRequest{Query: "\xff"}, "query"},
		{engram.RecallRequest{Query: strings.Repeat("x", engram.MaxQueryBytes+1)}, "query"},
		{engram.RecallRequest{Query: "x", K: -1}, "k"},
		{engram.RecallRequest{Query: "x", K: engram.MaxK + 1}, "k"},
		{engram.RecallRequest{Query: "x", Mode: "deepest"}, "mode"},
	} {
		if _, err := recall.Validate(tc.req); engram.ErrorField(err) != tc.field {
			t.Errorf("%+v: error %v, want one naming %q", tc.req, err, tc.field)
		}
	}
	req, err := recall.Validate(engram.RecallRequest{Query: "x"})
	if err != nil || req.K != engram.DefaultK || req.Mode != engram.ModeAuto || req.Namespace != engram.DefaultNamespace {
		t.Fatalf("defaults: %+v %v", req, err)
	}
	if _, err := recall.Validate(engram.RecallRequest{Query: "x", K: engram.MaxK}); err != nil {
		t.Fatal(err)
	}
	var e *engram.Error
	if _, err := recall.Validate(engram.RecallRequest{Query: "q", Mode: "x"}); !errors.As(err, &e) || e.Code != engram.EINVALID {
		t.Fatalf("bad mode is EINVALID: %v", err)
	}
}

func TestDeepRecall(t *testing.T) {
	contents := []string{
		"Let's talk about the storage layer for the billing service.",
		"We decided to use PostgreSQL because we need JSONB and strong transactions.",
		"Agreed, and Redis only as a cache in front of it.",
		"Unrelated: the cat sat on the mat all afternoon.",
		"Lunch with the design team moved to Thursday.",
		"Remind me to renew the TLS certificates next month.",
	}
	f := mustOpenFixture(t, contents)
	s := f.service()
	ctx := context.Background()
	// The fixture's turns are a minute apart from 2026-05-01 09:00 UTC.
	asOf := time.Date(2026, 5, 8, 12, 0, 0, 0, time.UTC)

	resp, err := s.Recall(ctx, engram.RecallRequest{Query: "Do you remember what database we chose for billing?", AsOf: asOf, BudgetTokens: 200})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Mode != engram.ModeDeep || resp.Trigger == "" {
		t.Fatalf("a trigger phrase runs deep in auto: mode %q trigger %q", resp.Mode, resp.Trigger)
	}
	if len(resp.Results) < 2 || !strings.Contains(resp.Results[0].Text+resp.Results[1].Text, "PostgreSQL") {
		t.Fatalf("deep: the decision must be among the first two results: %+v", resp.Results)
	}
	for i, r := range resp.Results {
		if r.Signals == nil || r.Signals.Final != r.Score || r.Signals.KG != 0 || r.Signals.Layer != 0 || r.Signals.Decay <= 0 {
			t.Errorf("result %d lacks its signals: %+v", i, r.Signals)
		}
		if len(r.Sources) != 1 || r.Sources[0].ID != r.ID {
			t.Errorf("result %d sources: %+v", i, r.Sources)
		}
	}
	if len(resp.Results[0].Context) == 0 {
		t.Errorf("a deep hit brings its neighbouring turns: %+v", resp.Results[0])
	}
	if resp.Context == "" || resp.ContextTokens > 200 || resp.ContextTokens != recall.EstimateTokens(resp.Context) {
		t.Errorf("context block: %d tokens: %q", resp.ContextTokens, resp.Context)
	}

	// Without a trigger, auto is hybrid; an ordinary sentence never triggers.
	resp, err = s.Recall(ctx, engram.RecallRequest{Query: "I remember the storage layer talk", AsOf: asOf})
	if err != nil || resp.Mode != engram.ModeHybrid || resp.Trigger != "" {
		t.Fatalf("no trigger: %q %q %v", resp.Mode, resp.Trigger, err)
	}

	// as_of: nothing dated after it.
	early := time.Date(2026, 5, 1, 9, 1, 30, 0, time.UTC) // after the first two turns only
	for _, mode := range []string{engram.ModeDeep, engram.ModeHybrid, engram.ModeShallow, engram.ModeKeyword} {
		resp, err = s.Recall(ctx, engram.RecallRequest{Query: "PostgreSQL Redis cache storage", Mode: mode, AsOf: early})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range resp.Results {
			if r.TS.After(early) {
				t.Errorf("%s: a turn dated after as_of came back: %v", mode, r.TS)
			}
		}
	}

	// A temporal expression names a period and is reported.
	resp, err = s.Recall(ctx, engram.RecallRequest{Query: "what did we decide last week about the database", Mode: engram.ModeDeep, AsOf: asOf})
	if err != nil {
		t.Fatal(err)
	}
	if resp.TimeRange == nil || resp.TimeRange.Expr == "" || !resp.TimeRange.From.Before(resp.TimeRange.To) {
		t.Fatalf("time range: %+v", resp.TimeRange)
	}
	for _, r := range resp.Results {
		if r.Signals.InRange && (r.TS.Before(resp.TimeRange.From) || !r.TS.Before(resp.TimeRange.To)) {
			t.Errorf("in-range result outside the range: %v", r.TS)
		}
	}
}

// TestNoPadding: a small namespace's list is not padded with turns that
// carry no evidence. Hybrid leaves out the candidate whose every signal is
// at the floor (score 0); shallow leaves out a turn with no similarity at
// all (cosine 0 or less) and keeps the rest, nearest first.
func TestNoPadding(t *testing.T) {
	f := mustOpenFixture(t, small)
	ctx := context.Background()
	resp, err := f.service().Recall(ctx, engram.RecallRequest{Query: "which database did we pick?", Mode: engram.ModeHybrid})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) == 0 || len(resp.Results) >= len(small) || !strings.Contains(resp.Results[0].Text, "PostgreSQL") {
		t.Fatalf("hybrid over %d turns: %d results %+v, want the database turn first and the unrelated one left out", len(small), len(resp.Results), resp.Results)
	}
	for _, r := range resp.Results {
		if r.Score <= 0 {
			t.Errorf("hybrid result with no evidence: %q scored %v", r.Text, r.Score)
		}
	}

	// Shallow, with vectors whose cosines to the query are known: 1, 0.5,
	// 0 and -1.
	vecs := map[string][]float32{"query": {1, 0}, "same": {1, 0}, "near": {0.5, 0.8660254}, "orthogonal": {0, 1}, "opposite": {-1, 0}}
	db := f.db
	emb := fixedEmbedder(vecs)
	idx, err := db.Vectors(ctx, emb.Model(), emb.Dim())
	if err != nil {
		t.Fatal(err)
	}
	var items []engram.VectorItem
	for i, tr := range f.turns {
		name := []string{"same", "near", "orthogonal", "opposite"}[i]
		items = append(items, engram.VectorItem{ID: tr.ID, Kind: engram.KindTurn, Namespace: tr.Namespace, TS: tr.TS, Vector: vecs[name]})
	}
	if err := idx.PutTurnVectors(ctx, items, f.turns[len(f.turns)-1].Seq); err != nil {
		t.Fatal(err)
	}
	s := recall.NewService(db)
	s.SetVectors(&recall.Vectors{Embedder: emb, Index: vecindex.New(idx)})
	resp, err = s.Recall(ctx, engram.RecallRequest{Query: "query", Mode: engram.ModeShallow})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) != 2 || resp.Results[0].ID != f.turns[0].ID || resp.Results[1].ID != f.turns[1].ID {
		t.Fatalf("shallow: %+v, want the turns of cosine 1 and 0.5 only", resp.Results)
	}
}

// fixedEmbedder embeds each text as the vector the test gave it: a test
// double for cosines known in advance.
type fixedEmbedder map[string][]float32

var _ engram.Embedder = fixedEmbedder(nil)

func (e fixedEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v, ok := e[t]
		if !ok {
			return nil, fmt.Errorf("fixedEmbedder: no vector for %q", t)
		}
		out[i] = v
	}
	return out, nil
}
func (fixedEmbedder) Model() string { return "fixed-2" }
func (fixedEmbedder) Dim() int      { return 2 }

// aroundCounter counts the calls of TurnsAround.
type aroundCounter struct {
	engram.TurnIndex
	calls atomic.Int32
}

func (c *aroundCounter) TurnsAround(ctx context.Context, ts []engram.Turn, n int) ([]engram.Around, error) {
	c.calls.Add(1)
	return c.TurnIndex.TurnsAround(ctx, ts, n)
}

// A statement sent as several messages in a row is one result: its text is
// the burst's messages and its sources every one of them, on the default
// and the deep path; the other speaker's reply stays a result of its own.
func TestRecallBurstIsOneResult(t *testing.T) {
	contents := []string{
		"Hey! How are you?",
		"I signed up for a pottery class today!",
		"It's a wheel one",
		"we are throwing small bowls and mugs",
		"That sounds fun! I bought a mug yesterday",
		"The weather in Miami is lovely",
	}
	speakers := []string{"Bo", "Ana", "ana", "Ana", "Bo", "Bo"}
	f := mustOpenFixtureBy(t, contents, func(i int) string { return speakers[i] })
	idx := &aroundCounter{TurnIndex: f.db}
	s := recall.NewService(idx)
	s.SetVectors(&recall.Vectors{Embedder: f.emb, Index: f.index})
	for _, mode := range []string{engram.ModeHybrid, engram.ModeDeep} {
		idx.calls.Store(0)
		resp, err := s.Recall(context.Background(), engram.RecallRequest{Query: "what class is Ana taking", Mode: mode, K: 10})
		if err != nil {
			t.Fatal(err)
		}
		// The turns around the candidates are read together: for the
		// neighbour signal, the bursts and the context, not a lookup each.
		if n := idx.calls.Load(); n > 3 {
			t.Errorf("%s: %d lookups of the turns around hits, want at most 3", mode, n)
		}
		if len(resp.Results) == 0 {
			t.Fatalf("%s: no results", mode)
		}
		top := resp.Results[0]
		var ids []string
		for _, src := range top.Sources {
			ids = append(ids, src.ID)
		}
		if top.ID != f.turns[1].ID || strings.Join(ids, ",") != strings.Join([]string{f.turns[1].ID, f.turns[2].ID, f.turns[3].ID}, ",") {
			t.Fatalf("%s: top result %s with sources %v, want %s with the burst's three turns", mode, top.ID, ids, f.turns[1].ID)
		}
		if want := strings.Join(contents[1:4], "\n"); top.Text != want {
			t.Errorf("%s: text %q, want %q", mode, top.Text, want)
		}
		if mode == engram.ModeDeep {
			// The context is the turn before the burst and the one after it.
			if len(top.Context) != 2 || top.Context[0].ID != f.turns[0].ID || top.Context[1].ID != f.turns[4].ID {
				t.Errorf("deep: context %+v, want turns 1 and 5", top.Context)
			}
		}
		seen := map[string]int{}
		for _, r := range resp.Results {
			for _, src := range r.Sources {
				seen[src.ID]++
			}
		}
		for id, n := range seen {
			if n > 1 {
				t.Errorf("%s: turn %s is a source of %d results", mode, id, n)
			}
		}
		// Bursts off: single turns.
		off := f.service()
		off.Deep.BurstTurns = -1
		resp, err = off.Recall(context.Background(), engram.RecallRequest{Query: "what class is Ana taking", Mode: mode, K: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range resp.Results {
			if len(r.Sources) != 1 {
				t.Errorf("%s, bursts off: result %s has %d sources", mode, r.ID, len(r.Sources))
			}
		}
	}
}

// A date in the question is evidence, not a filter: the turn that tells of
// the event the day after is found, and of two turns that match alike the
// one of the named day ranks first.
func TestDeepDateIsNotAFilter(t *testing.T) {
	db, err := palace.Open(filepath.Join(t.TempDir(), "palace.db"), palace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	day := func(d int) time.Time { return time.Date(2023, 12, d, 20, 0, 0, 0, time.UTC) }
	turns := []engram.Turn{
		{Session: "s1", Speaker: "Kate", Content: "We went skating downtown tonight", TS: day(29)},
		{Session: "s2", Speaker: "Elise", Content: "Yesterday I made pasta with ham and peas", TS: day(30)},
		{Session: "s3", Speaker: "Kate", Content: "I painted a mug at the pottery studio", TS: day(15)},
		{Session: "s4", Speaker: "Kate", Content: "I painted a mug at the pottery studio today", TS: day(22)},
		{Session: "s5", Speaker: "Elise", Content: "I planned a vacation: I'm going to Athens on the 10th of February", TS: day(31)},
		{Session: "s6", Speaker: "Elise", Content: "I'm going to the cinema with my friends", TS: day(31).AddDate(0, 0, 41)},
	}
	for i := range turns {
		turns[i].ID, turns[i].Seq, turns[i].Namespace, turns[i].Role = fmt.Sprintf("t%d", i+1), int64(i+1), "default", engram.RoleUser
		turns[i].ReceivedAt = turns[i].TS
	}
	f := mustOpenTurns(t, db, turns)
	s := f.service()
	asOf := time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC)
	resp, err := s.Recall(context.Background(), engram.RecallRequest{Query: "what pasta did Elise make on 29 Dec 2023?", Mode: engram.ModeDeep, AsOf: asOf})
	if err != nil {
		t.Fatal(err)
	}
	if resp.TimeRange == nil || len(resp.Results) == 0 || resp.Results[0].ID != "t2" {
		t.Fatalf("time range %+v, results %+v: want t2, told the day after, first", resp.TimeRange, resp.Results)
	}
	if resp.Results[0].Signals.InRange {
		t.Errorf("t2 is marked in range")
	}
	resp, err = s.Recall(context.Background(), engram.RecallRequest{Query: "what did Kate paint at the pottery studio on 22.12.2023", Mode: engram.ModeDeep, AsOf: asOf})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) < 2 || resp.Results[0].ID != "t4" || !resp.Results[0].Signals.InRange {
		t.Fatalf("results %+v: want t4, of the named day, first", resp.Results)
	}
	// The turn that names the date itself is found by its words, though it
	// was told weeks before the period (a plan).
	resp, err = s.Recall(context.Background(), engram.RecallRequest{Query: "Where is Elise going on the 10th of February 2024?", Mode: engram.ModeDeep, AsOf: asOf.AddDate(0, 1, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if resp.TimeRange == nil || len(resp.Results) == 0 || resp.Results[0].ID != "t5" {
		t.Fatalf("time range %+v, results %v: want t5, the plan that names the day, first", resp.TimeRange, resultIDs(resp.Results))
	}
}

// A question's period reaches its candidates' search beyond the period:
// the turn that tells of the day's event the day after is a candidate even
// where many turns outside the period match the question better by words
// and meaning (here more than deep's candidates from the whole history).
func TestDeepPeriodReachesTheDayAfter(t *testing.T) {
	db, err := palace.Open(filepath.Join(t.TempDir(), "palace.db"), palace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var turns []engram.Turn
	for d := 1; d <= 10; d++ {
		turns = append(turns, engram.Turn{Session: fmt.Sprintf("s%d", d), Speaker: "Elise",
			Content: fmt.Sprintf("I play basketball on weekends, a basketball game with %d friends", d), TS: time.Date(2023, 12, d, 20, 0, 0, 0, time.UTC)})
	}
	turns = append(turns, engram.Turn{Session: "s7", Speaker: "Elise", Content: "It went great yesterday, my team won",
		TS: time.Date(2024, 1, 6, 19, 0, 0, 0, time.UTC)})
	for i := range turns {
		turns[i].ID, turns[i].Seq, turns[i].Namespace, turns[i].Role = fmt.Sprintf("t%d", i+1), int64(i+1), "default", engram.RoleUser
		turns[i].ReceivedAt = turns[i].TS
	}
	f := mustOpenTurns(t, db, turns)
	ask := func(reach time.Duration) []string {
		s := f.service()
		s.Deep.Candidates, s.Deep.PeriodReach = 3, reach
		resp, err := s.Recall(context.Background(), engram.RecallRequest{Query: "Which basketball game did Elise play on 5 Jan 2024?",
			Mode: engram.ModeDeep, K: 10, AsOf: time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC)})
		if err != nil {
			t.Fatal(err)
		}
		if resp.TimeRange == nil {
			t.Fatal("no time range read from the question")
		}
		return resultIDs(resp.Results)
	}
	if got := ask(0); !slices.Contains(got, "t11") {
		t.Errorf("results %v: want t11, told the day after the period, among them", got)
	}
	if got := ask(-1); slices.Contains(got, "t11") {
		t.Errorf("period reach off: results %v hold t11 (the test no longer needs the reach)", got)
	}
}

// TestRecallFavoursTheNamedSpeaker: a question about a named person is
// answered by that person's turn before the other speaker's turn on the
// same topic; the name's case and a spelling variant of it count.
func TestRecallFavoursTheNamedSpeaker(t *testing.T) {
	contents := []string{
		"On weekends I go sailing with my sister",
		"On weekends I go to the cinema with my brother",
		"Muhhamed told me the cinema was full",
	}
	// Muhhamed's answer comes first: a tie goes to the later turn.
	f := mustOpenFixtureBy(t, contents, func(i int) string { return []string{"Muhhamed", "Akib", "Akib"}[i] })
	s := f.service()
	for _, mode := range []string{engram.ModeDeep, engram.ModeHybrid} {
		for _, q := range []string{"What does Muhhamed do on weekends?", "what does muhhamed do on weekends", "What does Mohamed do on weekends?"} {
			resp, err := s.Recall(context.Background(), engram.RecallRequest{Query: q, Mode: mode, K: 3})
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.Results) == 0 || resp.Results[0].ID != "t000001" {
				t.Errorf("%s %q: results %v, want Muhhamed's answer t000001 first", mode, q, resultIDs(resp.Results))
			}
		}
	}
}

func resultIDs(rs []engram.Result) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

// TestDeepNamesAreNotKeywords: a question that names both speakers, the
// way chats spell names (not as the speakers are signed), is not answered
// by the turns that greet them by those names. The names say whose turns
// answer (here both, so they tell nothing apart); as keywords they match
// only the greetings, the one place a chat writes a person's name.
func TestDeepNamesAreNotKeywords(t *testing.T) {
	contents := []string{
		"Hey Muhammad",
		"Hi Akeeb",
		"The weather turned cold and grey this week",
		"My landlord finally fixed the heating",
		"I cooked a big lasagna for my family",
		"Work has been hectic with the new project",
		"We watched a documentary about volcanoes",
		"I cooked a pot of lentil soup",
		"The train was late again this morning",
		"My cousin is moving to another city",
	}
	f := mustOpenFixtureBy(t, contents, func(i int) string { return []string{"Akib", "Muhhamed"}[i%2] })
	s := f.service()
	for _, q := range []string{"What did Muhammad and Akeeb cook?", "What did Mohammed and Akeeb cook?"} {
		resp, err := s.Recall(context.Background(), engram.RecallRequest{Query: q, Mode: engram.ModeDeep, K: 2})
		if err != nil {
			t.Fatal(err)
		}
		got := resultIDs(resp.Results)
		if len(got) != 2 || !(got[0] == "t000005" && got[1] == "t000008" || got[0] == "t000008" && got[1] == "t000005") {
			t.Errorf("%q: results %v, want the two turns that tell what was cooked, t000005 and t000008", q, got)
		}
	}
}

// TestHybridKeywordWeightIsItsOwn: deep's keyword weight leaves the default
// path's ranking and scores as they are.
func TestHybridKeywordWeightIsItsOwn(t *testing.T) {
	f := mustOpenFixture(t, small)
	base, heavy := f.service(), f.service()
	heavy.Deep.BM25Weight = 5
	for _, q := range []string{"which database did we choose", "the cat on the mat", "lunch moved"} {
		req := engram.RecallRequest{Query: q, Mode: engram.ModeHybrid, K: 4}
		want, err := base.Recall(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := heavy.Recall(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Results) != len(want.Results) {
			t.Fatalf("%q: %v with deep's keyword weight at 5, %v at its default", q, resultIDs(got.Results), resultIDs(want.Results))
		}
		for i := range want.Results {
			if got.Results[i].ID != want.Results[i].ID || got.Results[i].Score != want.Results[i].Score {
				t.Errorf("%q: result %d is %s (%v) with deep's keyword weight at 5, %s (%v) at its default", q, i,
					got.Results[i].ID, got.Results[i].Score, want.Results[i].ID, want.Results[i].Score)
			}
		}
	}
}
