package pgpalace

import (
	"context"
	"database/sql"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/pgtest"
	"github.com/engram-dev/engram/internal/vectortest"
	"github.com/engram-dev/engram/pgpalace/pgvectors"
	"github.com/engram-dev/engram/pipeline"
	"github.com/engram-dev/engram/vecindex"
)

// index opens the in-process index of model's vectors in db.
func index(t *testing.T, db *DB, model string, dim int) *vecindex.Index {
	t.Helper()
	s, err := db.Vectors(t.Context(), model, dim)
	if err != nil {
		t.Fatal(err)
	}
	return vecindex.New(s)
}

// TestVectorIndex_Conformance runs the vector indexes' conformance suite
// on the in-process index over this palace's store: loaded at its first
// query (what earlier writes put in the database), and loaded first
// (every write then reaches it through its catch-up).
func TestVectorIndex_Conformance(t *testing.T) {
	t.Run("lazy", func(t *testing.T) {
		vectortest.Run(t, func(t *testing.T, dim int) engram.VectorIndex { return index(t, open(t), "test", dim) })
	})
	t.Run("loaded", func(t *testing.T) {
		vectortest.Run(t, func(t *testing.T, dim int) engram.VectorIndex {
			x := index(t, open(t), "test", dim)
			if err := x.Load(t.Context()); err != nil {
				t.Fatal(err)
			}
			return x
		})
	})
}

// eventually waits until ok holds, polling; the run's deadline (go test
// -timeout) bounds it, less a margin to report which wait failed.
func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	ctx := t.Context()
	if d, set := t.Deadline(); set {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-time.Until(d)/10))
		defer cancel()
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !ok() {
		select {
		case <-ctx.Done():
			t.Fatalf("never: %s", what)
		case <-tick.C:
		}
	}
}

