package palace

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	engram "github.com/engram-dev/engram"
)

var day0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

func day(n int) time.Time { return day0.AddDate(0, 0, n) }

func mem(id, typ, subject, text string, at time.Time, src string, rel *engram.Relation) engram.Memory {
	return engram.Memory{ID: id, Namespace: "default", Type: typ, Subject: subject, Text: text, Importance: 0.6,
		TS: at, ValidFrom: at, Sources: []string{src}, Relation: rel}
}

func rel(s, p, o string) *engram.Relation {
	return &engram.Relation{Subject: s, Predicate: p, Object: o}
}

func TestPutMemories_MergeAndSupersede(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	mems := []engram.Memory{
		mem("m1", engram.MemoryFact, "Alice", "Alice lives in Paris", day(0), "t1", rel("Alice", "lives_in", "Paris")),
		mem("m2", engram.MemoryFact, "Alice", "alice lives in paris.", day(1), "t2", rel("Alice", "lives_in", "Paris")),        // exact near-dup
		mem("m3", engram.MemoryDecision, "Bob", "Bob decided to use Postgres for the billing service", day(1), "t3", nil),      // unrelated
		mem("m4", engram.MemoryDecision, "Bob", "Bob decided to use Postgres for billing service today", day(2), "t4", nil),    // Jaccard near-dup
		mem("m5", engram.MemoryFact, "Alice", "Alice lives in Berlin", day(5), "t5", rel("Alice", "lives_in", "Berlin")),       // supersedes m1
		mem("m6", engram.MemoryFact, "Alice", "Alice lives in Rome", day(-3), "t6", rel("Alice", "lives_in", "Rome")),          // older: itself superseded
		mem("m7", engram.MemoryPreference, "Alice", "Alice likes jazz", day(1), "t7", rel("Alice", "likes", "jazz")),           // multi-valued
		mem("m8", engram.MemoryPreference, "Alice", "Alice doesn't like jazz", day(9), "t8", rel("Alice", "dislikes", "Jazz")), // supersedes m7
	}
	res, err := db.PutMemories(ctx, "w", mems, 8)
	if err != nil {
		t.Fatal(err)
	}
	if res.Inserted != 6 || res.Merged != 2 {
		t.Errorf("result %+v, want 6 inserted and 2 merged", res)
	}
	all, err := db.Memories(ctx, engram.MemoryQuery{Superseded: true, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]engram.Memory{}
	for _, m := range all {
		byID[m.ID] = m
	}
	if len(byID) != 6 {
		t.Fatalf("stored %d memories, want 6: %v", len(byID), all)
	}
	if got := byID["m1"].Sources; !slices.Equal(got, []string{"t1", "t2"}) {
		t.Errorf("m1 sources %v, want the merged t1, t2", got)
	}
	if got := byID["m3"].Sources; !slices.Equal(got, []string{"t3", "t4"}) {
		t.Errorf("m3 sources %v, want the merged t3, t4", got)
	}
	for id, want := range map[string]string{"m1": "m5", "m6": "m5", "m7": "m8", "m5": "", "m8": ""} {
		if got := byID[id].SupersededBy; got != want {
			t.Errorf("%s superseded by %q, want %q", id, got, want)
		}
	}
	active, err := db.Memories(ctx, engram.MemoryQuery{Subject: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range active {
		ids = append(ids, m.ID)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"m5", "m8"}) {
		t.Errorf("active memories of Alice %v, want m5 m8", ids)
	}
	// Replaying the batch changes nothing.
	before, _ := db.MemorySeq(ctx)
	if _, err := db.PutMemories(ctx, "w", mems, 8); err != nil {
		t.Fatal(err)
	}
	if after, _ := db.MemorySeq(ctx); after != before {
		t.Errorf("replay moved the change number from %d to %d", before, after)
	}
	if seq, _ := db.WorkerSeq(ctx, "w"); seq != 8 {
		t.Errorf("watermark %d, want 8", seq)
	}
	hits, err := db.SearchMemories(ctx, engram.TextQuery{Text: "postgres billing", Limit: 5})
	if err != nil || len(hits) != 1 || hits[0].Memory.ID != "m3" {
		t.Errorf("search: %v %v", hits, err)
	}
}

func TestPutMemories_Invalid(t *testing.T) {
	db := MustOpenDB(t)
	_, err := db.PutMemories(context.Background(), "w", []engram.Memory{{ID: "x", Namespace: "default", Type: "fact"}}, 1)
	var e *engram.Error
	if !errors.As(err, &e) || e.Code != engram.EINVALID || e.Field != "memories[0].text" {
		t.Fatalf("err = %v, want EINVALID on memories[0].text", err)
	}
	if seq, _ := db.WorkerSeq(context.Background(), "w"); seq != 0 {
		t.Errorf("a refused batch moved the watermark to %d", seq)
	}
}

func triple(s, p, o string, at time.Time, src string) engram.Triple {
	return engram.Triple{Namespace: "default", Subject: s, Predicate: p, Object: o, ValidFrom: at, Sources: []string{src}}
}

// graphState is the whole graph as comparable text.
func graphState(t *testing.T, db *DB, entities ...string) []string {
	t.Helper()
	var out []string
	for _, e := range entities {
		g, err := db.Graph(context.Background(), engram.GraphQuery{Entity: e, Timeline: true})
		if err != nil {
			t.Fatalf("graph %s: %v", e, err)
		}
		for _, tr := range g.Triples {
			out = append(out, tr.Subject+" "+tr.Predicate+" "+tr.Object+" "+tr.ValidFrom.Format(time.DateOnly)+".."+
				tr.ValidTo.Format(time.DateOnly)+" "+slices.Concat(tr.Sources, nil)[0])
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func TestGraph_SupersessionAndAsOf(t *testing.T) {
	ctx := context.Background()
	triples := []engram.Triple{
		triple("Alice", "lives_in", "Paris", day(0), "t1"),
		triple("alice", "lives_in", "Berlin", day(10), "t2"),
		triple("ALICE", "lives_in", "Paris", day(20), "t3"),
		triple("Alice", "works_at", "Acme", day(2), "t4"),
		triple("Alice", "likes", "jazz", day(1), "t5"),
		triple("Alice", "dislikes", "Jazz", day(15), "t6"),
		triple("Alice", "uses", "Go", day(3), "t7"),
		triple("Alice", "uses", "go", day(1), "t8"),
		triple("Alice", "name", "Ally", day(0), "t9"),
	}
	db := MustOpenDB(t)
	if err := db.ApplyTriples(ctx, "g", triples, 9); err != nil {
		t.Fatal(err)
	}
	at := func(d int) []string {
		g, err := db.Graph(ctx, engram.GraphQuery{Entity: "ally", AsOf: day(d)}) // by alias
		if err != nil {
			t.Fatal(err)
		}
		if g.Entity.Name != "Alice" {
			t.Fatalf("entity %q, want Alice", g.Entity.Name)
		}
		var out []string
		for _, tr := range g.Triples {
			if tr.Predicate != "name" {
				out = append(out, tr.Predicate+" "+tr.Object)
			}
		}
		slices.Sort(out)
		return out
	}
	for _, c := range []struct {
		day  int
		want []string
	}{
		{1, []string{"likes Jazz", "lives_in Paris", "uses Go"}},
		{5, []string{"likes Jazz", "lives_in Paris", "uses Go", "works_at Acme"}},
		{12, []string{"likes Jazz", "lives_in Berlin", "uses Go", "works_at Acme"}},
		{16, []string{"dislikes Jazz", "lives_in Berlin", "uses Go", "works_at Acme"}},
		{25, []string{"dislikes Jazz", "lives_in Paris", "uses Go", "works_at Acme"}},
	} {
		if got := at(c.day); !slices.Equal(got, c.want) {
			t.Errorf("as of day %d: %v, want %v", c.day, got, c.want)
		}
	}
	want := graphState(t, db, "Alice")
	// Any order, and every triple twice, gives the same graph.
	for i := range 5 {
		shuffled := slices.Concat(triples, triples)
		r := rand.New(rand.NewPCG(uint64(i), 7))
		r.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
		other := MustOpenDB(t)
		for _, tr := range shuffled {
			if err := other.ApplyTriples(ctx, "g", []engram.Triple{tr}, 1); err != nil {
				t.Fatal(err)
			}
		}
		if got := graphState(t, other, "Alice"); !slices.Equal(got, want) {
			t.Errorf("order %d:\n got %v\nwant %v", i, got, want)
		}
	}
	// A batch split into a transaction a triple (as when the turn index
	// keeps queueing for the writer: ApplyTriples gives way) makes the same
	// graph and moves the watermark once, at its end.
	split := MustOpenDB(t)
	split.splitWrites = true
	if err := split.ApplyTriples(ctx, "g", slices.Concat(triples, triples), 9); err != nil {
		t.Fatal(err)
	}
	if got := graphState(t, split, "Alice"); !slices.Equal(got, want) {
		t.Errorf("split:\n got %v\nwant %v", got, want)
	}
	if seq, err := split.WorkerSeq(ctx, "g"); err != nil || seq != 9 {
		t.Errorf("split: worker seq %d (%v), want 9", seq, err)
	}
	if _, err := db.Graph(ctx, engram.GraphQuery{Entity: "Nobody"}); engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Errorf("unknown entity: %v, want ENOTFOUND", err)
	}
}

func TestPersona_History(t *testing.T) {
	ctx := context.Background()
	ups := []engram.FacetUpdate{
		{Namespace: "default", Speaker: "Alice", Facet: engram.FacetIdentity, Key: "lives_in", Value: "Paris", At: day(0), Evidence: []string{"t1"}},
		{Namespace: "default", Speaker: "Alice", Facet: engram.FacetIdentity, Key: "lives_in", Value: "Berlin", At: day(10), Evidence: []string{"t2"}},
		{Namespace: "default", Speaker: "Alice", Facet: engram.FacetIdentity, Key: "lives_in", Value: "Berlin", At: day(12), Evidence: []string{"t3"}},
		{Namespace: "default", Speaker: "Alice", Facet: engram.FacetPreference, Key: "jazz", Value: "likes", At: day(1), Evidence: []string{"t4"}},
	}
	var want []engram.Persona
	for i := range 4 {
		db := MustOpenDB(t)
		order := slices.Clone(ups)
		rand.New(rand.NewPCG(uint64(i), 1)).Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
		if err := db.ApplyFacets(ctx, "p", slices.Concat(order, order), 4); err != nil {
			t.Fatal(err)
		}
		got, err := db.Persona(ctx, "", "alice")
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			want = got
			if len(got) != 1 || len(got[0].Facets) != 2 {
				t.Fatalf("persona %+v", got)
			}
			f := got[0].Facets[0]
			if f.Key != "jazz" {
				f = got[0].Facets[1]
			}
			home := got[0].Facets[0]
			if home.Key != "lives_in" {
				home = got[0].Facets[1]
			}
			if home.Value != "Berlin" || !home.Since.Equal(day(10)) || !slices.Equal(home.Evidence, []string{"t2", "t3"}) ||
				len(home.History) != 1 || home.History[0].Value != "Paris" || !home.History[0].To.Equal(day(10)) {
				t.Errorf("lives_in facet %+v", home)
			}
			continue
		}
		if !samePersona(got, want) {
			t.Errorf("order %d gave %+v, want %+v", i, got, want)
		}
	}
}

func samePersona(a, b []engram.Persona) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i].Facets) != len(b[i].Facets) {
			return false
		}
		for j, f := range a[i].Facets {
			g := b[i].Facets[j]
			if f.Key != g.Key || f.Value != g.Value || !f.Since.Equal(g.Since) || !slices.Equal(f.Evidence, g.Evidence) || len(f.History) != len(g.History) {
				return false
			}
		}
	}
	return true
}

