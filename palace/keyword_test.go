package palace

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/kwindex"
	"github.com/engram-dev/engram/internal/testutil"
)

// kwCorpus makes n turns of words drawn with Zipf frequencies from a small
// vocabulary (so that most queries match many turns, with repeated words
// and ties), in three namespaces, some without a time, with speakers whose
// names are words of the text too, and some words inflected.
func kwCorpus(n int, seed uint64) []engram.Turn {
	words := strings.Fields(`the we decided to use postgres for the database migration release
		review meeting kafka cluster backup cache latency incident rollback deploy deploying deployed
		caresses ponies agreed hopping relational generalizations café naïve Zürich 数据库 東京 会議
		alice bob carol port 5432 friday evening dinner family hiking guitar`)
	speakers := []string{"Alice", "Bob", "Carol Cache", ""}
	rng := rand.New(rand.NewPCG(seed, 7))
	zipf := rand.NewZipf(rng, 1.2, 3, uint64(len(words)-1))
	turns := make([]engram.Turn, n)
	for i := range turns {
		w := make([]string, 3+rng.IntN(25))
		for j := range w {
			w[j] = words[zipf.Uint64()]
		}
		t := testTurn(int64(i+1), strings.Join(w, " "))
		t.Namespace = []string{"default", "work", "home"}[rng.IntN(3)]
		t.Session = fmt.Sprintf("s%d-%d", seed, i/25)
		t.Speaker = speakers[rng.IntN(len(speakers))]
		if rng.IntN(10) == 0 {
			t.TS = time.Time{}
		}
		turns[i] = t
	}
	return turns
}

var kwQueries = []string{
	"decided database migration", "kafka cluster backup", "the release review meeting",
	"deploy", "deployed deploying", "alice cache", "carol", "ponies caresses agreed",
	"café naive zurich", "数据库", "東京の会議", "port 5432", "nothing matches this", "friday family dinner hiking guitar bob",
}

// TestKeywordIndex_SameAsFTS checks that the in-memory keyword index ranks
// as turns_fts does: the same turns with the same scores, for every query,
// filter and limit, after ingest, forget, redaction and more ingest.
func TestKeywordIndex_SameAsFTS(t *testing.T) {
	testutil.LongRun(t)
	ctx := context.Background()
	mem, fts := twoHandles(t) // fts never loads the index
	turns := kwCorpus(800, 1)
	mustPut(t, mem, turns[:500]...)
	putKWScenes(t, mem, turns[:500])
	putKWMemories(t, mem, turns[:500])
	if err := mem.LoadKeywordIndex(ctx); err != nil {
		t.Fatal(err)
	}
	compareKeyword(t, mem, fts, "after the load")

	mustPut(t, mem, turns[500:]...)
	putKWScenes(t, mem, turns[500:])
	putKWMemories(t, mem, turns[500:])
	compareKeyword(t, mem, fts, "after more turns")

	// Corrections: memories marked wrong (left out of searches, still
	// counted in the statistics) and memories given another text.
	var cors []engram.Correction
	for i := 3; i < len(turns); i += 41 {
		c := engram.Correction{ID: fmt.Sprintf("cor-%d", i), Target: engram.CorrectMemory, Of: "mem-" + turns[i].ID,
			Namespace: turns[i].Namespace, Type: engram.MemoryFact, Original: turns[i].Content, Sources: []string{turns[i].ID}}
		if i%2 == 0 {
			c.Wrong = true
		} else {
			c.Text = "corrected: the kafka cluster moved to zurich"
		}
		cors = append(cors, c)
	}
	if n, err := mem.ApplyCorrections(ctx, cors); err != nil || n == 0 {
		t.Fatalf("corrections: %d applied, %v", n, err)
	}
	compareKeyword(t, mem, fts, "after corrections")

	forgetEvery(t, mem, turns, 5, 37)

	var red []engram.Turn
	for i := 11; i < len(turns); i += 53 {
		r := turns[i]
		r.Content = strings.ReplaceAll(r.Content, "kafka", "[redacted]")
		red = append(red, r)
	}
	if _, err := mem.RedactTurns(ctx, red, []string{"kafka"}, "[redacted]"); err != nil {
		t.Fatal(err)
	}
	compareKeyword(t, mem, fts, "after a forget and a redaction")

	more := kwCorpus(200, 2)
	for i := range more {
		more[i].Seq += 800
		more[i].ID = fmt.Sprintf("m%d", i)
	}
	mustPut(t, mem, more...)
	compareKeyword(t, mem, fts, "after ingest again")
	for i, name := range []string{"units", "scenes", "memories"} {
		if a, b := mem.seqIndexes()[i].Info().Ranked, fts.seqIndexes()[i].Info().Ranked; a == 0 || b != 0 {
			t.Fatalf("the %s' index answered %d searches, on the FTS5 handle %d", name, a, b)
		}
	}
	if !mem.kw.Loaded() || fts.kw.Loaded() {
		t.Fatal("the index is not loaded where it should be, or is where it should not")
	}
}

