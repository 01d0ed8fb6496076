package palace

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/sqlrow"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/internal/vecrow"
	"github.com/engram-dev/engram/internal/vectortest"
	"github.com/engram-dev/engram/vecindex"
	"github.com/x448/float16"
)

// MustOpenVectors returns the vector store of model in db.
func MustOpenVectors(tb testing.TB, db *DB, model string, dim int) *VectorStore {
	tb.Helper()
	v, err := db.Vectors(context.Background(), model, dim)
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

func mustUpsert(tb testing.TB, v *VectorStore, items []engram.VectorItem) {
	tb.Helper()
	if err := v.Upsert(context.Background(), items); err != nil {
		tb.Fatalf("Upsert(%d items): %v", len(items), err)
	}
}

// indexes holds the in-memory index of each store a test queries: one a
// store, as in engram.
var indexes sync.Map // *VectorStore to *vecindex.Index

// indexOf returns the in-memory index over v.
func indexOf(v *VectorStore) *vecindex.Index {
	x, _ := indexes.LoadOrStore(v, vecindex.New(v))
	return x.(*vecindex.Index)
}

func mustQuery(tb testing.TB, v *VectorStore, q engram.VectorQuery) []engram.VectorHit {
	tb.Helper()
	hits, err := indexOf(v).Query(context.Background(), q)
	if err != nil {
		tb.Fatalf("Query: %v", err)
	}
	return hits
}

func mustCount(tb testing.TB, v *VectorStore, want int) {
	tb.Helper()
	n, err := v.Count(context.Background())
	if err != nil {
		tb.Fatalf("Count: %v", err)
	}
	if n != want {
		tb.Fatalf("Count of %s = %d, want %d", v.Model(), n, want)
	}
}

func mustWatermark(tb testing.TB, v *VectorStore, want int64) {
	tb.Helper()
	got, err := v.Watermark(context.Background())
	if err != nil {
		tb.Fatalf("Watermark: %v", err)
	}
	if got != want {
		tb.Fatalf("Watermark of %s = %d, want %d", v.Model(), got, want)
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
func allStored(tb testing.TB, v *VectorStore) map[string]StoredVector {
	tb.Helper()
	out := make(map[string]StoredVector)
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
			if sv.Seq <= after {
				tb.Fatalf("VectorsSince(%d) returned seq %d", after, sv.Seq)
			}
			after = sv.Seq
			out[sv.ID] = sv
		}
	}
}

func make8(x float32) []float32 { return []float32{x, 0, 0, 0, 0, 0, 0, 0} }

func TestVectors_DimensionGuard(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "palace.db")
	db := MustOpenDBAt(t, path, Options{})
	v := MustOpenVectors(t, db, "builtin-v1", 512)

	_, err := db.Vectors(ctx, "builtin-v1", 1024)
	wantCode(t, "cached model, other dimension", err, engram.ECONFLICT, "512", "1024", "builtin-v1")
	_, err = db.Vectors(ctx, "bge-m3", 0)
	wantCode(t, "new model of unknown dimension", err, engram.EINVALID, "bge-m3")
	for _, name := range []string{"", strings.Repeat("x", MaxModelNameBytes+1), "\xff"} {
		_, err = db.Vectors(ctx, name, 4)
		wantCode(t, fmt.Sprintf("model name %q", name), err, engram.EINVALID)
	}
	for _, dim := range []int{-1, MaxVectorDim + 1} {
		_, err = db.Vectors(ctx, "odd", dim)
		wantCode(t, fmt.Sprintf("dimension %d", dim), err, engram.EINVALID)
	}

	// A vector of another dimension is refused, naming both.
	err = v.Upsert(ctx, []engram.VectorItem{{ID: "a", Vector: make([]float32, 1024)}})
	wantCode(t, "Upsert of 1024 into 512", err, engram.EINVALID, "512", "1024")
	_, err = indexOf(v).Query(ctx, engram.VectorQuery{Vector: []float32{1, 2, 3}, K: 1})
	wantCode(t, "Query of 3 against 512", err, engram.EINVALID, "512", "3")
	err = v.PutTurnVectors(ctx, []engram.VectorItem{{ID: "a", Vector: make([]float32, 1024)}}, 5)
	wantCode(t, "PutTurnVectors of 1024 into 512", err, engram.EINVALID, "512", "1024")
	mustWatermark(t, v, 0)

	// After a reopen the guard comes from the palace, not the cache.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = MustOpenDBAt(t, path, Options{})
	_, err = db.Vectors(ctx, "builtin-v1", 384)
	wantCode(t, "stored model, other dimension", err, engram.ECONFLICT, "512", "384")
	if _, err := db.Vectors(ctx, "builtin-v1", 512); err != nil {
		t.Fatalf("same dimension after reopen: %v", err)
	}
}

