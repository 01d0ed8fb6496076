// Package vectortest is the conformance suite every engram.VectorIndex must
// pass: the ChromaDB index (package chroma) and the embedded index run the
// same tests.
//
// # Use
//
//	func TestConformance(t *testing.T) {
//		vectortest.Run(t, func(t *testing.T, dim int) engram.VectorIndex {
//			return MustOpenIndex(t, dim) // fresh, empty, closed by t.Cleanup
//		})
//	}
//
// Run calls open once per subtest. open must return an empty index of
// dimension dim that no other subtest sees, and release it with t.Cleanup;
// it reports its own failures with t.Fatal. Subtests run one after another.
// The suite uses dimensions from 4 to 64 and at most a few hundred vectors,
// so it runs in seconds against a server.
//
// # What an index must do
//
//   - Similarity is cosine: Score is the cosine of the angle between the
//     query and the stored vector (1 identical direction, 0 orthogonal, -1
//     opposite), independent of vector length, within 5e-3 (an index may
//     store unit vectors as int8 codes, as the palace does). Hits come best
//     first, at most K of them, each ID once; fewer when fewer match.
//   - Upsert replaces by ID: the vector, kind, namespace and time all change.
//     When one call holds an ID twice, the last item wins.
//   - Filters combine with AND: Namespace "" means every namespace, otherwise
//     an exact match; Kinds empty means every kind, otherwise any of them;
//     the time range is [From, To), a zero From or To leaving that side open.
//     The suite uses whole-second times, so an index may store seconds.
//   - Delete removes by ID and ignores unknown ids; Count is the number of
//     distinct IDs stored. An empty index answers Count 0 and a query with
//     no hits and no error.
//   - EINVALID, with nothing written, for: a vector whose dimension is not
//     the index's (the message names both dimensions, in Upsert and Query),
//     an empty ID, a zero vector, a NaN or infinite value, and K < 1. One
//     bad item fails the whole Upsert call.
//
// # Approximate indexes
//
// HNSW and similar indexes may miss true neighbours, so with random data the
// suite asks only: a query equal to a stored vector finds that vector first
// (score > 0.999), and recall@10 against exact search averages at least 0.9,
// with and without a namespace filter. The hand-built cases are small enough
// that any index answers them exactly; ties are avoided throughout.
package vectortest

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	engram "github.com/engram-dev/engram"
)

// OpenFunc returns a fresh, empty index of dimension dim, released with
// t.Cleanup.
type OpenFunc func(t *testing.T, dim int) engram.VectorIndex

// MinRecall is the recall@10 an approximate index must reach on random data.
const MinRecall = 0.9

// scoreTol is how far a score may be from the exact cosine. The palace
// stores a unit vector as int8 codes, a step of which is its largest
// component over 127: at the suite's 4 dimensions that moves a cosine by up
// to some 0.004, at 512 by some 0.001.
const scoreTol = 5e-3

// t0 is the base time of the items: a whole second.
var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// Run runs the conformance suite, one subtest per behaviour.
func Run(t *testing.T, open OpenFunc) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(*testing.T, OpenFunc)
	}{
		{"Empty", testEmpty},
		{"OrderByCosine", testOrderByCosine},
		{"UpsertReplaces", testUpsertReplaces},
		{"UpsertDuplicateInCall", testUpsertDuplicateInCall},
		{"NamespaceFilter", testNamespaceFilter},
		{"KindsFilter", testKindsFilter},
		{"TimeRange", testTimeRange},
		{"CombinedFilters", testCombinedFilters},
		{"IDs", testIDs},
		{"Delete", testDelete},
		{"Count", testCount},
		{"KLargerThanCount", testKLargerThanCount},
		{"WrongDimension", testWrongDimension},
		{"InvalidInput", testInvalidInput},
		{"RandomTop1", testRandomTop1},
		{"RandomRecall", testRandomRecall},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, open) })
	}
}

func testEmpty(t *testing.T, open OpenFunc) {
	ctx := context.Background()
	ix := open(t, 4)
	mustCount(t, ix, 0)
	hits := mustQuery(t, ix, engram.VectorQuery{Vector: vec(1, 0, 0, 0), K: 10})
	if len(hits) != 0 {
		t.Fatalf("empty index: got %d hits, want none: %v", len(hits), hits)
	}
	if err := ix.Delete(ctx, []string{"nothing"}); err != nil {
		t.Fatalf("Delete on an empty index: %v", err)
	}
	if err := ix.Upsert(ctx, nil); err != nil {
		t.Fatalf("Upsert(nil): %v", err)
	}
	mustCount(t, ix, 0)
}

