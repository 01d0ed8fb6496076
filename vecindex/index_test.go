package vecindex_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/internal/vectortest"
	"github.com/engram-dev/engram/palace"
	"github.com/engram-dev/engram/vecindex"
)

// The tests run the index over the store it runs over in engram, the
// palace's SQLite.

// openDBAt opens the palace at path, closed when the test ends.
func openDBAt(tb testing.TB, path string) *palace.DB {
	tb.Helper()
	db, err := palace.Open(path, palace.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// openDB opens a new palace in a temporary directory: a copy of one
// palace.Open made once for the package's tests (most of the conformance
// cases' time went to applying the migrations to a new file each).
func openDB(tb testing.TB) *palace.DB {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "palace.db")
	newPalace.CopyTo(tb, path)
	return openDBAt(tb, path)
}

// newPalace is a palace Open made on a new file and closed.
var newPalace = testutil.FileFixture{Make: func(path string) error {
	db, err := palace.Open(path, palace.Options{})
	if err != nil {
		return err
	}
	return db.Close()
}}

func TestMain(m *testing.M) {
	code := m.Run()
	newPalace.Remove()
	os.Exit(code)
}

// storeOf returns the palace store under x.
func storeOf(x *vecindex.Index) *palace.VectorStore { return x.Store().(*palace.VectorStore) }

// openIndex returns the index of model's vectors in db.
func openIndex(tb testing.TB, db *palace.DB, model string, dim int) *vecindex.Index {
	tb.Helper()
	s, err := db.Vectors(context.Background(), model, dim)
	if err != nil {
		tb.Fatal(err)
	}
	return vecindex.New(s)
}

func TestVectorIndex_Conformance(t *testing.T) {
	ctx := context.Background()
	// lazy: the first query loads what earlier upserts wrote to SQLite;
	// loaded: every write goes to the matrix too; generic: the plain Go
	// kernel instead of AVX2, where there is one.
	t.Run("lazy", func(t *testing.T) {
		vectortest.Run(t, func(t *testing.T, dim int) engram.VectorIndex {
			return openIndex(t, openDB(t), "test", dim)
		})
	})
	t.Run("loaded", func(t *testing.T) {
		vectortest.Run(t, func(t *testing.T, dim int) engram.VectorIndex {
			v := openIndex(t, openDB(t), "test", dim)
			if err := v.Load(ctx); err != nil {
				t.Fatal(err)
			}
			return v
		})
	})
	t.Run("generic", func(t *testing.T) {
		vecindex.UseGeneric(t)
		vectortest.Run(t, func(t *testing.T, dim int) engram.VectorIndex {
			return openIndex(t, openDB(t), "test", dim)
		})
	})
}

func mustUpsert(tb testing.TB, v engram.VectorIndex, items []engram.VectorItem) {
	tb.Helper()
	if err := v.Upsert(context.Background(), items); err != nil {
		tb.Fatalf("Upsert(%d items): %v", len(items), err)
	}
}

func mustQuery(tb testing.TB, v engram.VectorIndex, q engram.VectorQuery) []engram.VectorHit {
	tb.Helper()
	hits, err := v.Query(context.Background(), q)
	if err != nil {
		tb.Fatalf("Query: %v", err)
	}
	return hits
}

func mustCount(tb testing.TB, v engram.VectorIndex, want int) {
	tb.Helper()
	n, err := v.Count(context.Background())
	if err != nil {
		tb.Fatalf("Count: %v", err)
	}
	if n != want {
		tb.Fatalf("Count = %d, want %d", n, want)
	}
}

// wantCode fails unless err has the code and its message mentions each of
// mention.
func wantCode(tb testing.TB, what string, err error, code string, mention ...string) {
	tb.Helper()
	if got := engram.ErrorCode(err); got != code {
		tb.Fatalf("%s: got code %q (%v), want %q", what, got, err, code)
	}
	for _, m := range mention {
		if !strings.Contains(engram.ErrorMessage(err), m) {
			tb.Fatalf("%s: message %q does not mention %q", what, engram.ErrorMessage(err), m)
		}
	}
}

// allStored returns every stored vector of v by id.
func allStored(tb testing.TB, v *palace.VectorStore) map[string]palace.StoredVector {
	tb.Helper()
	out := make(map[string]palace.StoredVector)
	var after int64
	for {
		page, err := v.VectorsSince(context.Background(), after, 50)
		if err != nil {
			tb.Fatalf("VectorsSince(%d): %v", after, err)
		}
		if len(page) == 0 {
			return out
		}
		for _, sv := range page {
			after = sv.Seq
			out[sv.ID] = sv
		}
	}
}

func make8(x float32) []float32 { return []float32{x, 0, 0, 0, 0, 0, 0, 0} }

func TestVectors_ReopenPersists(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "palace.db")
	rng := rand.New(rand.NewPCG(1, 1))
	items := vectortest.RandomItems(rng, "p", 60, 16)
	items[3].Vector[0] = float32(math.SmallestNonzeroFloat32) // rounds to 0 in half precision
	queries := vectortest.RandomItems(rng, "q", 5, 16)

	db := openDBAt(t, path)
	v := openIndex(t, db, "m", 16)
	mustUpsert(t, v, items[:40])
	if err := v.Load(ctx); err != nil {
		t.Fatal(err)
	}
	mustUpsert(t, v, items[30:]) // 10 replaced (same values), 20 new
	if err := v.Delete(ctx, []string{"p1", "p2"}); err != nil {
		t.Fatal(err)
	}
	var before [][]engram.VectorHit
	for _, q := range queries {
		before = append(before, mustQuery(t, v, engram.VectorQuery{Vector: q.Vector, K: 10}))
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = openDBAt(t, path)
	v = openIndex(t, db, "m", 0) // the dimension comes from the palace
	if v.Dim() != 16 {
		t.Fatalf("reopened dim = %d, want 16", v.Dim())
	}
	if v.Loaded() {
		t.Fatal("index loaded before any query")
	}
	mustCount(t, v, 58)
	got := allStored(t, storeOf(v))
	if len(got) != 58 {
		t.Fatalf("%d vectors stored, want 58", len(got))
	}
	for _, it := range items {
		sv, ok := got[it.ID]
		if it.ID == "p1" || it.ID == "p2" {
			if ok {
				t.Errorf("deleted %s came back", it.ID)
			}
			continue
		}
		if !ok || !vectortest.SameItem(sv.VectorItem, it) {
			t.Errorf("%s reloaded as %+v, want %+v", it.ID, sv.VectorItem, it)
		}
	}
	for i, q := range queries {
		after := mustQuery(t, v, engram.VectorQuery{Vector: q.Vector, K: 10})
		if !slices.Equal(after, before[i]) {
			t.Errorf("query %d after reopen:\n got %v\nwant %v", i, after, before[i])
		}
	}
	if !v.Loaded() {
		t.Fatal("index not loaded after a query")
	}
	mustCount(t, v, 58)
}

func TestVectors_ModelIsolation(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	a := openIndex(t, db, "a", 4)
	b := openIndex(t, db, "b", 8)
	if again, err := db.Vectors(ctx, "a", 4); err != nil || again != storeOf(a) {
		t.Fatalf("Vectors returned a second store for one model (%v)", err)
	}
	// The same ids in both models, pointing different ways.
	mustUpsert(t, a, []engram.VectorItem{
		{ID: "x", Kind: "turn", Namespace: "n", Vector: []float32{1, 0, 0, 0}},
		{ID: "y", Kind: "turn", Namespace: "n", Vector: []float32{0, 1, 0, 0}},
	})
	mustUpsert(t, b, []engram.VectorItem{
		{ID: "x", Kind: "memory", Namespace: "n", Vector: []float32{0, 0, 0, 0, 0, 0, 0, 1}},
		{ID: "z", Kind: "memory", Namespace: "n", Vector: []float32{1, 0, 0, 0, 0, 0, 0, 0}},
		{ID: "w", Kind: "memory", Namespace: "n", Vector: []float32{0, 1, 0, 0, 0, 0, 0, 0}},
	})
	mustCount(t, a, 2)
	mustCount(t, b, 3)
	hits := mustQuery(t, a, engram.VectorQuery{Vector: []float32{1, 0, 0, 0}, K: 10})
	if ids := vectortest.HitIDs(hits); !slices.Equal(ids, []string{"x", "y"}) || hits[0].Kind != "turn" || hits[0].Score < 0.9999 {
		t.Fatalf("model a: got %+v", hits)
	}
	hits = mustQuery(t, b, engram.VectorQuery{Vector: []float32{0, 0, 0, 0, 0, 0, 0, 1}, K: 10})
	if len(hits) != 3 || hits[0].ID != "x" || hits[0].Kind != "memory" {
		t.Fatalf("model b: got %+v", hits)
	}
	if err := a.Delete(ctx, []string{"x"}); err != nil {
		t.Fatal(err)
	}
	mustCount(t, a, 1)
	mustCount(t, b, 3)
	if got := allStored(t, storeOf(b)); len(got) != 3 || got["x"].Kind != "memory" {
		t.Fatalf("model b after deleting x from a: %v", got)
	}
	// Each model's dimension is its own.
	err := a.Upsert(ctx, []engram.VectorItem{{ID: "q", Vector: make8(1)}})
	wantCode(t, "8 dimensions into a", err, engram.EINVALID, "4", "8", `"a"`)

	if da, db := storeOf(a).Dim(), storeOf(b).Dim(); da != 4 || db != 8 {
		t.Fatalf("dimensions: a %d, b %d; want 4 and 8", da, db)
	}
}

func TestVectors_QueryCanceled(t *testing.T) {
	db := openDB(t)
	v := openIndex(t, db, "m", 4)
	mustUpsert(t, v, []engram.VectorItem{{ID: "x", Vector: []float32{1, 0, 0, 0}}})
	if err := v.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := v.Query(ctx, engram.VectorQuery{Vector: []float32{1, 0, 0, 0}, K: 1}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Query with a canceled context: %v", err)
	}
}

// TestVectors_Concurrent runs queries beside upserts, deletes, loads and
// unloads; -race checks the locking, checkMatrix the result.
func TestVectors_Concurrent(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	const dim = 16
	a := openIndex(t, db, "a", dim)
	b := openIndex(t, db, "b", dim)
	rng := rand.New(rand.NewPCG(8, 8))
	items := vectortest.RandomItems(rng, "c", 1200, dim)
	mustUpsert(t, a, items[:200])
	mustUpsert(t, b, items[:200])
	queries := vectortest.RandomItems(rng, "q", 20, dim)

	errs := make(chan error, 16)
	stop := testutil.Writers(t, 3, func(w, i int) bool {
		v := []*vecindex.Index{a, b}[(i+w)%2]
		q := engram.VectorQuery{Vector: queries[i%len(queries)].Vector, K: 5}
		if i%3 == 1 {
			q.Namespace = "work"
		}
		hits, err := v.Query(ctx, q)
		if err == nil && (len(hits) == 0 || len(hits) > 5) {
			err = fmt.Errorf("%d hits", len(hits))
		}
		if err == nil {
			_, err = v.Count(ctx)
		}
		if err != nil {
			errs <- err
			return false
		}
		return true
	})
	// Switch the active model back and forth, unloading the retired one,
	// for the first half of the writes; the second half goes to loaded
	// matrices, which checkMatrix compares with SQLite.
	stopSwitch := testutil.Writers(t, 1, func(_, i int) bool {
		if err := db.ActivateModel(ctx, []string{"a", "b"}[i%2]); err != nil {
			errs <- err
			return false
		}
		[]*vecindex.Index{b, a}[i%2].Unload()
		runtime.Gosched()
		return true
	})
	for start := 200; start < len(items); start += 50 {
		if start == 700 {
			stopSwitch()
			for _, v := range []*vecindex.Index{a, b} {
				if err := v.Load(ctx); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := storeOf(a).PutTurnVectors(ctx, items[start:start+50], int64(start+50)); err != nil {
			t.Fatal(err)
		}
		if err := b.Upsert(ctx, items[start:start+50]); err != nil {
			t.Fatal(err)
		}
		if err := a.Delete(ctx, []string{items[start-100].ID, items[start-99].ID}); err != nil {
			t.Fatal(err)
		}
	}
	stop()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if !a.Loaded() || !b.Loaded() {
		t.Fatal("a matrix was unloaded after the switching stopped")
	}
	mustCount(t, a, len(items)-2*20)
	mustCount(t, b, len(items))
	if wm, err := storeOf(a).Watermark(ctx); err != nil || wm != int64(len(items)) {
		t.Fatalf("Watermark of a = %d, %v; want %d", wm, err, len(items))
	}
	for _, x := range []*vecindex.Index{a, b} {
		checkMatrix(t, x)
	}
}

// checkMatrix verifies that x's loaded matrix holds exactly the store's
// rows: the store's check finds no row missing or different, and a matrix
// built afresh from the store (Reload) has the same rows with the same
// metadata.
func checkMatrix(tb testing.TB, x *vecindex.Index) {
	tb.Helper()
	ctx := context.Background()
	c, err := storeOf(x).Check(ctx, 0)
	if err != nil {
		tb.Fatal(err)
	}
	if !c.Loaded || c.OnlyInMem+c.OnlyInStore+c.Differ != 0 || c.InMemory != c.Stored {
		tb.Fatalf("model %s: the matrix differs from the store: %+v", x.Model(), c)
	}
	before := vecindex.Rows(x)
	if _, err := x.Reload(ctx); err != nil {
		tb.Fatal(err)
	}
	if after := vecindex.Rows(x); fmt.Sprint(before) != fmt.Sprint(after) {
		tb.Fatalf("model %s: the matrix (%d rows) differs from one loaded afresh (%d rows)", x.Model(), len(before), len(after))
	}
}

func TestVectors_TimeEdges(t *testing.T) {
	ctx := context.Background()
	minTime, maxTime := time.Unix(0, math.MinInt64).UTC(), time.Unix(0, math.MaxInt64).UTC()
	db := openDB(t)
	v := openIndex(t, db, "m", 2)
	mustUpsert(t, v, []engram.VectorItem{
		{ID: "zero", Vector: []float32{1, 0}},
		{ID: "max", TS: maxTime, Vector: []float32{1, 0.1}},
		{ID: "mid", TS: vectortest.T0, Vector: []float32{1, 0.2}},
	})
	for _, c := range []struct {
		name     string
		from, to time.Time
		want     []string
	}{
		{"all", time.Time{}, time.Time{}, []string{"zero", "max", "mid"}},
		{"from mid", vectortest.T0, time.Time{}, []string{"max", "mid"}},
		{"to mid", time.Time{}, vectortest.T0, []string{"zero"}},
		{"to beyond", vectortest.T0.Add(-time.Nanosecond), maxTime.Add(time.Hour), []string{"max", "mid"}},
		{"from 1500", time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC), time.Time{}, []string{"max", "mid"}},
	} {
		hits := mustQuery(t, v, engram.VectorQuery{Vector: []float32{1, 0}, K: 5, From: c.from, To: c.to})
		if !slices.Equal(vectortest.HitIDs(hits), c.want) {
			t.Errorf("%s: got %v, want %v", c.name, vectortest.HitIDs(hits), c.want)
		}
	}
	err := v.Upsert(ctx, []engram.VectorItem{{ID: "old", TS: minTime, Vector: []float32{1, 0}}})
	wantCode(t, "a time at minTime", err, engram.EINVALID, "1678")
}

// TestIndex_Follows: writes made through the store, not the index (the
// pipeline's PutTurnVectors, a drop of bad rows), reach the loaded matrix;
// a second index loaded over the same store releases the first one's
// matrix, so that a model is held in memory once; dropping the model
// releases it too.
func TestIndex_Follows(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	a := openIndex(t, db, "m", 4)
	if err := a.Load(ctx); err != nil {
		t.Fatal(err)
	}
	err := storeOf(a).PutTurnVectors(ctx, []engram.VectorItem{{ID: "x", Kind: engram.KindTurn, Vector: []float32{1, 0, 0, 0}}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if hits := mustQuery(t, a, engram.VectorQuery{Vector: []float32{1, 0, 0, 0}, K: 1}); !slices.Equal(vectortest.HitIDs(hits), []string{"x"}) {
		t.Fatalf("the store's write did not reach the matrix: %v", hits)
	}

	b := vecindex.New(storeOf(a))
	if err := b.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if a.Loaded() || !b.Loaded() {
		t.Fatalf("after a second index loaded: first loaded %v, second %v; want only the second", a.Loaded(), b.Loaded())
	}
	mustCount(t, b, 1)

	if err := db.DropModel(ctx, "m"); err != nil {
		t.Fatal(err)
	}
	if b.Loaded() {
		t.Fatal("the matrix of a dropped model is still loaded")
	}
	_, err = b.Query(ctx, engram.VectorQuery{Vector: []float32{1, 0, 0, 0}, K: 1})
	wantCode(t, "query of a dropped model", err, engram.ENOTFOUND, "dropped")
}

// The palace's store is the Store the index runs over in engram.
var _ vecindex.Store = (*palace.VectorStore)(nil)