// putKWScenes stores a scene of every 10 turns.
func putKWScenes(tb testing.TB, db *DB, turns []engram.Turn) {
	tb.Helper()
	var writes []engram.SceneWrite
	for i := 0; i < len(turns); i += 10 {
		part := turns[i:min(i+10, len(turns))]
		// A title and a summary of the turns' words, so that the scenes'
		// keyword search has something to rank.
		sc := engram.Scene{ID: "sc-" + part[0].ID, Namespace: part[0].Namespace, Session: part[0].Session,
			Title:   strings.Join(strings.Fields(part[0].Content)[:min(3, len(strings.Fields(part[0].Content)))], " "),
			Summary: part[len(part)-1].Content, Participants: []string{part[0].Speaker}, Start: part[0].TS, End: part[len(part)-1].TS}
		for _, t := range part {
			if t.Namespace == sc.Namespace && t.Session == sc.Session {
				sc.Turns = append(sc.Turns, t.ID)
			}
		}
		writes = append(writes, engram.SceneWrite{Scene: sc})
	}
	if err := db.PutScenes(context.Background(), "test-scenes", writes, turns[len(turns)-1].Seq); err != nil {
		tb.Fatal(err)
	}
}

// putKWMemories stores a memory of every third turn, its text the turn's:
// some of them a relation with a single-valued predicate, so that later
// ones supersede earlier ones of the same speaker.
func putKWMemories(tb testing.TB, db *DB, turns []engram.Turn) {
	tb.Helper()
	var mems []engram.Memory
	for i := 0; i < len(turns); i += 3 {
		tr := turns[i]
		m := engram.Memory{ID: "mem-" + tr.ID, Namespace: tr.Namespace, Type: engram.MemoryFact, Subject: tr.Speaker,
			Text: tr.Content, Importance: 0.5, TS: tr.TS, Sources: []string{tr.ID}}
		if i%2 == 0 {
			m.Rationale = "said by " + tr.Speaker
			m.Entities = []string{tr.Speaker}
		}
		if i%5 == 0 && tr.Speaker != "" {
			words := strings.Fields(tr.Content)
			m.Relation = &engram.Relation{Subject: tr.Speaker, Predicate: "lives_in", Object: words[len(words)-1]}
		}
		mems = append(mems, m)
	}
	if _, err := db.PutMemories(context.Background(), "test-memories", mems, turns[len(turns)-1].Seq); err != nil {
		tb.Fatal(err)
	}
}

// kwMemoriesAgain is putKWMemories' memories again, each with a second
// source (the next turn): written, each takes a change number.
func kwMemoriesAgain(turns []engram.Turn) []engram.Memory {
	var again []engram.Memory
	for i := 0; i+1 < len(turns); i += 3 {
		again = append(again, engram.Memory{ID: "mem-" + turns[i].ID, Namespace: turns[i].Namespace, Type: engram.MemoryFact,
			Subject: turns[i].Speaker, Text: turns[i].Content, Importance: 0.5, TS: turns[i].TS, Sources: []string{turns[i].ID, turns[i+1].ID}})
	}
	return again
}