// TestVectors_FollowOtherServer checks that a server's loaded index finds
// the vectors another server writes, lets go of those it deletes or
// forgets, loads again when the journal of deletions no longer reaches
// back to it, and that Notify wakes for another server's write.
func TestVectors_FollowOtherServer(t *testing.T) {
	ctx := t.Context()
	url := pgtest.NewDatabase(t)
	a, b := openAt(t, url), openAt(t, url)
	const dim = 16
	items := vectortest.RandomItems(rand.New(rand.NewPCG(1, 2)), "v", 40, dim)
	xa, xb := index(t, a, "m", dim), index(t, b, "m", dim)
	if err := xa.Upsert(ctx, items[:10]); err != nil {
		t.Fatal(err)
	}
	if err := xb.Load(ctx); err != nil {
		t.Fatal(err)
	}
	sb, _ := b.Vectors(ctx, "m", dim)
	woken := sb.Notify()
	finds := func(x *vecindex.Index, it engram.VectorItem) bool {
		hits, err := x.Query(ctx, engram.VectorQuery{Vector: it.Vector, K: 1})
		return err == nil && len(hits) == 1 && hits[0].ID == it.ID && hits[0].Score > 0.99
	}
	if !finds(xb, items[3]) {
		t.Fatal("server B's index does not hold what A wrote before it loaded")
	}
	if err := xa.Upsert(ctx, items[10:30]); err != nil {
		t.Fatal(err)
	}
	eventually(t, "B finds the vectors A wrote after B loaded", func() bool { return finds(xb, items[25]) })
	select {
	case <-woken:
	case <-ctx.Done():
		t.Fatal("B's Notify did not wake for A's write")
	}
	if err := xa.Delete(ctx, []string{items[25].ID}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "B lets go of the vector A deleted", func() bool { n, _ := xb.Count(ctx); return !finds(xb, items[25]) && n == 29 })

	// A forget on A (a turn with a vector) reaches B's index.
	tu := engram.Turn{ID: items[4].ID, Seq: 1, Namespace: "ns", Session: "s", Role: engram.RoleUser, Content: "x", TS: time.Now()}
	if err := a.PutTurns(ctx, []engram.Turn{tu}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.ForgetTurns(ctx, []engram.ForgetTurn{{ID: tu.ID, Seq: 2}}, time.Now(), nil); err != nil {
		t.Fatal(err)
	}
	if finds(xa, items[4]) {
		t.Fatal("A's own index still finds the vector of the turn A forgot")
	}
	eventually(t, "B lets go of the vector of the turn A forgot", func() bool { return !finds(xb, items[4]) })

	// The journal of deletions pruned past the place of server C, which
	// does not poll: at its next write, C loads again, and holds exactly
	// what the store does.
	c := openAt(t, url)
	c.vectorPoll = 0
	xc := index(t, c, "m", dim)
	if err := xc.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if err := xa.Delete(ctx, []string{items[5].ID}); err != nil {
		t.Fatal(err)
	}
	if err := xa.Upsert(ctx, items[30:35]); err != nil {
		t.Fatal(err)
	}
	a.now = func() time.Time { return time.Now().Add(2 * pgvectors.DeletesKept) }
	if err := a.Optimize(ctx); err != nil {
		t.Fatal(err)
	}
	if !finds(xc, items[5]) || finds(xc, items[32]) {
		t.Fatal("server C, which does not poll, followed A's writes before its own")
	}
	if err := xc.Upsert(ctx, items[35:]); err != nil {
		t.Fatal(err)
	}
	if finds(xc, items[5]) || !finds(xc, items[32]) || !finds(xc, items[38]) {
		t.Fatal("server C does not hold what the store does after the journal was pruned past it")
	}
	if n, _ := xc.Count(ctx); n != 37 {
		t.Fatalf("the store counts %d vectors; want 37", n)
	}
	eventually(t, "B follows after the journal was pruned", func() bool { return finds(xb, items[38]) && !finds(xb, items[5]) })
}

// TestVectorStore checks the store's watermarks, its journal for an
// external index, a turn's vector that comes after the turn's forget, and
// the models' states, as package palace's store keeps them.
func TestVectorStore(t *testing.T) {
	ctx := t.Context()
	db := open(t)
	const dim = 8
	items := vectortest.RandomItems(rand.New(rand.NewPCG(3, 4)), "t", 12, dim)
	if _, err := db.Vectors(ctx, "m", 0); engram.ErrorCode(err) != engram.EINVALID {
		t.Fatalf("Vectors of a new model without a dimension = %v; want EINVALID", err)
	}
	v, err := db.Vectors(ctx, "m", dim)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Vectors(ctx, "m", dim+1); engram.ErrorCode(err) != engram.ECONFLICT {
		t.Fatalf("Vectors of another dimension = %v; want ECONFLICT", err)
	}
	if _, err := db.ForgetTurns(ctx, []engram.ForgetTurn{{ID: items[2].ID, Seq: 40}}, time.Now(), nil); err != nil {
		t.Fatal(err)
	}
	if err := v.PutTurnVectors(ctx, items[:6], 6); err != nil {
		t.Fatal(err)
	}
	if err := v.PutTurnVectors(ctx, nil, 4); err != nil { // never moves back
		t.Fatal(err)
	}
	if wm, _ := v.Watermark(ctx); wm != 6 {
		t.Fatalf("Watermark = %d; want 6", wm)
	}
	if n, _ := v.Count(ctx); n != 5 {
		t.Fatalf("Count = %d; want 5: the forgotten turn's vector is left out", n)
	}
	if err := v.PutLayerVectors(ctx, items[6:9], "vec:m:memories", 17); err != nil {
		t.Fatal(err)
	}
	if wm, _ := db.WorkerSeq(ctx, "vec:m:memories"); wm != 17 {
		t.Fatalf("the layer worker's watermark = %d; want 17", wm)
	}
	got, last, err := v.Since(ctx, 0, 100)
	if err != nil || len(got) != 8 || last != 8 {
		t.Fatalf("Since(0) = %d items through %d, %v; want 8 through 8", len(got), last, err)
	}
	if !vectortest.SameItem(got[0], items[0]) {
		t.Fatalf("Since reads %+v; want %+v as stored", got[0], items[0])
	}
	if err := v.SetSyncedSeq(ctx, 9); engram.ErrorCode(err) != engram.EINVALID {
		t.Fatalf("SetSyncedSeq beyond the last change = %v; want EINVALID", err)
	}
	if err := v.SetSyncedSeq(ctx, 5); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := v.Since(ctx, 5, 100); len(got) != 3 {
		t.Fatalf("Since(5) = %d items; want 3", len(got))
	}
	if err := v.Upsert(ctx, []engram.VectorItem{{ID: "bad", Vector: make([]float32, dim)}}); engram.ErrorCode(err) != engram.EINVALID {
		t.Fatalf("Upsert of a zero vector = %v; want EINVALID", err)
	}

	// Models: activate, retire, drop.
	if _, _, ok, _ := db.ActiveModel(ctx); ok {
		t.Fatal("a new palace has an active model")
	}
	if _, err := db.Vectors(ctx, "m2", dim); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"m", "m2"} {
		if err := db.ActivateModel(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if m, d, ok, err := db.ActiveModel(ctx); err != nil || !ok || m != "m2" || d != dim {
		t.Fatalf("ActiveModel = %s, %d, %v, %v; want m2", m, d, ok, err)
	}
	if err := db.DropModel(ctx, "m2"); engram.ErrorCode(err) != engram.ECONFLICT {
		t.Fatalf("DropModel of the active model = %v; want ECONFLICT", err)
	}
	if err := db.DropModel(ctx, "m"); err != nil {
		t.Fatal(err)
	}
	if err := v.Usable(); engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Fatalf("the dropped model's store = %v; want ENOTFOUND", err)
	}
	if err := db.SetModelState(ctx, "m", pgvectors.ModelRetired); engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Fatalf("SetModelState of a dropped model = %v; want ENOTFOUND", err)
	}
	if err := db.SetModelState(ctx, "m2", "asleep"); engram.ErrorCode(err) != engram.EINVALID {
		t.Fatalf("SetModelState to an unknown state = %v; want EINVALID", err)
	}
	if err := db.SetModelState(ctx, "m2", pgvectors.ModelRetired); err != nil {
		t.Fatal(err)
	}
	if _, _, ok, _ := db.ActiveModel(ctx); ok {
		t.Fatal("a model is active after the active one was retired")
	}
	if v2, err := db.Vectors(ctx, "m", dim); err != nil || v2 == v {
		t.Fatalf("Vectors of a dropped model = %v, %v; want the model made afresh", v2, err)
	}
}

