package pipeline_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/embedder"
	"github.com/engram-dev/engram/extract"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/internal/work"
	"github.com/engram-dev/engram/ollama"
	"github.com/engram-dev/engram/palace"
	"github.com/engram-dev/engram/pipeline"
	"github.com/engram-dev/engram/vecindex"
)

// team is a conversation over three weeks: Alice moves from Berlin to
// Lisbon, the team picks a database and changes its mind, people state
// tastes and habits, and a Chinese-speaking colleague joins.
func team() []engram.Turn {
	d := func(day, min int) time.Time { return time.Date(2026, 2, 2+day, 10, min, 0, 0, time.UTC) }
	turn := func(session, speaker string, at time.Time, content string) engram.Turn {
		return engram.Turn{Namespace: "team", Session: session, Role: engram.RoleUser, Speaker: speaker, TS: at, Content: content}
	}
	turns := []engram.Turn{
		turn("w1", "Alice", d(0, 0), "Morning! I live in Berlin, so I'm an hour ahead of you."),
		turn("w1", "Bob", d(0, 1), "We decided to use Postgres for the billing service because it handles transactions well."),
		turn("w1", "Alice", d(0, 2), "I really like cold brew coffee."),
		turn("w1", "Bob", d(0, 3), "I'm going to write the migration plan next week."),
		turn("w1", "Alice", d(0, 4), "Sounds good."),
		turn("w1", "Alice", d(0, 5), "I usually run before work."),
		turn("w2", "Bob", d(7, 0), "We decided to use Postgres for the billing service, as I said."),
		turn("w2", "Alice", d(7, 1), "Big news: I moved to Lisbon last weekend."),
		turn("w2", "Alice", d(7, 2), "I live in Lisbon now, much sunnier."),
		turn("w2", "Chen", d(7, 3), "我叫陈明，我住在上海。"),
		turn("w2", "Chen", d(7, 4), "我们决定用SQLite做存储，因为部署简单。"),
		turn("w3", "Alice", d(14, 0), "I don't like cold brew coffee anymore."),
		turn("w3", "Bob", d(14, 1), "My favourite book is Dune."),
		turn("w3", "Bob", d(14, 2), "After the outage we switched to ClickHouse; we decided to use ClickHouse for the analytics service."),
	}
	for i := range turns {
		turns[i].ID = fmt.Sprintf("team-%02d", i) // fixed ids: two archives of team() give the same layers
	}
	return turns
}

func mustArchive(t *testing.T, turns []engram.Turn) (*archive.Archive, *palace.DB) {
	t.Helper()
	a, p, _ := mustOpen(t)
	if _, err := a.Append(context.Background(), turns); err != nil {
		t.Fatal(err)
	}
	return a, p
}

func runLayers(t *testing.T, a engram.Archive, p *palace.DB, x engram.Extractor, batch int) {
	t.Helper()
	ctx := waitCtx(t)
	for _, w := range []interface{ Run(context.Context) error }{
		&pipeline.MemoryWorker{Archive: a, Extractor: x, Store: p, BatchSize: batch},
		&pipeline.SceneWorker{Archive: a, Store: p, BatchSize: batch},
		&pipeline.PersonaWorker{Store: p, BatchSize: batch},
		&pipeline.GraphWorker{Store: p, BatchSize: batch},
	} {
		if err := w.Run(ctx); err != nil {
			t.Fatalf("%T: %v", w, err)
		}
	}
}