// compareKeyword runs every query on both databases (mem ranking from the
// keyword indexes, fts with FTS5) and reports any difference: turns by
// SearchTurns, units by SearchUnits and ScoreUnits.
func compareKeyword(t *testing.T, mem, fts *DB, when string) {
	t.Helper()
	ctx := context.Background()
	from := time.Date(2026, 5, 1, 20, 0, 0, 0, time.UTC)
	to := from.Add(30 * time.Hour)
	used := 0
	for _, q := range kwQueries {
		for _, tq := range []engram.TextQuery{
			{Text: q, Limit: 30},
			{Text: q, Limit: 10, Namespace: "work", From: from},
			{Text: q, Limit: 5, Namespace: "home", To: to},
		} {
			before := memRanked(mem)
			a, err := mem.SearchTurns(ctx, tq)
			if err != nil {
				t.Fatal(err)
			}
			if memRanked(mem) > before {
				used++
			}
			b, err := fts.SearchTurns(ctx, tq)
			if err != nil {
				t.Fatal(err)
			}
			if msg := sameHits(a, b); msg != "" {
				t.Errorf("%s, query %+v: %s", when, tq, msg)
			}
			ua, ub := both(t, mem, fts, func(db *DB) ([]engram.UnitHit, error) { return db.SearchUnits(ctx, tq, "") })
			if msg := sameUnitHits(ua, ub, tq.Limit); msg != "" {
				t.Errorf("%s, units of query %+v: %s", when, tq, msg)
			}
			var ids []string
			for i, h := range ub {
				if i%2 == 0 {
					ids = append(ids, h.Unit.ID)
				}
			}
			ids = append(ids, "no-such-unit")
			sa, sb := both(t, mem, fts, func(db *DB) ([]engram.UnitHit, error) { return unitScoreHits(db.ScoreUnits(ctx, tq, ids, "")) })
			if msg := sameUnitHits(sa, sb, 0); msg != "" {
				t.Errorf("%s, unit scores of query %+v: %s", when, tq, msg)
			}
			ca, cb := both(t, mem, fts, func(db *DB) ([]engram.SceneHit, error) { return db.SearchScenes(ctx, tq) })
			if msg := sameSceneHits(ca, cb, tq.Limit); msg != "" {
				t.Errorf("%s, scenes of query %+v: %s", when, tq, msg)
			}
			ma, mb := both(t, mem, fts, func(db *DB) ([]engram.MemoryHit, error) { return db.SearchMemories(ctx, tq) })
			if msg := sameMemoryHits(ma, mb, tq.Limit); msg != "" {
				t.Errorf("%s, memories of query %+v: %s", when, tq, msg)
			}
		}
	}
	if used == 0 {
		t.Errorf("%s: no query was ranked by the keyword index", when)
	}
}

// memRanked counts the searches the keyword index answered.
func memRanked(db *DB) int64 { return db.kw.Ranked() }

// sameHits compares two rankings: the same scores, and the same turns but
// for those tied with the last one (either may be cut off at the limit).
func sameHits(a, b []engram.TurnHit) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%d hits, FTS5 %d", len(a), len(b))
	}
	if len(a) == 0 {
		return ""
	}
	last := b[len(b)-1].Score
	key := func(hs []engram.TurnHit) []string {
		var out []string
		for _, h := range hs {
			if math.Abs(h.Score-last) > 1e-9*math.Abs(last) {
				out = append(out, fmt.Sprintf("%d %.12f", h.Turn.Seq, h.Score))
			}
		}
		slices.Sort(out)
		return out
	}
	for i := range a {
		if d := math.Abs(a[i].Score - b[i].Score); d > 1e-9*math.Abs(b[i].Score) {
			return fmt.Sprintf("hit %d: score %v, FTS5 %v", i, a[i].Score, b[i].Score)
		}
	}
	if ka, kb := key(a), key(b); !slices.Equal(ka, kb) {
		return fmt.Sprintf("turns %v, FTS5 %v", ka, kb)
	}
	return ""
}