func testOrderByCosine(t *testing.T, open OpenFunc) {
	ix := open(t, 4)
	// Cosines to the query (1, 0, 0, 0) are known and distinct. Lengths vary
	// on purpose: cosine ignores them.
	items := []engram.VectorItem{
		item("opposite", vec(-2, 0, 0, 0)),            // -1
		item("negative", vec(-1, -1, -1, 0)),          // -0.5774
		item("obtuse", vec(-1, 3, 0, 0)),              // -0.3162
		item("orthogonal", vec(0, 0, 5, 0)),           // 0
		item("skew", vec(0.2, -0.9, 0.1, 0.3)),        // 0.2052
		item("quarter", vec(1, 0, 0, math.Sqrt(15))),  // 0.25
		item("tenth", vec(1, 0, 0, 3)),                // 0.3162
		item("third", vec(1, 0, math.Sqrt(8), 0)),     // 0.3333
		item("far", vec(1, 2, 0, 0)),                  // 0.4472
		item("twothirds", vec(2, math.Sqrt(5), 0, 0)), // 0.6667
		item("diagonal", vec(1, 1, 0, 0)),             // 0.7071
		item("spread", vec(3, 1, 1, 1)),               // 0.8660
		item("mostly", vec(4, 0, -1, 0)),              // 0.9701
		item("near", vec(10, 2, 0, 0)),                // 0.9806
		item("slight", vec(2, 0.1, 0.1, 0.1)),         // 0.9963
		item("same", vec(0.5, 0, 0, 0)),               // 1
	}
	// Stored in an order unrelated to the answer.
	rand.New(rand.NewPCG(5, 5)).Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
	mustUpsert(t, ix, items)
	q := vec(1, 0, 0, 0)
	want := bruteForce(q, items, len(items))
	hits := mustQuery(t, ix, engram.VectorQuery{Vector: q, K: len(items)})
	checkExact(t, hits, want)

	hits = mustQuery(t, ix, engram.VectorQuery{Vector: q, K: 3})
	checkExact(t, hits, want[:3])
	if hits[0].ID != "same" || hits[1].ID != "slight" || hits[2].ID != "near" {
		t.Fatalf("top 3: got %v, want same, slight, near", HitIDs(hits))
	}
	if k := hits[0].Kind; k != engram.KindTurn {
		t.Fatalf("hit kind = %q, want %q", k, engram.KindTurn)
	}

	// A query of another length finds the same order and scores.
	hits = mustQuery(t, ix, engram.VectorQuery{Vector: vec(7, 0, 0, 0), K: 5})
	checkExact(t, hits, want[:5])
}

func testUpsertReplaces(t *testing.T, open OpenFunc) {
	ix := open(t, 4)
	mustUpsert(t, ix, []engram.VectorItem{
		{ID: "x", Kind: engram.KindTurn, Namespace: "a", TS: t0, Vector: vec(1, 0, 0, 0)},
		{ID: "y", Kind: engram.KindTurn, Namespace: "a", TS: t0, Vector: vec(0, 1, 0, 0)},
	})
	mustUpsert(t, ix, []engram.VectorItem{
		{ID: "x", Kind: "memory", Namespace: "b", TS: t0.Add(time.Hour), Vector: vec(0, 0, 1, 0)},
	})
	mustCount(t, ix, 2)

	hits := mustQuery(t, ix, engram.VectorQuery{Vector: vec(0, 0, 1, 0), K: 1})
	if len(hits) != 1 || hits[0].ID != "x" || hits[0].Kind != "memory" || math.Abs(hits[0].Score-1) > scoreTol {
		t.Fatalf("after replace: got %+v, want x (memory) at score 1", hits)
	}
	// The old vector is gone: x is orthogonal to its old direction now.
	hits = mustQuery(t, ix, engram.VectorQuery{Vector: vec(1, 0, 0, 0), K: 2})
	for _, h := range hits {
		if h.ID == "x" && math.Abs(h.Score) > scoreTol {
			t.Fatalf("x kept its old vector: score %v against it, want 0", h.Score)
		}
	}
	// So are the old namespace, kind and time.
	if hits := mustQuery(t, ix, engram.VectorQuery{Vector: vec(0, 0, 1, 0), K: 5, Namespace: "a"}); slices.Contains(HitIDs(hits), "x") {
		t.Fatalf("x still in its old namespace: %v", HitIDs(hits))
	}
	if hits := mustQuery(t, ix, engram.VectorQuery{Vector: vec(0, 0, 1, 0), K: 5, Kinds: []string{engram.KindTurn}}); slices.Contains(HitIDs(hits), "x") {
		t.Fatalf("x still of its old kind: %v", HitIDs(hits))
	}
	if hits := mustQuery(t, ix, engram.VectorQuery{Vector: vec(0, 0, 1, 0), K: 5, To: t0.Add(time.Second)}); slices.Contains(HitIDs(hits), "x") {
		t.Fatalf("x still at its old time: %v", HitIDs(hits))
	}
}