func TestScenes_PutAndSearch(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	s := engram.Scene{ID: "scn-1", Namespace: "default", Session: "s1", Title: "Postgres migration", Summary: "Alice: we move billing to Postgres",
		Start: day(0), End: day(0).Add(time.Hour), Participants: []string{"Alice"}, Turns: []string{"t1", "t2"}}
	if err := db.PutScenes(ctx, "s", []engram.SceneWrite{{Scene: s, Draft: []byte(`{"x":1}`)}}, 2); err != nil {
		t.Fatal(err)
	}
	open, err := db.OpenScenes(ctx, []engram.SessionKey{{Namespace: "default", Session: "s1"}, {Namespace: "default", Session: "none"}})
	if err != nil || len(open) != 1 {
		t.Fatalf("open scenes %v %v", open, err)
	}
	s.Title = "Billing on Postgres"
	s.Turns = append(s.Turns, "t3")
	if err := db.PutScenes(ctx, "s", []engram.SceneWrite{{Scene: s}}, 3); err != nil {
		t.Fatal(err)
	}
	if open, _ := db.OpenScenes(ctx, []engram.SessionKey{{Namespace: "default", Session: "s1"}}); len(open) != 0 {
		t.Errorf("closed scene still open")
	}
	hits, err := db.SearchScenes(ctx, engram.TextQuery{Text: "billing postgres", Limit: 3})
	if err != nil || len(hits) != 1 || len(hits[0].Scene.Turns) != 3 || hits[0].Scene.Title != "Billing on Postgres" {
		t.Fatalf("search: %+v %v", hits, err)
	}
	if hits, _ := db.SearchScenes(ctx, engram.TextQuery{Text: "migration"}); len(hits) != 0 {
		t.Errorf("the old title is still indexed: %+v", hits)
	}
}