// TestKeywordIndex_OtherWriter checks that a write the index cannot know
// of (another process's, here another handle's) is never missed: searches
// go to FTS5 until a rebuild, started by the first search that sees it,
// catches up.
func TestKeywordIndex_OtherWriter(t *testing.T) {
	testutil.LongRun(t)
	ctx := context.Background()
	mem, other := twoHandles(t)
	turns := kwCorpus(600, 3)
	mustPut(t, mem, turns[:500]...)
	if err := mem.LoadKeywordIndex(ctx); err != nil {
		t.Fatal(err)
	}
	unique := testTurn(601, "a zeppelin only the other handle wrote")
	mustPut(t, other, append(turns[500:], unique)...)
	// A write of this handle after it: its change waits behind the other
	// handle's generation, which no write here brings.
	own := testTurn(602, "a dirigible this handle wrote")
	mustPut(t, mem, own)

	hits, err := mem.SearchTurns(ctx, engram.TextQuery{Text: "zeppelin"})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || hits[0].Turn.ID != unique.ID {
		t.Fatalf("the other handle's turn is not found: %v", hits)
	}
	mem.kw.Wait() // the rebuild the search started
	gen, _ := mem.kw.Gen()
	if want := keywordGenOf(t, mem); gen != want {
		t.Fatalf("rebuilt at generation %d, the palace is at %d", gen, want)
	}
	before := memRanked(mem)
	hits, err = mem.SearchTurns(ctx, engram.TextQuery{Text: "zeppelin"})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || hits[0].Turn.ID != unique.ID || memRanked(mem) != before+1 {
		t.Fatalf("after the rebuild: %v, ranked by the index %d times (was %d)", hits, memRanked(mem), before)
	}
	if hits, err := mem.SearchTurns(ctx, engram.TextQuery{Text: "dirigible"}); err != nil || len(hits) != 1 || hits[0].Turn.ID != own.ID {
		t.Fatalf("this handle's own turn after the rebuild: %v %v", hits, err)
	}
	if _, left := mem.kw.Gen(); left != 0 {
		t.Errorf("%d changes still pending after the rebuild", left)
	}
	compareKeyword(t, mem, other, "after the rebuild")
}