// What the engine asks of a model's vectors, as far as this palace keeps
// them.
var (
	_ vecindex.Store            = (*pgvectors.Store)(nil)
	_ pipeline.VectorStore      = (*pgvectors.Store)(nil)
	_ pipeline.LayerVectorStore = (*pgvectors.Store)(nil)
	_ pipeline.VectorJournal    = (*pgvectors.Store)(nil)
)

// TestVectors_AsSQLite checks that a forget and a redaction take the same
// vectors out of this palace as out of package palace's, that a redaction
// names the same models and watermarks to put back, and that the doctor's
// check and repair of a model's vectors find the same.
func TestVectors_AsSQLite(t *testing.T) {
	ctx := t.Context()
	turns := searchTurns(t)[:60]
	pg, lite := bothPalaces(t, turns, 30)
	const dim = 8
	rng := rand.New(rand.NewPCG(5, 6))
	var items []engram.VectorItem
	for _, tu := range turns {
		items = append(items, vectortest.RandomItems(rng, tu.ID, 1, dim)[0])
		items[len(items)-1].ID = tu.ID
	}
	type vectorPalace interface {
		ForgetTurns(ctx context.Context, turns []engram.ForgetTurn, at time.Time, remake engram.SceneRemaker) (engram.ForgetResult, error)
		RedactTurns(ctx context.Context, turns []engram.Turn, spans []string, marker string) (engram.RedactResult, error)
	}
	for _, model := range []string{"m1", "m2"} {
		ps, err := pg.Vectors(ctx, model, dim)
		if err != nil {
			t.Fatal(err)
		}
		ls, err := lite.Vectors(ctx, model, dim)
		if err != nil {
			t.Fatal(err)
		}
		n := 60
		if model == "m2" {
			n = 30 // the second model embedded half the turns
		}
		if err := ps.PutTurnVectors(ctx, items[:n], int64(n)); err != nil {
			t.Fatal(err)
		}
		if err := ls.PutTurnVectors(ctx, items[:n], int64(n)); err != nil {
			t.Fatal(err)
		}
	}
	counts := func(when string) {
		t.Helper()
		for _, model := range []string{"m1", "m2"} {
			ps, _ := pg.Vectors(ctx, model, dim)
			ls, _ := lite.Vectors(ctx, model, dim)
			pn, _ := ps.Count(ctx)
			ln, _ := ls.Count(ctx)
			pw, _ := ps.Watermark(ctx)
			lw, _ := ls.Watermark(ctx)
			if pn != ln || pw != lw {
				t.Errorf("%s: model %s holds %d vectors through %d; the SQLite palace %d through %d", when, model, pn, pw, ln, lw)
			}
		}
	}
	var forget []engram.ForgetTurn
	for i, tu := range turns {
		if i%5 == 0 {
			forget = append(forget, engram.ForgetTurn{ID: tu.ID, Seq: int64(100 + i)})
		}
	}
	for _, p := range []vectorPalace{pg, lite} {
		if _, err := p.ForgetTurns(ctx, forget, time.Now(), nil); err != nil {
			t.Fatal(err)
		}
	}
	counts("after a forget")
	var red []engram.Turn
	for i, tu := range turns {
		if i%5 != 0 && i%3 == 0 {
			tu.Content += " [redacted]"
			red = append(red, tu)
		}
	}
	var res []engram.RedactResult
	for _, p := range []vectorPalace{pg, lite} {
		r, err := p.RedactTurns(ctx, red, []string{"plover"}, "[redacted]")
		if err != nil {
			t.Fatal(err)
		}
		res = append(res, r)
	}
	if !reflect.DeepEqual(res[0].TurnVectors, res[1].TurnVectors) || !reflect.DeepEqual(res[0].Watermarks, res[1].Watermarks) ||
		len(res[0].TurnVectors["m2"]) == 0 {
		t.Errorf("RedactTurns names %v and %v; the SQLite palace %v and %v", res[0].TurnVectors, res[0].Watermarks, res[1].TurnVectors, res[1].Watermarks)
	}
	counts("after a redaction")

	// A vector damaged on disk (its scale, the last four bytes, not
	// finite) in both.
	ps, _ := pg.Vectors(ctx, "m1", dim)
	ls, _ := lite.Vectors(ctx, "m1", dim)
	bad := turns[7].ID
	if _, err := pg.pool.Exec(ctx, `UPDATE palace_vectors SET vec = overlay(vec placing '\xffffffff'::bytea from length(vec) - 3 for 4) WHERE model = 'm1' AND id = $1`, bad); err != nil {
		t.Fatal(err)
	}
	if err := lite.Update(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE vectors SET vec = CAST(substr(vec, 1, length(vec) - 4) || x'ffffffff' AS BLOB) WHERE model = 'm1' AND id = ?`, bad)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	px, lx := vecindex.New(ps), vecindex.New(ls)
	for _, x := range []*vecindex.Index{px, lx} {
		if err := x.Load(ctx); err == nil {
			t.Fatal("an index loaded a damaged vector")
		}
	}
	type checked interface {
		Check(context.Context, int64) (engram.VectorCheck, error)
		CountByKind(context.Context) (map[string]int, error)
		TurnsWithoutVector(context.Context, int64, int64, int) ([]engram.Turn, error)
		DropBad(context.Context) ([]engram.BadVector, error)
	}
	compareStores := func(when string) {
		t.Helper()
		for what, read := range map[string]func(checked) (any, error){
			"Check": func(s checked) (any, error) {
				c, err := s.Check(ctx, 60)
				c.LastChange = 0 // counted apart: this palace's change numbers count deletions too
				return c, err
			},
			"CountByKind":        func(s checked) (any, error) { return s.CountByKind(ctx) },
			"TurnsWithoutVector": func(s checked) (any, error) { return s.TurnsWithoutVector(ctx, 0, 60, 100) },
		} {
			got, gerr := read(ps)
			want, werr := read(ls)
			if !reflect.DeepEqual(got, want) || (gerr == nil) != (werr == nil) {
				t.Errorf("%s: %s = %+v, %v; the SQLite palace's %+v, %v", when, what, got, gerr, want, werr)
			}
		}
	}
	compareStores("damaged")
	pb, err := ps.DropBad(ctx)
	if err != nil {
		t.Fatal(err)
	}
	lb, err := ls.DropBad(ctx)
	if err != nil || !reflect.DeepEqual(pb, lb) || len(pb) != 1 {
		t.Fatalf("DropBad = %+v; the SQLite palace's %+v, %v", pb, lb, err)
	}
	for _, x := range []*vecindex.Index{px, lx} {
		if err := x.Load(ctx); err != nil {
			t.Fatal(err)
		}
	}
	compareStores("repaired, loaded")
}