// testIDs checks that a query restricted to ids scores exactly those (the
// unknown ones and those other filters exclude left out), whatever their
// rank among all vectors.
func testIDs(t *testing.T, open OpenFunc) {
	ix := open(t, 4)
	items := []engram.VectorItem{
		{ID: "best", Kind: engram.KindTurn, Namespace: "a", TS: t0, Vector: vec(1, 0, 0, 0)},
		{ID: "good", Kind: engram.KindTurn, Namespace: "a", TS: t0, Vector: vec(1, 1, 0, 0)},
		{ID: "poor", Kind: engram.KindTurn, Namespace: "a", TS: t0, Vector: vec(0, 0, 1, 0)},
		{ID: "worst", Kind: engram.KindTurn, Namespace: "a", TS: t0, Vector: vec(-1, 0, 0, 0)},
		{ID: "other", Kind: engram.KindTurn, Namespace: "b", TS: t0, Vector: vec(1, 0, 0, 0)},
	}
	mustUpsert(t, ix, items)
	q := vec(1, 0, 0, 0)
	hits := mustQuery(t, ix, engram.VectorQuery{Vector: q, K: 10, IDs: []string{"worst", "poor", "missing", "worst"}})
	want := bruteForce(q, []engram.VectorItem{items[2], items[3]}, 2)
	checkExact(t, hits, want)
	// Other filters still apply.
	hits = mustQuery(t, ix, engram.VectorQuery{Vector: q, K: 10, Namespace: "a", IDs: []string{"other", "good"}})
	if got := HitIDs(hits); len(got) != 1 || got[0] != "good" {
		t.Fatalf("ids and namespace a: got %v, want [good]", got)
	}
	// K still bounds the answer.
	hits = mustQuery(t, ix, engram.VectorQuery{Vector: q, K: 1, IDs: []string{"poor", "good", "worst"}})
	if got := HitIDs(hits); len(got) != 1 || got[0] != "good" {
		t.Fatalf("ids with k 1: got %v, want [good]", got)
	}
}

func testUpsertDuplicateInCall(t *testing.T, open OpenFunc) {
	ix := open(t, 4)
	mustUpsert(t, ix, []engram.VectorItem{
		{ID: "d", Kind: engram.KindTurn, Namespace: "a", TS: t0, Vector: vec(1, 0, 0, 0)},
		{ID: "e", Kind: engram.KindTurn, Namespace: "a", TS: t0, Vector: vec(0, 0, 0, 1)},
		{ID: "d", Kind: "memory", Namespace: "a", TS: t0, Vector: vec(0, 1, 0, 0)},
	})
	mustCount(t, ix, 2)
	hits := mustQuery(t, ix, engram.VectorQuery{Vector: vec(0, 1, 0, 0), K: 1})
	if len(hits) != 1 || hits[0].ID != "d" || hits[0].Kind != "memory" || math.Abs(hits[0].Score-1) > scoreTol {
		t.Fatalf("the last item of a call must win: got %+v", hits)
	}
}