func keywordGenOf(tb testing.TB, db *DB) int64 {
	tb.Helper()
	var gen int64
	err := db.View(context.Background(), func(tx *sql.Tx) (err error) {
		gen, err = metaIn(context.Background(), tx, keyKeywordGen)
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return gen
}

// unitScoreHits is ScoreUnits' scores as unit hits (the id and kind of
// each unit), to compare as SearchUnits' hits are compared.
func unitScoreHits(scores []engram.UnitScore, err error) ([]engram.UnitHit, error) {
	out := make([]engram.UnitHit, len(scores))
	for i, s := range scores {
		out[i] = engram.UnitHit{Unit: engram.Unit{ID: s.ID, Kind: s.Kind}, Score: s.Score}
	}
	return out, err
}

// sameUnitHits compares unit hits by id and score: the same set but for
// ties with the last of each kind when limit cuts them.
func sameUnitHits(a, b []engram.UnitHit, limit int) string {
	key := func(hs []engram.UnitHit) map[string]float64 {
		m := map[string]float64{}
		for _, h := range hs {
			m[h.Unit.ID] = h.Score
		}
		return m
	}
	ka, kb := key(a), key(b)
	if len(ka) != len(kb) {
		return fmt.Sprintf("%d units, FTS5 %d", len(ka), len(kb))
	}
	last := map[string]float64{}
	for _, h := range b {
		last[h.Unit.Kind] = h.Score // b is best first within each kind
	}
	for id, sb := range kb {
		sa, ok := ka[id]
		if !ok {
			var kind string
			for _, h := range b {
				if h.Unit.ID == id {
					kind = h.Unit.Kind
				}
			}
			if limit > 0 && math.Abs(sb-last[kind]) <= 1e-9*math.Abs(sb) {
				continue // tied at the cut
			}
			return fmt.Sprintf("unit %s (%v) missing", id, sb)
		}
		if math.Abs(sa-sb) > 1e-9*math.Abs(sb) {
			return fmt.Sprintf("unit %s: score %v, FTS5 %v", id, sa, sb)
		}
	}
	return ""
}

// sameSceneHits compares two rankings of scenes as sameUnitHits does.
func sameSceneHits(a, b []engram.SceneHit, limit int) string {
	units := func(hs []engram.SceneHit) []engram.UnitHit {
		out := make([]engram.UnitHit, len(hs))
		for i, h := range hs {
			out[i] = engram.UnitHit{Unit: engram.Unit{ID: h.Scene.ID, Kind: engram.UnitScene}, Score: h.Score}
		}
		return out
	}
	return sameUnitHits(units(a), units(b), limit)
}

// sameMemoryHits compares two rankings of memories as sameUnitHits does,
// and checks that neither holds a superseded or wrong memory.
func sameMemoryHits(a, b []engram.MemoryHit, limit int) string {
	units := func(hs []engram.MemoryHit) []engram.UnitHit {
		out := make([]engram.UnitHit, len(hs))
		for i, h := range hs {
			out[i] = engram.UnitHit{Unit: engram.Unit{ID: h.Memory.ID}, Score: h.Score}
		}
		return out
	}
	for _, h := range append(slices.Clone(a), b...) {
		if h.Memory.SupersededBy != "" || h.Memory.Wrong {
			return fmt.Sprintf("memory %s is superseded or wrong", h.Memory.ID)
		}
	}
	return sameUnitHits(units(a), units(b), limit)
}

// TestCatchUpKeywordIndexes: after writes, CatchUpKeywordIndexes brings
// the units', scenes' and memories' indexes to the palace's state without
// a search; a big catch-up leaves no replaced doc behind; a forget's
// changes are caught up too; the rankings stay FTS5's.
func TestCatchUpKeywordIndexes(t *testing.T) {
	testutil.LongRun(t)
	ctx := context.Background()
	mem, fts := twoHandles(t)
	turns := kwCorpus(3200, 6)
	mustPut(t, mem, turns[:200]...)
	putKWMemories(t, mem, turns) // 1,067 memories, each changed below
	if err := mem.LoadKeywordIndex(ctx); err != nil {
		t.Fatal(err)
	}
	current := func(when string, big bool) {
		t.Helper()
		for i, u := range mem.seqIndexes() {
			src := seqSources(mem)[i]
			in := u.Info()
			if !isCurrent(t, src, in) {
				t.Fatalf("%s: the %s index is not current", when, src.table)
			}
			if big && in.Dead != 0 {
				t.Errorf("%s: the %s index keeps %d replaced docs after a big catch-up", when, src.table, in.Dead)
			}
		}
	}
	// Turns in batches, as ingest writes them: the session units grow at
	// every batch, each growth a change the index has not seen.
	for i := 200; i < len(turns); i += 100 {
		mustPut(t, mem, turns[i:i+100]...)
	}
	putKWScenes(t, mem, turns)
	// Every memory again with a second source: each takes a change number,
	// and its doc in the index is replaced.
	if _, err := mem.PutMemories(ctx, "test-memories", kwMemoriesAgain(turns), turns[len(turns)-1].Seq); err != nil {
		t.Fatal(err)
	}
	if err := mem.CatchUpKeywordIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	current("after the writes", true)
	compareKeyword(t, mem, fts, "after the catch-up")

	forgetEvery(t, mem, turns, 7, 101)
	if err := mem.CatchUpKeywordIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	current("after a forget", false)
	compareKeyword(t, mem, fts, "after a forget")
}

// TestCatchUpKeywordIndexes_Chunks: a catch-up reads its rows a chunk at a
// time; a row changed again between two chunks comes again in a later
// one, and a deletion between two chunks starts the catch-up again from
// every row, so the index ends as FTS5 ranks, and current.
func TestCatchUpKeywordIndexes_Chunks(t *testing.T) {
	testutil.LongRun(t)
	ctx := context.Background()
	mem, fts := twoHandles(t)
	turns := kwCorpus(3600, 8)
	mustPut(t, mem, turns...)
	putKWMemories(t, mem, turns) // 1,200 memories: three chunks
	if err := mem.LoadKeywordIndex(ctx); err != nil {
		t.Fatal(err)
	}
	var chunks int
	var deletedBefore int64
	mem.mkw.BetweenChunks = func() {
		chunks++
		switch chunks {
		case 1:
			// A memory of the first chunk corrected behind its back.
			c := engram.Correction{ID: "cor-quagga", Target: engram.CorrectMemory, Of: "mem-" + turns[3].ID, Text: "zebra quagga okapi",
				Namespace: turns[3].Namespace, Type: engram.MemoryFact, Original: turns[3].Content, Sources: []string{turns[3].ID, turns[4].ID}}
			if n, err := fts.ApplyCorrections(ctx, []engram.Correction{c}); err != nil || n != 1 {
				t.Errorf("correction: %d applied, %v", n, err)
			}
		case 2:
			// Memories deleted: their sources forgotten.
			var err error
			if _, deletedBefore, err = seqSources(fts)[2].State(ctx); err != nil {
				t.Error(err)
			}
			var forget []engram.ForgetTurn
			for _, i := range []int{300, 301, 903, 904} {
				forget = append(forget, engram.ForgetTurn{ID: turns[i].ID, Seq: turns[i].Seq})
			}
			if _, err := fts.ForgetTurns(ctx, forget, time.Now(), nil); err != nil {
				t.Error(err)
			}
		}
	}
	// Every memory again, by another handle: each takes a change number
	// the index has not seen.
	if _, err := fts.PutMemories(ctx, "test-memories", kwMemoriesAgain(turns), turns[len(turns)-1].Seq); err != nil {
		t.Fatal(err)
	}
	if err := mem.CatchUpKeywordIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	if chunks < 4 {
		t.Errorf("%d pauses between chunks; want 2 of the first pass and more of the second", chunks)
	}
	if in := mem.mkw.Info(); !isCurrent(t, seqSources(mem)[2], in) || in.Deleted <= deletedBefore {
		t.Fatalf("the memories' index: %+v, %d deleted before the forget", in, deletedBefore)
	}
	compareKeyword(t, mem, fts, "after a catch-up with writes between its chunks")
	hits, err := mem.SearchMemories(ctx, engram.TextQuery{Text: "quagga", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || hits[0].Memory.ID != "mem-"+turns[3].ID {
		t.Errorf("the memory corrected between chunks: %+v", hits)
	}
}

// TestKeywordIndex_BigTermFrequency: a word said 255 times or more in one
// turn (a pasted log) is counted exactly, as FTS5 counts it, before and
// after a compaction moves the turns' docs.
func TestKeywordIndex_BigTermFrequency(t *testing.T) {
	ctx := context.Background()
	mem, fts := twoHandles(t)
	var turns []engram.Turn
	for i, n := range []int{1, 3, 254, 255, 256, 300, 1000, 7} {
		turns = append(turns, testTurn(int64(i+1), strings.Repeat("kafka ", n)+"cluster log"))
	}
	mustPut(t, mem, turns...)
	if err := mem.LoadKeywordIndex(ctx); err != nil {
		t.Fatal(err)
	}
	compare := func(when string) {
		t.Helper()
		q := engram.TextQuery{Text: "kafka cluster", Limit: 20}
		a, err := mem.SearchTurns(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		b, err := fts.SearchTurns(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if msg := sameHits(a, b); msg != "" {
			t.Errorf("%s: %s", when, msg)
		}
	}
	before := memRanked(mem)
	compare("after the load")
	if memRanked(mem) == before {
		t.Fatal("the keyword index did not answer")
	}
	// Drop two turns and compact: the counts follow their docs.
	if _, err := mem.ForgetTurns(ctx, []engram.ForgetTurn{{ID: turns[0].ID, Seq: turns[0].Seq}, {ID: turns[4].ID, Seq: turns[4].Seq}}, time.Now(), nil); err != nil {
		t.Fatal(err)
	}
	mem.kw.Compact()
	compare("after a forget and a compaction")
}

// both runs search on the database that ranks from the keyword indexes
// (mem) and on the one that ranks with FTS5 (fts).
func both[T any](t *testing.T, mem, fts *DB, search func(*DB) ([]T, error)) (a, b []T) {
	t.Helper()
	a, err := search(mem)
	if err != nil {
		t.Fatal(err)
	}
	if b, err = search(fts); err != nil {
		t.Fatal(err)
	}
	return a, b
}

// forgetEvery forgets turns[from], turns[from+step], and so on.
func forgetEvery(t *testing.T, db *DB, turns []engram.Turn, from, step int) {
	t.Helper()
	var forget []engram.ForgetTurn
	for i := from; i < len(turns); i += step {
		forget = append(forget, engram.ForgetTurn{ID: turns[i].ID, Seq: turns[i].Seq})
	}
	if _, err := db.ForgetTurns(context.Background(), forget, time.Now(), nil); err != nil {
		t.Fatal(err)
	}
}

// twoHandles opens two handles on one new palace: one to load the keyword
// indexes, one to search with FTS5 or write behind the first's back.
func twoHandles(t *testing.T) (a, b *DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "palace.db")
	newPalace.CopyTo(t, path)
	return MustOpenDBAt(t, path, Options{}), MustOpenDBAt(t, path, Options{})
}

// seqSources are the sources of db.seqIndexes(), in their order.
func seqSources(db *DB) []tableSource {
	var out []tableSource
	for _, u := range db.seqIndexes() {
		out = append(out, u.Source().(tableSource))
	}
	return out
}

// isCurrent reports whether in, a SeqCache's, holds the state of src's
// table.
func isCurrent(t *testing.T, src tableSource, in kwindex.SeqInfo) bool {
	t.Helper()
	seq, deleted, err := src.State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return in.Current && in.Seq == seq && in.Deleted == deleted
}

// TestIndexLoadLeavesReadersFree: the read that loads the turns' keyword
// index holds its connection for its whole scan (a million turns at a
// server's start); a request's read meanwhile does not wait for it, even
// with one reader.
func TestIndexLoadLeavesReadersFree(t *testing.T) {
	db := MustOpenDBAt(t, filepath.Join(t.TempDir(), "palace.db"), Options{Readers: 1})
	for i := int64(1); i <= 3; i++ {
		mustPut(t, db, testTurn(i, fmt.Sprintf("turn %d of the load", i)))
	}
	ctx := context.Background()
	started, release, loaded := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		first := true
		_, err := db.loadTurnDocs(ctx, func(kwindex.Doc) {
			if first {
				first = false
				close(started)
				<-release // the scan goes on, its connection held
			}
		})
		loaded <- err
	}()
	<-started
	if _, err := db.TurnSkips(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if hits, err := db.SearchTurns(ctx, engram.TextQuery{Text: "load"}); err != nil || len(hits) != 3 {
		t.Fatalf("a search while the index loads: %d hits, %v", len(hits), err)
	}
	close(release)
	if err := <-loaded; err != nil {
		t.Fatal(err)
	}
}
