package pgpalace

import (
	"cmp"
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/pgtest"
)

// graphTriples are triples as the graph job writes them: people under
// several spellings and names, single-valued predicates changing over
// time, likes turning into dislikes, facts told again, out of order,
// sourced from turns.
func graphTriples(turns []engram.Turn) []engram.Triple {
	rng := rand.New(rand.NewPCG(11, 5))
	people := []string{"Alice", "alice", "ALICE", "the Alice", "Bob", "Carol Quill", "carol quill", "Zorblax"}
	places := []string{"Lisbon", "Porto", "the Harbour", "Zorblax Tower", "Berlin"}
	things := []string{"jazz", "Chess", "the night shift", "Zorblax tea", "plover pie"}
	base := time.Date(2026, 4, 1, 8, 0, 0, 0, time.UTC)
	var out []engram.Triple
	for i := range 260 {
		t := engram.Triple{Namespace: []string{"work", "home"}[rng.IntN(2)], Subject: people[rng.IntN(len(people))],
			ValidFrom: base.Add(time.Duration(rng.IntN(60*24)) * time.Hour), Memory: "m" + strings.Repeat("x", i%3)}
		switch rng.IntN(6) {
		case 0:
			t.Predicate, t.Object = "lives_in", places[rng.IntN(len(places))]
		case 1:
			t.Predicate, t.Object = []string{"likes", "dislikes"}[rng.IntN(2)], things[rng.IntN(len(things))]
		case 2:
			t.Predicate, t.Object = "visits", places[rng.IntN(len(places))]
		case 3:
			t.Predicate, t.Object = "also_known_as", []string{"Ally", "Bobby", "Cee", "Zorb"}[rng.IntN(4)]
		case 4:
			t.Predicate, t.Object = "favourite_book", []string{"Dune", "Emma", "the Zorblax Saga"}[rng.IntN(3)]
		default:
			t.Predicate, t.Object = "works_at", []string{"Acme", "Zorblax Labs", "the Mill"}[rng.IntN(3)]
		}
		for range 1 + rng.IntN(2) {
			t.Sources = append(t.Sources, turns[rng.IntN(len(turns))].ID)
		}
		out = append(out, t)
	}
	// Entities named only by facts of a turn the test forgets.
	out = append(out, engram.Triple{Namespace: "work", Subject: "Solo Person", Predicate: "lives_in", Object: "Nowhere Town",
		ValidFrom: base, Sources: []string{turns[2].ID}})
	return append(out, out[10:40]...) // told again
}