// filterCorpus is 24 items over 3 namespaces, 3 kinds and 24 hours, with
// distinct directions, so every filter has a known, exact answer.
func filterCorpus() []engram.VectorItem {
	namespaces := []string{"alpha", "beta", ""}
	kinds := []string{engram.KindTurn, "memory", "doc"}
	rng := rand.New(rand.NewPCG(7, 7))
	items := make([]engram.VectorItem, 24)
	for i := range items {
		items[i] = engram.VectorItem{
			ID:        "f" + strconv.Itoa(i),
			Kind:      kinds[i%3],
			Namespace: namespaces[(i/3)%3],
			TS:        t0.Add(time.Duration(i) * time.Hour),
			Vector:    randomVector(rng, 8),
		}
	}
	return items
}

// checkFilter queries with q over items and wants exactly the items keep
// selects, in exact cosine order.
func checkFilter(t *testing.T, ix engram.VectorIndex, items []engram.VectorItem, q engram.VectorQuery, keep func(engram.VectorItem) bool) {
	t.Helper()
	var sel []engram.VectorItem
	for _, it := range items {
		if keep(it) {
			sel = append(sel, it)
		}
	}
	q.K = len(items)
	hits := mustQuery(t, ix, q)
	checkExact(t, hits, bruteForce(q.Vector, sel, len(sel)))
}

func testNamespaceFilter(t *testing.T, open OpenFunc) {
	ix := open(t, 8)
	items := filterCorpus()
	mustUpsert(t, ix, items)
	q := engram.VectorQuery{Vector: items[5].Vector}
	for _, ns := range []string{"alpha", "beta", "gamma"} {
		q.Namespace = ns
		checkFilter(t, ix, items, q, func(it engram.VectorItem) bool { return it.Namespace == ns })
	}
	q.Namespace = ""
	checkFilter(t, ix, items, q, func(engram.VectorItem) bool { return true })
}

func testKindsFilter(t *testing.T, open OpenFunc) {
	ix := open(t, 8)
	items := filterCorpus()
	mustUpsert(t, ix, items)
	q := engram.VectorQuery{Vector: items[2].Vector}
	for _, kinds := range [][]string{{"memory"}, {engram.KindTurn, "doc"}, {"doc", "scene"}, {"scene"}, nil} {
		q.Kinds = kinds
		checkFilter(t, ix, items, q, func(it engram.VectorItem) bool {
			return len(kinds) == 0 || slices.Contains(kinds, it.Kind)
		})
	}
}

func testTimeRange(t *testing.T, open OpenFunc) {
	ix := open(t, 8)
	items := filterCorpus()
	mustUpsert(t, ix, items)
	at := func(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }
	cases := []struct{ from, to time.Time }{
		{at(5), at(9)},          // [5, 9): the item at From is in, the one at To is out
		{at(5), time.Time{}},    // from 5 on
		{time.Time{}, at(5)},    // before 5
		{at(23), at(24)},        // just the last
		{at(30), time.Time{}},   // after everything
		{at(-3), at(0)},         // before everything
		{at(4), at(4)},          // empty range
		{time.Time{}, at(1000)}, // everything
	}
	q := engram.VectorQuery{Vector: items[11].Vector}
	for _, c := range cases {
		q.From, q.To = c.from, c.to
		checkFilter(t, ix, items, q, func(it engram.VectorItem) bool {
			return (c.from.IsZero() || !it.TS.Before(c.from)) && (c.to.IsZero() || it.TS.Before(c.to))
		})
	}
}

func testCombinedFilters(t *testing.T, open OpenFunc) {
	ix := open(t, 8)
	items := filterCorpus()
	mustUpsert(t, ix, items)
	from, to := t0.Add(3*time.Hour), t0.Add(20*time.Hour)
	q := engram.VectorQuery{Vector: items[0].Vector, Namespace: "beta", Kinds: []string{engram.KindTurn, "memory"}, From: from, To: to}
	checkFilter(t, ix, items, q, func(it engram.VectorItem) bool {
		return it.Namespace == "beta" && (it.Kind == engram.KindTurn || it.Kind == "memory") &&
			!it.TS.Before(from) && it.TS.Before(to)
	})
	q = engram.VectorQuery{Vector: items[0].Vector, Namespace: "alpha", Kinds: []string{"doc"}}
	checkFilter(t, ix, items, q, func(it engram.VectorItem) bool { return it.Namespace == "alpha" && it.Kind == "doc" })
}