func TestSearchTriples(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	if err := db.ApplyTriples(ctx, "g", []engram.Triple{
		triple("Alice", "lives_in", "Paris", day(0), "t1"),
		triple("Alice", "lives_in", "Berlin", day(10), "t2"),
		triple("Bob", "works_at", "Acme", day(2), "t3"),
	}, 3); err != nil {
		t.Fatal(err)
	}
	hits, err := db.SearchTriples(ctx, engram.TextQuery{Text: "where does alice live", Limit: 5}, day(5))
	if err != nil || len(hits) != 1 || hits[0].Triple.Object != "Paris" {
		t.Fatalf("as of day 5: %+v %v", hits, err)
	}
	hits, err = db.SearchTriples(ctx, engram.TextQuery{Text: "alice lives", Limit: 5}, day(20))
	if err != nil || len(hits) != 1 || hits[0].Triple.Object != "Berlin" {
		t.Fatalf("as of day 20: %+v %v", hits, err)
	}
	all, err := db.TriplesSince(ctx, 0, 100)
	if err != nil || len(all) != 3 {
		t.Fatalf("triples since 0: %+v %v", all, err)
	}
	got, err := db.GetTriples(ctx, []string{all[2].ID, "nope", all[0].ID})
	if err != nil || len(got) != 2 || got[0].ID != all[2].ID {
		t.Fatalf("get triples: %+v %v", got, err)
	}
	// The triples a new statement rebuilds take new change numbers, so
	// embedding sees them again: the one it closes and its own; the ones
	// before keep theirs.
	last := all[len(all)-1].Seq
	if err := db.ApplyTriples(ctx, "g", []engram.Triple{triple("Alice", "lives_in", "Rome", day(30), "t4")}, 4); err != nil {
		t.Fatal(err)
	}
	changed, err := db.TriplesSince(ctx, last, 100)
	if err != nil || len(changed) != 2 || changed[0].Object != "Berlin" || changed[0].ValidTo.IsZero() || changed[1].Object != "Rome" {
		t.Fatalf("after a change to Alice's home, triples changed %+v (%v), want Berlin closed and Rome", changed, err)
	}
}