func TestVectors_ModelStates(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 5, 1, 14, 0, 0, 0, time.UTC)
	db := MustOpenDBAt(t, filepath.Join(t.TempDir(), "palace.db"), Options{Now: func() time.Time { return now }})

	if _, _, ok, err := db.ActiveModel(ctx); err != nil || ok {
		t.Fatalf("new palace: ActiveModel ok=%v err=%v, want none", ok, err)
	}
	a := MustOpenVectors(t, db, "a", 4)
	wantStates(t, db, map[string]string{"a": ModelBuilding})
	if _, _, ok, _ := db.ActiveModel(ctx); ok {
		t.Fatal("a building model is active")
	}
	if err := db.ActivateModel(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	wantActive(t, db, "a", 4)
	mustUpsert(t, a, []engram.VectorItem{{ID: "x", Vector: []float32{1, 0, 0, 0}}})
	mustQuery(t, a, engram.VectorQuery{Vector: []float32{1, 0, 0, 0}, K: 1})
	if !indexOf(a).Loaded() {
		t.Fatal("a not loaded after a query")
	}

	// A re-embed: b fills while a stays active, then takes over.
	now = now.Add(time.Hour)
	b := MustOpenVectors(t, db, "b", 8)
	if err := b.PutTurnVectors(ctx, []engram.VectorItem{{ID: "x", Vector: make8(1)}}, 1); err != nil {
		t.Fatal(err)
	}
	wantActive(t, db, "a", 4)
	if err := db.ActivateModel(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	wantActive(t, db, "b", 8)
	wantStates(t, db, map[string]string{"a": ModelRetired, "b": ModelActive})
	if !indexOf(a).Loaded() {
		t.Fatal("activating b unloaded a: recall may still be querying it")
	}
	indexOf(a).Unload()
	if indexOf(a).Loaded() {
		t.Fatal("a still loaded after Unload")
	}
	mustCount(t, a, 1) // the retired model keeps its vectors
	if err := db.ActivateModel(ctx, "b"); err != nil {
		t.Fatalf("activating the active model: %v", err)
	}
	models := listModels(t, db)
	if !models[1].ActivatedAt.Equal(now) || !models[1].CreatedAt.Equal(now) || models[1].EmbeddedSeq != 1 || models[1].LastSeq != 1 {
		t.Fatalf("b: %+v", models[1])
	}

	wantCode(t, "activate unknown", db.ActivateModel(ctx, "nope"), engram.ENOTFOUND, "nope")
	wantCode(t, "state of unknown", db.SetModelState(ctx, "nope", ModelRetired), engram.ENOTFOUND)
	wantCode(t, "bad state", db.SetModelState(ctx, "a", "paused"), engram.EINVALID, "paused")
	wantCode(t, "drop active", db.DropModel(ctx, "b"), engram.ECONFLICT, "active")
	wantCode(t, "drop unknown", db.DropModel(ctx, "nope"), engram.ENOTFOUND)

	// Switching back to a retired model needs no re-embed.
	if err := db.SetModelState(ctx, "a", ModelActive); err != nil {
		t.Fatal(err)
	}
	wantStates(t, db, map[string]string{"a": ModelActive, "b": ModelRetired})
	if hits := mustQuery(t, a, engram.VectorQuery{Vector: []float32{1, 0, 0, 0}, K: 1}); len(hits) != 1 {
		t.Fatalf("reactivated a: %v", hits)
	}

	// Dropping b removes its vectors; its index is dead, a new one starts empty.
	if err := db.DropModel(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	wantStates(t, db, map[string]string{"a": ModelActive})
	_, err := indexOf(b).Query(ctx, engram.VectorQuery{Vector: make8(1), K: 1})
	wantCode(t, "query of a dropped model", err, engram.ENOTFOUND, "dropped")
	wantCode(t, "upsert into a dropped model", b.Upsert(ctx, []engram.VectorItem{{ID: "y", Vector: make8(1)}}), engram.ENOTFOUND)
	_, err = b.Count(ctx)
	wantCode(t, "count of a dropped model", err, engram.ENOTFOUND)
	b2 := MustOpenVectors(t, db, "b", 16) // a new model of the name may have another dimension
	if b2 == b {
		t.Fatal("Vectors returned the dropped index")
	}
	mustCount(t, b2, 0)
	mustWatermark(t, b2, 0)
	assertNoRows(t, db, `SELECT count(*) FROM vectors WHERE model = 'b'`)

	// Retiring the active model leaves none active.
	if err := db.SetModelState(ctx, "a", ModelRetired); err != nil {
		t.Fatal(err)
	}
	if _, _, ok, _ := db.ActiveModel(ctx); ok {
		t.Fatal("a model is active after retiring the active one")
	}
	if err := db.DropModel(ctx, "a"); err != nil {
		t.Fatal(err)
	}
}

func wantActive(tb testing.TB, db *DB, model string, dim int) {
	tb.Helper()
	m, d, ok, err := db.ActiveModel(context.Background())
	if err != nil || !ok || m != model || d != dim {
		tb.Fatalf("ActiveModel = %q, %d, %v, %v; want %q, %d", m, d, ok, err, model, dim)
	}
}

func wantStates(tb testing.TB, db *DB, want map[string]string) {
	tb.Helper()
	models := listModels(tb, db)
	got := make(map[string]string)
	for _, m := range models {
		got[m.Model] = m.State
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		tb.Fatalf("model states = %v, want %v", got, want)
	}
}

func assertNoRows(tb testing.TB, db *DB, q string) {
	tb.Helper()
	var n int
	if err := db.View(context.Background(), func(tx *sql.Tx) error { return tx.QueryRow(q).Scan(&n) }); err != nil {
		tb.Fatal(err)
	}
	if n != 0 {
		tb.Fatalf("%s = %d, want 0", q, n)
	}
}

func TestVectors_WatermarkAtomic(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	v := MustOpenVectors(t, db, "m", 4)
	if err := indexOf(v).Load(ctx); err != nil {
		t.Fatal(err)
	}
	mustWatermark(t, v, 0)
	put := func(seq int64, ids ...string) error {
		items := make([]engram.VectorItem, len(ids))
		for i, id := range ids {
			items[i] = engram.VectorItem{ID: id, Kind: engram.KindTurn, Namespace: "n", TS: vectortest.T0, Vector: []float32{1, float32(i), 0, 1}}
		}
		return v.PutTurnVectors(ctx, items, seq)
	}
	if err := put(3, "t1", "t2", "t3"); err != nil {
		t.Fatal(err)
	}
	mustWatermark(t, v, 3)
	if err := put(5); err != nil { // turns 4 and 5 gave no vector
		t.Fatal(err)
	}
	mustWatermark(t, v, 5)
	if err := put(2, "t2"); err != nil { // a replay never moves it back
		t.Fatal(err)
	}
	mustWatermark(t, v, 5)
	wantCode(t, "negative watermark", v.PutTurnVectors(ctx, nil, -1), engram.EINVALID)

	// Refused before the transaction: nothing moves.
	err := v.PutTurnVectors(ctx, []engram.VectorItem{
		{ID: "t6", Vector: []float32{1, 0, 0, 0}},
		{ID: "t7", Vector: []float32{0, 0, 0, 0}},
	}, 7)
	wantCode(t, "a zero vector in the batch", err, engram.EINVALID, "t7")
	mustWatermark(t, v, 5)
	mustCount(t, v, 3)

	// Failing inside the transaction, after some rows were written: SQLite
	// refuses the third row, and the whole batch and the watermark roll back.
	err = db.Update(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`CREATE TEMP TRIGGER fail_boom BEFORE INSERT ON vectors WHEN NEW.id = 'boom'
			BEGIN SELECT RAISE(ABORT, 'boom refused'); END`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	err = put(9, "t6", "t1", "boom", "t8")
	if err == nil || !strings.Contains(err.Error(), "boom refused") {
		t.Fatalf("put with a failing row: err = %v", err)
	}
	mustWatermark(t, v, 5)
	mustCount(t, v, 3)
	if got := allStored(t, v); len(got) != 3 || got["t1"].Vector[1] != 0 {
		t.Fatalf("stored after the failed put: %v", got)
	}
	if hits := mustQuery(t, v, engram.VectorQuery{Vector: []float32{1, 1, 0, 1}, K: 10}); !slices.Equal(vectortest.HitIDs(hits), []string{"t3", "t1", "t2"}) {
		t.Fatalf("matrix after the failed put: %v", vectortest.HitIDs(hits))
	}
	models := listModels(t, db)
	if models[0].LastSeq != 4 {
		t.Fatalf("last_seq after the failed put = %d, want 4", models[0].LastSeq)
	}

	// The next put goes through.
	if err := put(9, "t6", "t8"); err != nil {
		t.Fatal(err)
	}
	mustWatermark(t, v, 9)
	mustCount(t, v, 5)
}

func TestVectors_SyncFeed(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	v := MustOpenVectors(t, db, "m", 8)
	items := vectortest.RandomItems(rand.New(rand.NewPCG(4, 4)), "s", 10, 8)
	mustUpsert(t, v, items[:6])
	mustUpsert(t, v, items[6:])
	mustUpsert(t, v, items[2:3]) // s2 moves to the end of the feed

	page, err := v.VectorsSince(ctx, 0, 4)
	if err != nil {
		t.Fatal(err)
	}
	if ids := storedIDs(page); !slices.Equal(ids, []string{"s0", "s1", "s3", "s4"}) {
		t.Fatalf("first page: %v", ids)
	}
	if page[0].Seq != 1 || page[3].Seq != 5 {
		t.Fatalf("first page seqs: %d..%d", page[0].Seq, page[3].Seq)
	}
	if last, err := v.LastChange(ctx); err != nil || last != 11 {
		t.Fatalf("LastChange = %d, %v; want 11", last, err)
	}
	if seq, err := v.SyncedSeq(ctx); err != nil || seq != 0 {
		t.Fatalf("SyncedSeq = %d, %v; want 0", seq, err)
	}
	if err := v.SetSyncedSeq(ctx, page[3].Seq); err != nil {
		t.Fatal(err)
	}
	seq, err := v.SyncedSeq(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rest, err := v.VectorsSince(ctx, seq, 100)
	if err != nil {
		t.Fatal(err)
	}
	if ids := storedIDs(rest); !slices.Equal(ids, []string{"s5", "s6", "s7", "s8", "s9", "s2"}) {
		t.Fatalf("rest: %v", ids)
	}
	if !vectortest.SameItem(rest[5].VectorItem, items[2]) || rest[5].Seq != 11 {
		t.Fatalf("s2 = %+v, want %+v at seq 11", rest[5], items[2])
	}
	wantCode(t, "synced beyond the last change", v.SetSyncedSeq(ctx, 12), engram.EINVALID, "12", "11")
	wantCode(t, "negative synced seq", v.SetSyncedSeq(ctx, -1), engram.EINVALID)
	_, err = v.VectorsSince(ctx, 0, 0)
	wantCode(t, "limit 0", err, engram.EINVALID)
	if err := v.SetSyncedSeq(ctx, 0); err != nil { // a rebuild starts over
		t.Fatal(err)
	}
}

func storedIDs(svs []StoredVector) []string {
	ids := make([]string, len(svs))
	for i, sv := range svs {
		ids[i] = sv.ID
	}
	return ids
}

func TestVectors_Closed(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	v := MustOpenVectors(t, db, "m", 4)
	mustUpsert(t, v, []engram.VectorItem{{ID: "x", Vector: []float32{1, 0, 0, 0}}})
	mustQuery(t, v, engram.VectorQuery{Vector: []float32{1, 0, 0, 0}, K: 1})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := indexOf(v).Query(ctx, engram.VectorQuery{Vector: []float32{1, 0, 0, 0}, K: 1})
	if !errors.Is(err, ErrClosed) {
		t.Fatalf("Query after Close: %v, want ErrClosed", err)
	}
	wantCode(t, "Upsert after Close", v.Upsert(ctx, []engram.VectorItem{{ID: "y", Vector: []float32{1, 0, 0, 0}}}), engram.EUNAVAILABLE)
	_, err = db.Vectors(ctx, "m", 4)
	wantCode(t, "Vectors after Close", err, engram.EUNAVAILABLE) // cached, but the palace is closed
}

// checkVectorInvariants verifies the vector tables, and that each attached
// in-memory index holds exactly what SQLite holds (VectorStore.Check).
func checkVectorInvariants(tb testing.TB, db *DB) {
	tb.Helper()
	ctx := context.Background()
	for _, q := range []string{
		`SELECT count(*) FROM vectors v LEFT JOIN vector_models m USING (model) WHERE m.dim IS NOT v.dim`,
		`SELECT count(*) FROM vectors v JOIN vector_models m USING (model) WHERE v.seq < 1 OR v.seq > m.last_seq`,
		`SELECT count(*) FROM vector_models WHERE synced_seq > last_seq`,
	} {
		assertNoRows(tb, db, q)
	}
	db.vectors.mu.Lock()
	stores := maps.Clone(db.vectors.byModel)
	db.vectors.mu.Unlock()
	for model, v := range stores {
		c, err := v.Check(ctx, 0)
		if err != nil {
			tb.Errorf("model %s: %v", model, err)
			continue
		}
		if c.Loaded && (c.OnlyInMem+c.OnlyInStore+c.Differ != 0 || c.InMemory != c.Stored) {
			tb.Errorf("model %s: the in-memory index (%d rows) differs from SQLite (%d rows): %+v", model, c.InMemory, c.Stored, c)
		}
	}
}

// TestMigrateVectors: a palace written before migration 0012 (vectors
// float32 as written) or before 0016 (unit vectors in half precision)
// opens with every vector converted to the int8 codes of its unit vector,
// the freed pages given back (VACUUM), and queries answering as before.
func TestMigrateVectors(t *testing.T) {
	testutil.LongRun(t)
	for _, tc := range []struct {
		before string
		encode func(unit []float32) []byte
		most   float64 // the file's size after over before, at most
	}{
		{"vectors_half", func(unit []float32) []byte {
			raw := make([]byte, 0, 4*len(unit))
			for _, x := range unit {
				raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(3*x)) // as written: any length
			}
			return raw
		}, 0.34}, // 2,048 bytes a vector at 512 dimensions to 516
		{"vectors_int8", func(unit []float32) []byte {
			raw := make([]byte, 0, 2*len(unit))
			for _, x := range unit {
				raw = binary.LittleEndian.AppendUint16(raw, uint16(float16.Fromfloat32(x)))
			}
			return raw
		}, 0.67}, // 1,024 bytes to 516
	} {
		t.Run(tc.before, func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "palace.db")
			const dim, n = 512, 2000 // enough rows that they, not the empty tables' first pages, make the file
			rng := rand.New(rand.NewPCG(3, 4))
			items := vectortest.RandomItems(rng, "v", n, dim)
			units := map[string][]float32{}
			palaceBefore(t, path, tc.before, func(ctx context.Context, tx *sql.Tx) error {
				if _, err := tx.ExecContext(ctx, `INSERT INTO vector_models (model, dim, state, created_at, last_seq) VALUES ('m', ?, 'active', 0, ?)`, dim, n); err != nil {
					return err
				}
				for i, it := range items {
					unit := make([]float32, dim)
					vecrow.Normalize(unit, it.Vector)
					units[it.ID] = unit
					if _, err := tx.ExecContext(ctx, `INSERT INTO vectors (model, id, kind, namespace, dim, vec, seq) VALUES ('m', ?, ?, ?, ?, ?, ?)`,
						it.ID, it.Kind, it.Namespace, dim, tc.encode(unit), i+1); err != nil {
						return err
					}
				}
				return nil
			})
			sizeBefore := fileSize(t, path)

			db := MustOpenDBAt(t, path, Options{})
			v := MustOpenVectors(t, db, "m", 0)
			got := allStored(t, v)
			if len(got) != n {
				t.Fatalf("%d vectors after the migration, want %d", len(got), n)
			}
			for _, it := range items {
				sv := got[it.ID]
				if sv.Kind != it.Kind || sv.Namespace != it.Namespace || !sv.TS.IsZero() {
					t.Fatalf("%s migrated as %+v", it.ID, sv.VectorItem)
				}
				if c := engram.Cosine(sv.Vector, units[it.ID]); c < 0.999 {
					t.Fatalf("%s migrated to a vector at cosine %v from what was stored", it.ID, c)
				}
			}
			for _, it := range items[:20] {
				if hits := mustQuery(t, v, engram.VectorQuery{Vector: it.Vector, K: 1}); len(hits) != 1 || hits[0].ID != it.ID || hits[0].Score < 0.999 {
					t.Fatalf("query by %s's own vector: %v", it.ID, hits)
				}
			}
			var free int64
			if err := db.w.QueryRowContext(ctx, `PRAGMA freelist_count`).Scan(&free); err != nil || free != 0 {
				t.Fatalf("free pages after the migration: %d, %v", free, err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			if after := fileSize(t, path); float64(after) > tc.most*float64(sizeBefore) {
				t.Fatalf("palace.db is %d bytes after the migration, %d before", after, sizeBefore)
			}
		})
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// modelRow is a row of vector_models, with the count of the model's
// vectors.
type modelRow struct {
	Model                         string
	Dim                           int
	State                         string
	CreatedAt, ActivatedAt        time.Time
	Vectors, EmbeddedSeq, LastSeq int64
	SyncedSeq                     int64
}

// listModels returns every vector model of db, oldest first.
func listModels(tb testing.TB, db *DB) []modelRow {
	tb.Helper()
	out, err := viewList(context.Background(), db, "models", sqlrow.Scanner(func(m *modelRow) []any {
		return []any{&m.Model, &m.Dim, &m.State, sqlrow.Time(&m.CreatedAt), sqlrow.Time(&m.ActivatedAt),
			&m.EmbeddedSeq, &m.LastSeq, &m.SyncedSeq, &m.Vectors}
	}), `SELECT m.model, m.dim, m.state, m.created_at, m.activated_at, m.embedded_seq, m.last_seq, m.synced_seq,
		(SELECT count(*) FROM vectors v WHERE v.model = m.model)
		FROM vector_models m ORDER BY m.created_at, m.model`)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}