func testDelete(t *testing.T, open OpenFunc) {
	ctx := context.Background()
	ix := open(t, 8)
	items := filterCorpus()
	mustUpsert(t, ix, items)
	gone := []string{"f0", "f3", "f17", "unknown", "f3"}
	if err := ix.Delete(ctx, gone); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	mustCount(t, ix, len(items)-3)
	if err := ix.Delete(ctx, nil); err != nil {
		t.Fatalf("Delete(nil): %v", err)
	}
	mustCount(t, ix, len(items)-3)
	for _, id := range []string{"f0", "f3", "f17"} {
		i, _ := strconv.Atoi(id[1:])
		hits := mustQuery(t, ix, engram.VectorQuery{Vector: items[i].Vector, K: len(items)})
		if slices.Contains(HitIDs(hits), id) {
			t.Fatalf("deleted %s still found", id)
		}
		if len(hits) != len(items)-3 {
			t.Fatalf("query for %s: %d hits, want %d", id, len(hits), len(items)-3)
		}
	}
	// A deleted ID can come back.
	mustUpsert(t, ix, items[:1])
	mustCount(t, ix, len(items)-2)
	hits := mustQuery(t, ix, engram.VectorQuery{Vector: items[0].Vector, K: 1})
	if len(hits) != 1 || hits[0].ID != "f0" {
		t.Fatalf("re-added f0: got %v", HitIDs(hits))
	}
}

func testCount(t *testing.T, open OpenFunc) {
	ix := open(t, 8)
	rng := rand.New(rand.NewPCG(3, 3))
	var items []engram.VectorItem
	for i := range 50 {
		items = append(items, item("c"+strconv.Itoa(i), randomVector(rng, 8)))
	}
	mustUpsert(t, ix, items[:20])
	mustCount(t, ix, 20)
	mustUpsert(t, ix, items) // 20 replaced, 30 new
	mustCount(t, ix, 50)
}

func testKLargerThanCount(t *testing.T, open OpenFunc) {
	ix := open(t, 8)
	items := filterCorpus()[:5]
	mustUpsert(t, ix, items)
	hits := mustQuery(t, ix, engram.VectorQuery{Vector: items[0].Vector, K: 100})
	checkExact(t, hits, bruteForce(items[0].Vector, items, 5))
	hits = mustQuery(t, ix, engram.VectorQuery{Vector: items[0].Vector, K: 100, Kinds: []string{"memory"}})
	if len(hits) != 2 {
		t.Fatalf("K=100 over 2 matching items: got %d hits (%v)", len(hits), HitIDs(hits))
	}
}

func testWrongDimension(t *testing.T, open OpenFunc) {
	ctx := context.Background()
	const dim, wrong = 7, 11
	ix := open(t, dim)
	good := item("good", randomVector(rand.New(rand.NewPCG(1, 1)), dim))
	bad := item("bad", randomVector(rand.New(rand.NewPCG(2, 2)), wrong))
	err := ix.Upsert(ctx, []engram.VectorItem{good, bad})
	checkInvalid(t, "Upsert of a wrong dimension", err, strconv.Itoa(dim), strconv.Itoa(wrong))
	mustCount(t, ix, 0) // nothing written, the good item included

	mustUpsert(t, ix, []engram.VectorItem{good})
	_, err = ix.Query(ctx, engram.VectorQuery{Vector: bad.Vector, K: 1})
	checkInvalid(t, "Query of a wrong dimension", err, strconv.Itoa(dim), strconv.Itoa(wrong))
	_, err = ix.Query(ctx, engram.VectorQuery{Vector: nil, K: 1})
	checkInvalid(t, "Query without a vector", err)
	mustCount(t, ix, 1)
}

func testInvalidInput(t *testing.T, open OpenFunc) {
	ctx := context.Background()
	ix := open(t, 4)
	ok := item("ok", vec(1, 2, 3, 4))
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	for _, c := range []struct {
		name string
		it   engram.VectorItem
	}{
		{"empty id", item("", vec(1, 0, 0, 0))},
		{"zero vector", item("zero", vec(0, 0, 0, 0))},
		{"NaN", item("nan", []float32{1, nan, 0, 0})},
		{"Inf", item("inf", []float32{inf, 0, 0, 0})},
	} {
		err := ix.Upsert(ctx, []engram.VectorItem{ok, c.it})
		checkInvalid(t, "Upsert with "+c.name, err)
	}
	mustCount(t, ix, 0)
	mustUpsert(t, ix, []engram.VectorItem{ok})
	for _, c := range []struct {
		name string
		q    engram.VectorQuery
	}{
		{"K 0", engram.VectorQuery{Vector: vec(1, 0, 0, 0), K: 0}},
		{"K -1", engram.VectorQuery{Vector: vec(1, 0, 0, 0), K: -1}},
		{"zero vector", engram.VectorQuery{Vector: vec(0, 0, 0, 0), K: 1}},
		{"NaN", engram.VectorQuery{Vector: []float32{nan, 1, 0, 0}, K: 1}},
	} {
		_, err := ix.Query(ctx, c.q)
		checkInvalid(t, "Query with "+c.name, err)
	}
}