// snapshot reads every layer through the palace's query API.
func snapshot(t *testing.T, p *palace.DB) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	mems, err := p.Memories(ctx, engram.MemoryQuery{Namespace: "team", Superseded: true, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(mems, func(x, y engram.Memory) int { return strings.Compare(x.ID, y.ID) })
	for _, m := range mems {
		fmt.Fprintf(&b, "M %s %s %q %v sup=%s\n", m.ID, m.Type, m.Text, m.Sources, m.SupersededBy)
	}
	scenes, err := p.Scenes(ctx, engram.SceneQuery{Namespace: "team", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range scenes {
		fmt.Fprintf(&b, "S %s %q %v\n", s.ID, s.Title, s.Turns)
	}
	ps, err := p.Persona(ctx, "team", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, pe := range ps {
		for _, f := range pe.Facets {
			fmt.Fprintf(&b, "P %s %s %s=%s %v %d\n", pe.Speaker, f.Facet, f.Key, f.Value, f.Evidence, len(f.History))
		}
	}
	for _, e := range []string{"Alice", "Bob", "陈明", "Chen"} {
		g, err := p.Graph(ctx, engram.GraphQuery{Namespace: "team", Entity: e, Timeline: true})
		if engram.ErrorCode(err) == engram.ENOTFOUND {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range g.Triples {
			fmt.Fprintf(&b, "G %s %s %s %s %s\n", tr.Subject, tr.Predicate, tr.Object, tr.ValidFrom.Format(time.DateOnly), tr.ValidTo.Format(time.DateOnly))
		}
	}
	return b.String()
}

func TestLayerWorkers_Rules(t *testing.T) {
	a, p := mustArchive(t, team())
	runLayers(t, a, p, extract.RulesExtractor{}, 0)
	ctx := context.Background()
	snap := snapshot(t, p)
	t.Logf("layers:\n%s", snap)

	// L1: the repeated decision merged, the move superseded the old home.
	mems, err := p.Memories(ctx, engram.MemoryQuery{Namespace: "team", Type: engram.MemoryDecision, Text: "postgres billing"})
	if err != nil || len(mems) == 0 {
		t.Fatalf("decision about Postgres: %v %v", mems, err)
	}
	if len(mems[0].Sources) != 2 || mems[0].Rationale == "" {
		t.Errorf("the Postgres decision should merge its two statements and keep its rationale: %+v", mems[0])
	}
	home, err := p.Memories(ctx, engram.MemoryQuery{Namespace: "team", Subject: "Alice", Text: "live Berlin", Superseded: true})
	if err != nil || len(home) == 0 || home[0].SupersededBy == "" {
		t.Errorf("Alice's Berlin home should be superseded: %+v %v", home, err)
	}
	// L4: where Alice lives depends on the date.
	for _, c := range []struct {
		at   time.Time
		want string
	}{
		{time.Date(2026, 2, 3, 0, 0, 0, 0, time.UTC), "Berlin"},
		{time.Date(2026, 2, 20, 0, 0, 0, 0, time.UTC), "Lisbon"},
	} {
		g, err := p.Graph(ctx, engram.GraphQuery{Namespace: "team", Entity: "alice", AsOf: c.at})
		if err != nil {
			t.Fatal(err)
		}
		var lives []string
		for _, tr := range g.Triples {
			if tr.Predicate == "lives_in" {
				lives = append(lives, tr.Object)
			}
		}
		if !slices.Equal(lives, []string{c.want}) {
			t.Errorf("as of %s Alice lives in %v, want %s", c.at.Format(time.DateOnly), lives, c.want)
		}
	}
	// L3: Alice's home with its history; her taste for cold brew changed.
	ps, err := p.Persona(ctx, "team", "Alice")
	if err != nil || len(ps) != 1 {
		t.Fatalf("persona of Alice: %+v %v", ps, err)
	}
	facets := map[string]engram.PersonaFacet{}
	for _, f := range ps[0].Facets {
		facets[f.Facet+"/"+f.Key] = f
	}
	if f := facets["identity/lives_in"]; f.Value != "Lisbon" || len(f.History) != 1 || f.History[0].Value != "Berlin" {
		t.Errorf("Alice's lives_in facet: %+v", f)
	}
	if _, ok := facets["habit/run before work"]; !ok {
		t.Errorf("Alice's running habit is missing: %v", facets)
	}
	// L2: one scene per week, each with its turns and participants.
	scenes, err := p.Scenes(ctx, engram.SceneQuery{Namespace: "team"})
	if err != nil || len(scenes) < 3 {
		t.Fatalf("scenes: %+v %v", scenes, err)
	}
	for _, s := range scenes {
		if s.Title == "" || len(s.Turns) == 0 || len(s.Participants) == 0 {
			t.Errorf("scene %+v lacks a title, turns or participants", s)
		}
	}

	// Running every worker again changes nothing.
	runLayers(t, a, p, extract.RulesExtractor{}, 0)
	if again := snapshot(t, p); again != snap {
		t.Errorf("a second run changed the layers:\n%s\nwant\n%s", again, snap)
	}
	// Batch boundaries do not matter (a resumed run cuts batches elsewhere).
	a2, p2 := mustArchive(t, team())
	runLayers(t, a2, p2, extract.RulesExtractor{}, 3)
	if got := snapshot(t, p2); got != snap {
		t.Errorf("batches of 3 gave other layers:\n%s\nwant\n%s", got, snap)
	}
}

func TestLayerWorkers_OllamaUnusableOutputSkips(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the Ollama test server")
	}
	host, model := os.Getenv("ENGRAM_TEST_OLLAMA_HOST"), os.Getenv("ENGRAM_TEST_OLLAMA_CHAT_MODEL")
	if host == "" || model == "" {
		t.Fatal("Ollama test server not configured: run `make test` (it starts one) or scripts/ollama.sh up PORT and export ENGRAM_TEST_OLLAMA_HOST/ENGRAM_TEST_OLLAMA_CHAT_MODEL; -short skips")
	}
	// Replies cut at 3 tokens are never usable: every batch is skipped and
	// recorded, and the worker finishes.
	x, err := ollama.NewExtractor(ollama.ExtractorConfig{Config: ollama.Config{Host: host, Model: model}, MaxTokens: 3, BatchTurns: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	turns := team()
	a, p := mustArchive(t, turns)
	w := &pipeline.MemoryWorker{Archive: a, Extractor: x, Store: p, BatchSize: 8}
	if err := w.Run(waitCtx(t)); err != nil {
		t.Fatalf("run: %v", err)
	}
	ctx := context.Background()
	if seq, _ := p.WorkerSeq(ctx, pipeline.WorkerMemories); seq != int64(len(turns)) {
		t.Errorf("watermark %d, want %d", seq, len(turns))
	}
	skips, err := p.Skips(ctx, 10)
	if err != nil || len(skips) != 2 {
		t.Fatalf("skips %+v %v, want the two batches", skips, err)
	}
	for _, s := range skips {
		if !strings.Contains(s.Error, "max tokens") && !strings.Contains(s.Error, "usable") {
			t.Errorf("skip reason %q does not say why", s.Error)
		}
	}

	// A server that is down is no reason to skip: the run fails and the
	// watermark stays, so the next run retries.
	down, err := ollama.NewExtractor(ollama.ExtractorConfig{Config: ollama.Config{Host: "127.0.0.1:1", Model: model, MaxRetries: -1}})
	if err != nil {
		t.Fatal(err)
	}
	a2, p2 := mustArchive(t, turns)
	err = (&pipeline.MemoryWorker{Archive: a2, Extractor: down, Store: p2}).Run(ctx)
	if engram.ErrorCode(err) != engram.EUNAVAILABLE {
		t.Errorf("server down: %v, want EUNAVAILABLE", err)
	}
	if seq, _ := p2.WorkerSeq(ctx, pipeline.WorkerMemories); seq != 0 {
		t.Errorf("a failed run moved the watermark to %d", seq)
	}
}

func TestLayerVectorWorker(t *testing.T) {
	a, p := mustArchive(t, team())
	ctx := waitCtx(t)
	ix := pipeline.NewIndexer(a, p) // the sessions' units come with the turns
	if err := ix.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	runLayers(t, a, p, extract.RulesExtractor{}, 0)
	emb := embedder.New()
	store, err := p.Vectors(ctx, emb.Model(), emb.Dim())
	if err != nil {
		t.Fatal(err)
	}
	w := &pipeline.LayerVectorWorker{Layers: p, Embedder: emb, Store: store, Units: p, BatchSize: 4}
	if err := w.Run(ctx); err != nil {
		t.Fatal(err)
	}
	mems, _ := p.Memories(ctx, engram.MemoryQuery{Namespace: "team", Superseded: true, Limit: 1000})
	scenes, _ := p.Scenes(ctx, engram.SceneQuery{Namespace: "team", Limit: 1000})
	facts, _ := p.TriplesSince(ctx, 0, 1000)
	units, _ := p.UnitsSince(ctx, 0, 1000)
	n, err := store.Count(ctx)
	if err != nil || len(facts) == 0 || len(units) == 0 || n != len(mems)+len(scenes)+len(facts)+len(units) {
		t.Fatalf("%d vectors (%v), want one per memory, scene, fact and unit: %d", n, err, len(mems)+len(scenes)+len(facts)+len(units))
	}
	if byKind, _ := store.CountByKind(ctx); byKind[engram.KindSessionUnit]+byKind[engram.KindSceneUnit] != len(units) {
		t.Errorf("unit vectors: %v, want %d", byKind, len(units))
	}
	last, _ := store.LastChange(ctx)
	if err := w.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if again, _ := store.LastChange(ctx); again != last {
		t.Errorf("a second run wrote vectors again (%d -> %d)", last, again)
	}
	// A memory is found by meaning: the query shares no word with it.
	vecs, err := emb.Embed(ctx, []string{"which analytics database did they adopt"})
	if err != nil {
		t.Fatal(err)
	}
	hits, err := vecindex.New(store).Query(ctx, engram.VectorQuery{Vector: vecs[0], K: 3, Kinds: []string{engram.KindMemory}})
	if err != nil || len(hits) == 0 {
		t.Fatalf("query: %v %v", hits, err)
	}
	got, _ := p.GetMemories(ctx, []string{hits[0].ID})
	if len(got) != 1 || !strings.Contains(got[0].Text, "ClickHouse") {
		t.Errorf("best memory for the analytics question: %+v", got)
	}
}

// TestSceneWorkerIndexed: bound to the turn index, the scene worker builds
// no scene of turns the palace does not hold yet, and once they are
// indexed each scene's retrieval unit holds their text.
func TestSceneWorkerIndexed(t *testing.T) {
	a, p := mustArchive(t, team())
	ctx := waitCtx(t)
	w := &pipeline.SceneWorker{Archive: a, Store: p, Indexed: p.IndexedSeq}
	if err := w.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if seq, _ := p.WorkerSeq(ctx, pipeline.WorkerScenes); seq != 0 {
		t.Fatalf("scenes built up to seq %d of an empty turn index", seq)
	}
	ix := pipeline.NewIndexer(a, p)
	if err := ix.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if err := w.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if seq, _ := p.WorkerSeq(ctx, pipeline.WorkerScenes); seq != a.LastSeq() {
		t.Fatalf("scenes built up to seq %d, want %d", seq, a.LastSeq())
	}
	hits, err := p.SearchUnits(ctx, engram.TextQuery{Namespace: "team", Text: "ClickHouse analytics", Limit: 5}, engram.UnitScene)
	if err != nil || len(hits) == 0 || hits[0].Unit.Turns == 0 {
		t.Fatalf("the scene unit of the ClickHouse decision: %+v %v", hits, err)
	}
}

// TestLayerWorkersYield: a layer worker with a work.Scheduler stores
// nothing while a client write is in flight, and goes on once it ended.
func TestLayerWorkersYield(t *testing.T) {
	for _, name := range []string{"memories", "scenes"} {
		t.Run(name, func(t *testing.T) {
			a, p := mustArchive(t, team())
			s := work.New(1)
			s.Quiet, s.MaxWait = time.Nanosecond, time.Hour
			var w interface{ Run(context.Context) error } = &pipeline.MemoryWorker{Archive: a, Extractor: extract.RulesExtractor{}, Store: p, Work: s}
			count := func() int {
				mems, err := p.Memories(context.Background(), engram.MemoryQuery{Namespace: "team", Limit: 1000})
				if err != nil {
					t.Fatal(err)
				}
				return len(mems)
			}
			if name == "scenes" {
				w = &pipeline.SceneWorker{Archive: a, Store: p, Work: s}
				count = func() int {
					scenes, err := p.Scenes(context.Background(), engram.SceneQuery{Namespace: "team", Limit: 1000})
					if err != nil {
						t.Fatal(err)
					}
					return len(scenes)
				}
			}
			end := s.Write()
			done := make(chan error, 1)
			go func() { done <- w.Run(waitCtx(t)) }()
			testutil.WaitUntil(t, "the worker to wait for the write", func() bool { return s.Stats().Waiting["derive"] == 1 })
			if n := count(); n != 0 {
				t.Fatalf("%d %s stored while a write was in flight", n, name)
			}
			end()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if count() == 0 {
				t.Fatalf("no %s stored once the write ended", name)
			}
		})
	}
}

// TestForgetKeepsOtherSources: forgetting one of the turns a memory, a
// persona facet or a graph statement stands on removes that turn from its
// sources and keeps the item on the others; an item that stood only on
// forgotten turns goes.
func TestForgetKeepsOtherSources(t *testing.T) {
	ctx := context.Background()
	turns := team()
	a, p := mustArchive(t, turns)
	// The turns in the palace too: a scene is made again of them.
	var archived []engram.Turn
	if err := a.Stream(ctx, 0, func(t engram.Turn) error { archived = append(archived, t); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := p.PutTurns(ctx, archived); err != nil {
		t.Fatal(err)
	}
	runLayers(t, a, p, extract.RulesExtractor{}, 0)
	mems, err := p.Memories(ctx, engram.MemoryQuery{Namespace: "team", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	// Forget the first source of every memory with two or more.
	forget := map[string]bool{}
	for _, m := range mems {
		if len(m.Sources) >= 2 {
			forget[m.Sources[0]] = true
		}
	}
	if len(forget) == 0 {
		t.Fatal("no memory stands on two turns: the test shows nothing")
	}
	sourced := func(sources []string) (kept []string) {
		for _, s := range sources {
			if !forget[s] {
				kept = append(kept, s)
			}
		}
		return kept
	}
	wantMems := map[string][]string{} // id -> the sources left
	for _, m := range mems {
		wantMems[m.ID] = sourced(m.Sources)
	}
	ps, err := p.Persona(ctx, "team", "")
	if err != nil {
		t.Fatal(err)
	}
	wantFacets := map[string][]string{}
	for _, pe := range ps {
		for _, f := range pe.Facets {
			wantFacets[pe.Speaker+" "+f.Key+"="+f.Value] = sourced(f.Evidence)
		}
	}
	before, err := p.Scenes(ctx, engram.SceneQuery{Namespace: "team", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	scened := map[string]bool{} // the turns left that were in a scene
	touched := 0                // scenes holding a forgotten turn
	for _, sc := range before {
		hit := false
		for _, id := range sc.Turns {
			scened[id] = !forget[id]
			hit = hit || forget[id]
		}
		if hit {
			touched++
		}
	}
	var ft []engram.ForgetTurn
	for i, tu := range turns {
		if forget[tu.ID] {
			ft = append(ft, engram.ForgetTurn{ID: tu.ID, Seq: int64(i + 1)}) // the archive numbered them from 1, in order
		}
	}
	res, err := p.ForgetTurns(ctx, ft, time.Now(), pipeline.SceneConfig{}.Regroup)
	if err != nil {
		t.Fatal(err)
	}
	if res.MemoriesKept == 0 {
		t.Errorf("no memory kept its other sources: %+v", res)
	}
	// A scene holding a forgotten turn is made again of its other turns:
	// every turn left that was in a scene is in exactly one.
	if res.Scenes != touched || touched == 0 || res.ScenesRemade == 0 {
		t.Errorf("scenes: %d deleted, %d made again; %d held a forgotten turn", res.Scenes, res.ScenesRemade, touched)
	}
	afterScenes, err := p.Scenes(ctx, engram.SceneQuery{Namespace: "team", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	in := map[string]int{}
	for _, sc := range afterScenes {
		for _, id := range sc.Turns {
			if forget[id] {
				t.Errorf("scene %s still holds forgotten turn %s", sc.ID, id)
			}
			in[id]++
		}
	}
	for id, left := range scened {
		if left && in[id] != 1 {
			t.Errorf("turn %s is in %d scenes after the forget, want 1", id, in[id])
		}
	}
	// The scene job goes on from the scene made again (its draft).
	next := turns[len(turns)-1]
	next.ID, next.Seq, next.Content = "team-next", 0, "Alice says the deploy went fine after the migration."
	next.TS = next.TS.Add(time.Minute)
	res2, err := a.Append(ctx, []engram.Turn{next})
	if err != nil {
		t.Fatal(err)
	}
	next.Seq = res2[0].Seq
	if err := p.PutTurns(ctx, []engram.Turn{next}); err != nil {
		t.Fatal(err)
	}
	if err := (&pipeline.SceneWorker{Archive: a, Store: p}).Run(ctx); err != nil {
		t.Fatalf("the scene job after the forget: %v", err)
	}
	final, err := p.Scenes(ctx, engram.SceneQuery{Namespace: "team", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	holding := 0
	for _, sc := range final {
		holding += len(slices.DeleteFunc(slices.Clone(sc.Turns), func(id string) bool { return id != "team-next" }))
	}
	if holding != 1 {
		t.Errorf("the next turn is in %d scenes, want 1", holding)
	}

	after, err := p.Memories(ctx, engram.MemoryQuery{Namespace: "team", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, m := range after {
		got[m.ID] = m.Sources
	}
	checkKept(t, "memory", wantMems, got)
	ps, err = p.Persona(ctx, "team", "")
	if err != nil {
		t.Fatal(err)
	}
	gotFacets := map[string][]string{}
	for _, pe := range ps {
		for _, f := range pe.Facets {
			gotFacets[pe.Speaker+" "+f.Key+"="+f.Value] = f.Evidence
		}
	}
	if checkKept(t, "facet", wantFacets, gotFacets) == 0 {
		t.Error("no persona facet kept: the test shows little")
	}
	// No graph statement cites a forgotten turn.
	g, err := p.Graph(ctx, engram.GraphQuery{Namespace: "team", Entity: "Alice", Timeline: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range g.Triples {
		for _, s := range tr.Sources {
			if forget[s] {
				t.Errorf("graph statement %s %s %s still cites forgotten turn %s", tr.Subject, tr.Predicate, tr.Object, s)
			}
		}
	}
}

// checkKept checks, for each item of want (its sources left after a
// forget; none: it must be gone), that got holds it with exactly those
// sources, and returns how many items were to be kept.
func checkKept(t *testing.T, what string, want, got map[string][]string) (kept int) {
	t.Helper()
	for k, w := range want {
		switch {
		case len(w) == 0 && got[k] != nil:
			t.Errorf("%s %s stood only on forgotten turns and is still there: %v", what, k, got[k])
		case len(w) > 0 && !slices.Equal(got[k], w):
			t.Errorf("%s %s: sources %v, want %v", what, k, got[k], w)
		case len(w) > 0:
			kept++
		}
	}
	return kept
}

// forgetOnce is an extractor that, the first time, forgets a turn of the
// archive in an exclusive section of s after it has read the batch: a
// forget landing between a memory job's read and its store.
type forgetOnce struct {
	engram.Extractor
	s      *work.Scheduler
	a      *archive.Archive
	id     string
	calls  atomic.Int32
	forgot error
}

func (x *forgetOnce) Extract(ctx context.Context, turns []engram.Turn) ([]engram.Memory, error) {
	mems, err := x.Extractor.Extract(ctx, turns)
	if x.calls.Add(1) == 1 {
		x.forgot = x.s.Exclusive(ctx, func() error {
			_, err := x.a.Forget(ctx, []string{x.id}, engram.Forgotten{At: time.Now().UTC(), Reason: "test"})
			return err
		})
	}
	return mems, err
}

// TestMemoryWorkerReadsAgainAfterForget: the memories a job extracted from
// turns read before a forget are not stored after it (its store is a
// guarded task, refused once the section ended): the job reads the archive
// again and derives nothing from the forgotten turn.
func TestMemoryWorkerReadsAgainAfterForget(t *testing.T) {
	ctx := waitCtx(t)
	a, p := mustArchive(t, team())
	var doomed string
	err := a.Stream(ctx, 0, func(t engram.Turn) error {
		if strings.Contains(t.Content, "use Postgres for the billing service because") {
			doomed = t.ID
		}
		return nil
	})
	if err != nil || doomed == "" {
		t.Fatalf("the turn to forget: %q %v", doomed, err)
	}
	s := work.New(1)
	x := &forgetOnce{Extractor: extract.RulesExtractor{}, s: s, a: a, id: doomed}
	if err := (&pipeline.MemoryWorker{Archive: a, Extractor: x, Store: p, Work: s}).Run(ctx); err != nil {
		t.Fatal(err)
	}
	if x.forgot != nil {
		t.Fatal(x.forgot)
	}
	if n := x.calls.Load(); n < 2 {
		t.Fatalf("%d extractions: the batch read before the forget was not read again", n)
	}
	mems, err := p.Memories(ctx, engram.MemoryQuery{Namespace: "team", Limit: 1000})
	if err != nil || len(mems) == 0 {
		t.Fatalf("memories after the run: %d, %v", len(mems), err)
	}
	for _, m := range mems {
		if slices.Contains(m.Sources, doomed) {
			t.Fatalf("memory %q stands on the turn forgotten before it was stored", m.Text)
		}
	}
}