// TestGraph_AsSQLite checks that this palace builds the knowledge graph as
// package palace's SQLite file does from the same triples: the same
// entities, aliases, triples and their validity, the same answers to the
// graph's questions and searches, through a forget of turns its facts
// stem from and a redaction of a name.
func TestGraph_AsSQLite(t *testing.T) {
	ctx := t.Context()
	turns := searchTurns(t)
	pg, lite := bothPalaces(t, turns, 100)
	type graphPalace interface {
		Stats(ctx context.Context) (engram.Stats, error)
		ApplyTriples(ctx context.Context, worker string, triples []engram.Triple, throughSeq int64) error
		Graph(ctx context.Context, q engram.GraphQuery) (engram.GraphResult, error)
		EntityTriples(ctx context.Context, ns string, names []string, asOf time.Time, limit int) ([]engram.Triple, error)
		TriplesSince(ctx context.Context, after int64, limit int) ([]engram.Triple, error)
		GetTriples(ctx context.Context, ids []string) ([]engram.Triple, error)
		SearchTriples(ctx context.Context, q engram.TextQuery, asOf time.Time) ([]engram.TripleHit, error)
		Entities(ctx context.Context, q engram.EntityQuery) ([]engram.EntityCount, error)
		ForgetTurns(ctx context.Context, turns []engram.ForgetTurn, at time.Time, remake engram.SceneRemaker) (engram.ForgetResult, error)
		RedactTurns(ctx context.Context, turns []engram.Turn, spans []string, marker string) (engram.RedactResult, error)
	}
	palaces := []graphPalace{pg, lite}
	triples := graphTriples(turns)
	for _, p := range palaces {
		for i := 0; i < len(triples); i += 40 {
			if err := p.ApplyTriples(ctx, "graph", triples[i:min(i+40, len(triples))], int64(i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	names := []string{"alice", "Ally", "Bob", "Carol Quill", "Cee", "Zorblax", "Lisbon", "Dune", "nobody"}
	asOfs := []time.Time{{}, time.Date(2026, 4, 20, 0, 0, 0, 0, time.UTC), time.Date(2026, 5, 15, 0, 0, 0, 0, time.UTC)}
	compare := func(when string) {
		t.Helper()
		var reads []struct {
			what string
			read func(graphPalace) (any, error)
		}
		add := func(what string, read func(graphPalace) (any, error)) {
			reads = append(reads, struct {
				what string
				read func(graphPalace) (any, error)
			}{what, read})
		}
		add("Stats", func(p graphPalace) (any, error) { return p.Stats(ctx) })
		add("TriplesSince", func(p graphPalace) (any, error) {
			ts, err := p.TriplesSince(ctx, 0, 100_000)
			return byID(ts), err
		})
		for _, ns := range []string{"work", "home"} {
			for _, name := range names {
				for _, at := range asOfs {
					add("Graph("+ns+", "+name+", "+at.String()+")", func(p graphPalace) (any, error) {
						res, err := p.Graph(ctx, engram.GraphQuery{Namespace: ns, Entity: name, AsOf: at, Limit: 1000})
						res.Triples = byID(res.Triples)
						return res, ignoreNotFound(err)
					})
				}
				add("Graph timeline("+ns+", "+name+")", func(p graphPalace) (any, error) {
					res, err := p.Graph(ctx, engram.GraphQuery{Namespace: ns, Entity: name, Timeline: true, Limit: 1000})
					res.Triples = byID(res.Triples)
					return res, ignoreNotFound(err)
				})
			}
			add("EntityTriples("+ns+")", func(p graphPalace) (any, error) {
				ts, err := p.EntityTriples(ctx, ns, names, asOfs[1], 1000)
				return byID(ts), err
			})
			for _, prefix := range []string{"", "a", "zor", "the", "c"} {
				add("Entities("+ns+", "+prefix+")", func(p graphPalace) (any, error) {
					es, err := p.Entities(ctx, engram.EntityQuery{Namespace: ns, Prefix: prefix, Limit: 1000})
					for i := range es {
						slices.Sort(es[i].Aliases)
					}
					slices.SortFunc(es, func(a, b engram.EntityCount) int { return cmp.Or(b.Triples-a.Triples, strings.Compare(a.Name, b.Name)) })
					return es, err
				})
			}
		}
		for _, c := range reads {
			sameRead(t, when, c.what, graphPalace(pg), graphPalace(lite), c.read)
		}
		for _, text := range []string{"lisbon", "alice likes", "zorblax", "favourite book dune", "visits harbour", "nothing"} {
			for _, at := range asOfs[1:] {
				for _, q := range []engram.TextQuery{{Text: text, Limit: 5}, {Text: text, Namespace: "home", Limit: 50}} {
					want, err := lite.SearchTriples(ctx, q, at)
					if err != nil {
						t.Fatal(err)
					}
					got, err := pg.SearchTriples(ctx, q, at)
					if err != nil || !sameTripleHits(got, want) {
						t.Errorf("%s: SearchTriples(%+v, %s) = %v, %v\nwant %v", when, q, at, tripleHits(got), err, tripleHits(want))
					}
				}
			}
		}
	}
	compare("applied")
	if ts, _ := lite.TriplesSince(ctx, 0, 100_000); len(ts) < 50 {
		t.Fatalf("only %d triples", len(ts))
	}

	var forget []engram.ForgetTurn
	for i, tu := range turns {
		if i%5 == 2 {
			forget = append(forget, engram.ForgetTurn{ID: tu.ID, Seq: int64(len(turns) + i + 1)})
		}
	}
	var fres []engram.ForgetResult
	for _, p := range palaces {
		res, err := p.ForgetTurns(ctx, forget, time.Now(), nil)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(res.Removed)
		fres = append(fres, res)
	}
	if !reflect.DeepEqual(fres[0], fres[1]) || fres[0].Facts == 0 {
		t.Errorf("ForgetTurns = %+v\nthe SQLite palace's %+v", fres[0], fres[1])
	}
	if es, _ := pg.Entities(ctx, engram.EntityQuery{Prefix: "solo"}); len(es) != 0 {
		t.Errorf("an entity only forgotten facts named is still listed: %+v", es)
	}
	compare("after a forget")

	var red []engram.Turn
	for i, tu := range turns {
		if i%5 != 2 && i%3 == 0 {
			tu.Content += " [redacted]"
			red = append(red, tu)
		}
	}
	var rres []engram.RedactResult
	for _, p := range palaces {
		res, err := p.RedactTurns(ctx, red, []string{"Zorblax"}, "[redacted]")
		if err != nil {
			t.Fatal(err)
		}
		rres = append(rres, res)
	}
	if rres[0].Entities != rres[1].Entities || rres[0].Entities == 0 {
		t.Errorf("RedactTurns changed %d entities; the SQLite palace %d", rres[0].Entities, rres[1].Entities)
	}
	compare("after a redaction")
}

// byID is triples sorted by id, their change numbers cleared: this
// palace gives a new one only to a triple that changed.
func byID(ts []engram.Triple) []engram.Triple {
	ts = slices.Clone(ts)
	for i := range ts {
		ts[i].Seq = 0
	}
	slices.SortFunc(ts, func(a, b engram.Triple) int { return strings.Compare(a.ID, b.ID) })
	return ts
}

func ignoreNotFound(err error) error {
	if engram.ErrorCode(err) == engram.ENOTFOUND {
		return nil
	}
	return err
}

// sameTripleHits compares two searches of triples: the same scores, and
// the same triples but where they tie with the last one's score. Ties
// come in either palace's row order, and rows of the same triple are
// numbered apart: package palace numbers every triple of a chain it
// rebuilds again, this palace only those that changed.
func sameTripleHits(a, b []engram.TripleHit) bool {
	if len(a) != len(b) {
		return false
	}
	near := func(x, y float64) bool { return math.Abs(x-y) <= 1e-9*math.Max(1, math.Abs(y)) }
	order := func(h []engram.TripleHit) []engram.TripleHit {
		h = slices.Clone(h)
		for i := range h {
			h[i].Triple.Seq = 0
		}
		slices.SortFunc(h, func(x, y engram.TripleHit) int {
			if !near(x.Score, y.Score) {
				return cmp.Compare(y.Score, x.Score)
			}
			return strings.Compare(x.Triple.ID, y.Triple.ID)
		})
		return h
	}
	a, b = order(a), order(b)
	for i := range a {
		if !near(a[i].Score, b[i].Score) {
			return false
		}
		if !near(a[i].Score, b[len(b)-1].Score) && !reflect.DeepEqual(a[i].Triple, b[i].Triple) {
			return false
		}
	}
	return true
}

func tripleHits(hs []engram.TripleHit) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.Triple.Sentence()+" "+strings.TrimRight(strings.TrimRight(time.Duration(h.Score*1e9).String(), "s"), "0"))
	}
	return out
}

// TestLayers_FollowOtherServer checks that a server's keyword indexes of
// the scenes, the triples and the memories (and the vaults' chunks),
// loaded already, find what another server wrote since, rewrote, and
// deleted, at their next search.
func TestLayers_FollowOtherServer(t *testing.T) {
	ctx := t.Context()
	url := pgtest.NewDatabase(t)
	a, b := openAt(t, url), openAt(t, url)
	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	tu := engram.Turn{ID: "t1", Seq: 1, Namespace: "ns", Session: "s", Role: engram.RoleUser, Content: "the gazebo", TS: at}
	if err := a.PutTurns(ctx, []engram.Turn{tu}); err != nil {
		t.Fatal(err)
	}
	if err := b.LoadKeywordIndex(ctx); err != nil {
		t.Fatal(err)
	}
	scene := engram.Scene{ID: "sc1", Namespace: "ns", Session: "s", Title: "the gazebo", Summary: "a roof", Start: at, End: at, Turns: []string{"t1"}}
	if err := a.PutScenes(ctx, "scenes", []engram.SceneWrite{{Scene: scene}}, 1); err != nil {
		t.Fatal(err)
	}
	if err := a.ApplyTriples(ctx, "graph", []engram.Triple{{Namespace: "ns", Subject: "Ana", Predicate: "lives_in", Object: "Gazebo Row",
		ValidFrom: at, Sources: []string{"t1"}}}, 1); err != nil {
		t.Fatal(err)
	}
	mem := func(id, text string) engram.Memory {
		return engram.Memory{ID: id, Namespace: "ns", Type: "fact", Text: text, TS: at, Sources: []string{"t1"}}
	}
	if _, err := a.PutMemories(ctx, "memories", []engram.Memory{mem("m1", "the gazebo roof leaks")}, 1); err != nil {
		t.Fatal(err)
	}
	found := func(text string) (scenes, triples int) {
		t.Helper()
		mh, err := b.SearchMemories(ctx, engram.TextQuery{Text: text, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]int{"gazebo": 1, "pergola": 1}[text]; len(mh) != want {
			t.Fatalf("server B finds %d memories holding %q; want %d", len(mh), text, want)
		}
		sh, err := b.SearchScenes(ctx, engram.TextQuery{Text: text, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		th, err := b.SearchTriples(ctx, engram.TextQuery{Text: text, Limit: 10}, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		return len(sh), len(th)
	}
	doc := engram.VaultDoc{Vault: "/v", Namespace: "ns", Path: "a.md", Title: "Gazebo", Hash: "h", ModTime: at}
	if err := a.Vault(nil).PutVaultDoc(ctx, doc, []engram.DocChunk{{Text: "the gazebo plans"}}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if hits, err := b.Vault(nil).SearchChunks(ctx, engram.TextQuery{Text: "gazebo plans", Limit: 5}); err != nil || len(hits) != 1 {
		t.Fatalf("server B finds %d chunks A wrote, %v; want 1", len(hits), err)
	}
	if s, tr := found("gazebo"); s != 1 || tr != 1 {
		t.Fatalf("server B finds %d scenes and %d triples A wrote; want 1 and 1", s, tr)
	}
	if _, err := a.PutMemories(ctx, "memories", []engram.Memory{mem("m2", "the pergola is new")}, 2); err != nil {
		t.Fatal(err)
	}
	scene.Title = "the pergola"
	if err := a.PutScenes(ctx, "scenes", []engram.SceneWrite{{Scene: scene}}, 2); err != nil {
		t.Fatal(err)
	}
	if err := a.ApplyTriples(ctx, "graph", []engram.Triple{{Namespace: "ns", Subject: "Ana", Predicate: "lives_in", Object: "Pergola Lane",
		ValidFrom: at.Add(time.Hour), Sources: []string{"t1"}}}, 2); err != nil {
		t.Fatal(err)
	}
	if s, tr := found("pergola"); s != 1 || tr != 1 {
		t.Fatalf("server B finds %d scenes and %d triples of A's rewrite; want 1 and 1", s, tr)
	}
	if _, err := a.ForgetTurns(ctx, []engram.ForgetTurn{{ID: "t1", Seq: 2}}, at, nil); err != nil {
		t.Fatal(err)
	}
	if s, tr := found("pergola gazebo"); s != 0 || tr != 0 {
		t.Fatalf("server B finds %d scenes and %d triples after A forgot their turn; want none", s, tr)
	}
}