func testRandomTop1(t *testing.T, open OpenFunc) {
	const dim, n = 32, 300
	ix := open(t, dim)
	rng := rand.New(rand.NewPCG(42, 1))
	items := make([]engram.VectorItem, n)
	for i := range items {
		items[i] = engram.VectorItem{ID: fmt.Sprintf("r%03d", i), Kind: engram.KindTurn, Namespace: "ns", TS: t0, Vector: randomVector(rng, dim)}
	}
	mustUpsert(t, ix, items)
	mustCount(t, ix, n)
	for i := 0; i < n; i += 7 {
		hits := mustQuery(t, ix, engram.VectorQuery{Vector: items[i].Vector, K: 3})
		if len(hits) == 0 || hits[0].ID != items[i].ID || hits[0].Score < 0.999 {
			t.Fatalf("query equal to %s: top hits %+v, want %s first at score ~1", items[i].ID, hits, items[i].ID)
		}
	}
}

func testRandomRecall(t *testing.T, open OpenFunc) {
	const dim, n, queries, k = 64, 400, 30, 10
	ix := open(t, dim)
	rng := rand.New(rand.NewPCG(99, 2))
	items := make([]engram.VectorItem, n)
	for i := range items {
		ns := "even"
		if i%2 == 1 {
			ns = "odd"
		}
		items[i] = engram.VectorItem{ID: fmt.Sprintf("v%03d", i), Kind: engram.KindTurn, Namespace: ns, TS: t0, Vector: randomVector(rng, dim)}
	}
	mustUpsert(t, ix, items)
	var odd []engram.VectorItem
	for _, it := range items {
		if it.Namespace == "odd" {
			odd = append(odd, it)
		}
	}
	for _, c := range []struct {
		name string
		ns   string
		set  []engram.VectorItem
	}{{"unfiltered", "", items}, {"namespace", "odd", odd}} {
		var sum float64
		for range queries {
			q := randomVector(rng, dim)
			hits := mustQuery(t, ix, engram.VectorQuery{Vector: q, K: k, Namespace: c.ns})
			checkHits(t, hits, k)
			want := bruteForce(q, c.set, k)
			found := 0
			for _, w := range want {
				if slices.Contains(HitIDs(hits), w.ID) {
					found++
				}
			}
			sum += float64(found) / float64(len(want))
		}
		recall := sum / queries
		t.Logf("%s recall@%d = %.3f over %d queries", c.name, k, recall, queries)
		if recall < MinRecall {
			t.Errorf("%s recall@%d = %.3f, want >= %.2f", c.name, k, recall, MinRecall)
		}
	}
}

// Helpers.

func vec(xs ...float64) []float32 {
	v := make([]float32, len(xs))
	for i, x := range xs {
		v[i] = float32(x)
	}
	return v
}

func item(id string, v []float32) engram.VectorItem {
	return engram.VectorItem{ID: id, Kind: engram.KindTurn, Namespace: "default", TS: t0, Vector: v}
}

func randomVector(rng *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

// Cosine is the cosine similarity of a and b, computed in float64.
func Cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}

// SameDirection reports whether a and b are one vector, up to its length
// and the rounding of a store that keeps unit vectors as int8 codes (which
// moves a vector's cosine with itself by some 3e-5 whatever the dimension):
// the test of "this is the vector embedded from that text".
func SameDirection(a, b []float32) bool {
	return len(a) == len(b) && len(a) > 0 && Cosine(a, b) > 1-1e-4
}