// TestCorrectionFollowsReextraction: a memory correction is matched by its
// namespace, type and extracted text as well as by the memory's id, so it
// holds when the memory is extracted again under another id (another
// extractor, other sources), whether the correction was applied before the
// memory came (a rebuild applies the journal first) or after.
func TestCorrectionFollowsReextraction(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	cor := engram.Correction{ID: "cor-1", Target: engram.CorrectMemory, Of: "m-old", Text: "Ana lives in Porto",
		Namespace: "default", Type: engram.MemoryFact, Original: "Ana lives in Lisbon"}
	check := func(t *testing.T, db *DB, id string) {
		t.Helper()
		mems, err := db.Memories(ctx, engram.MemoryQuery{Namespace: "default", Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mems {
			if m.ID == id {
				if m.Text != "Ana lives in Porto" || m.Extracted != "Ana lives in Lisbon" {
					t.Errorf("memory %s: text %q, extracted %q; want the correction over the extracted text", id, m.Text, m.Extracted)
				}
				return
			}
		}
		t.Fatalf("memory %s not found: %+v", id, mems)
	}
	t.Run("correction first", func(t *testing.T) {
		db := MustOpenDB(t)
		if _, err := db.ApplyCorrections(ctx, []engram.Correction{cor}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.PutMemories(ctx, "l1", []engram.Memory{mem("m-new", engram.MemoryFact, "Ana", "Ana lives in Lisbon", at, "t2", nil)}, 1); err != nil {
			t.Fatal(err)
		}
		check(t, db, "m-new")
	})
	t.Run("memory first", func(t *testing.T) {
		db := MustOpenDB(t)
		if _, err := db.PutMemories(ctx, "l1", []engram.Memory{mem("m-new", engram.MemoryFact, "Ana", "Ana lives in Lisbon", at, "t2", nil)}, 1); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ApplyCorrections(ctx, []engram.Correction{cor}); err != nil {
			t.Fatal(err)
		}
		check(t, db, "m-new")
	})
}