// bruteForce returns the k items nearest to q by exact cosine, best first,
// as hits.
func bruteForce(q []float32, items []engram.VectorItem, k int) []engram.VectorHit {
	hits := make([]engram.VectorHit, len(items))
	for i, it := range items {
		hits[i] = engram.VectorHit{ID: it.ID, Kind: it.Kind, Score: Cosine(q, it.Vector)}
	}
	slices.SortFunc(hits, func(a, b engram.VectorHit) int { return cmp.Compare(b.Score, a.Score) })
	return hits[:min(k, len(hits))]
}

// HitIDs returns the ids of hits, in their order.
func HitIDs(hits []engram.VectorHit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

// checkHits checks what holds for every answer: at most k hits, best first,
// each ID once, scores within [-1, 1].
func checkHits(t *testing.T, hits []engram.VectorHit, k int) {
	t.Helper()
	if len(hits) > k {
		t.Fatalf("got %d hits for K=%d", len(hits), k)
	}
	seen := make(map[string]bool, len(hits))
	for i, h := range hits {
		if seen[h.ID] {
			t.Fatalf("hit %s appears twice: %v", h.ID, HitIDs(hits))
		}
		seen[h.ID] = true
		if math.IsNaN(h.Score) || h.Score < -1-scoreTol || h.Score > 1+scoreTol {
			t.Fatalf("hit %s: score %v outside [-1, 1]", h.ID, h.Score)
		}
		if i > 0 && h.Score > hits[i-1].Score+scoreTol {
			t.Fatalf("hits not best first: %s (%v) after %s (%v)", h.ID, h.Score, hits[i-1].ID, hits[i-1].Score)
		}
	}
}

// checkExact wants hits to be want: the same IDs in the same order, kinds
// equal and scores within scoreTol, except that two whose exact cosines lie
// within scoreTol of each other may come in either order.
func checkExact(t *testing.T, hits, want []engram.VectorHit) {
	t.Helper()
	checkHits(t, hits, max(len(want), 1))
	if len(hits) != len(want) {
		t.Fatalf("got %d hits %v, want %d %v", len(hits), HitIDs(hits), len(want), HitIDs(want))
	}
	exact := make(map[string]engram.VectorHit, len(want))
	for _, w := range want {
		exact[w.ID] = w
	}
	for i := range want {
		w, ok := exact[hits[i].ID]
		if !ok || (w.ID != want[i].ID && math.Abs(w.Score-want[i].Score) > scoreTol) {
			t.Fatalf("hit %d: got %v, want %v", i, HitIDs(hits), HitIDs(want))
		}
		if hits[i].Kind != w.Kind {
			t.Fatalf("hit %s: kind %q, want %q", hits[i].ID, hits[i].Kind, w.Kind)
		}
		if math.Abs(hits[i].Score-w.Score) > scoreTol {
			t.Fatalf("hit %s: score %.6f, want cosine %.6f", hits[i].ID, hits[i].Score, w.Score)
		}
	}
}

func checkInvalid(t *testing.T, what string, err error, mention ...string) {
	t.Helper()
	if code := engram.ErrorCode(err); code != engram.EINVALID {
		t.Fatalf("%s: got code %q (%v), want %q", what, code, err, engram.EINVALID)
	}
	msg := engram.ErrorMessage(err)
	for _, m := range mention {
		if !strings.Contains(msg, m) {
			t.Fatalf("%s: message %q does not name %s", what, msg, m)
		}
	}
}

func mustUpsert(t *testing.T, ix engram.VectorIndex, items []engram.VectorItem) {
	t.Helper()
	if err := ix.Upsert(context.Background(), items); err != nil {
		t.Fatalf("Upsert(%d items): %v", len(items), err)
	}
}

func mustQuery(t *testing.T, ix engram.VectorIndex, q engram.VectorQuery) []engram.VectorHit {
	t.Helper()
	hits, err := ix.Query(context.Background(), q)
	if err != nil {
		t.Fatalf("Query(K=%d, ns=%q, kinds=%v, from=%v, to=%v): %v", q.K, q.Namespace, q.Kinds, q.From, q.To, err)
	}
	checkHits(t, hits, q.K)
	return hits
}

func mustCount(t *testing.T, ix engram.VectorIndex, want int) {
	t.Helper()
	n, err := ix.Count(context.Background())
	if err != nil {
		t.Fatalf("Count: %v", err)
	}
	if n != want {
		t.Fatalf("Count = %d, want %d", n, want)
	}
}
