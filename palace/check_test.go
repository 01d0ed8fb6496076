package palace

import (
	"context"
	"database/sql"
	"math"
	"slices"
	"strings"
	"testing"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/internal/vecrow"
)

// mustExec runs statements on the writer, in one transaction.
func mustExec(tb testing.TB, db *DB, stmts ...string) {
	tb.Helper()
	ctx := context.Background()
	err := db.Update(ctx, func(tx *sql.Tx) error {
		for _, s := range stmts {
			if _, err := tx.ExecContext(ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// TestDoctorVectorCheck breaks the vectors of a model the ways a disk or a bug
// can (a NaN written over a vector, a BLOB cut short past the CHECK
// constraint, rows deleted behind the watermark, a row changed under a
// loaded matrix), and checks that Check sees each, that DropBad and Reload
// repair what SQLite still holds, and that TurnsWithoutVector names what
// must be embedded again.
func TestDoctorVectorCheck(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	var turns []engram.Turn
	var items []engram.VectorItem
	for i := int64(1); i <= 6; i++ {
		turns = append(turns, testTurn(i, "turn "+itoa(i)))
		items = append(items, engram.VectorItem{ID: "t" + itoa(i), Kind: engram.KindTurn, Namespace: engram.DefaultNamespace,
			Vector: make8(float32(i))})
	}
	items[5].Vector = []float32{0, 1, 0, 0, 0, 0, 0, 0}
	if err := db.PutTurns(ctx, turns); err != nil {
		t.Fatal(err)
	}
	v := MustOpenVectors(t, db, "m", 8)
	if err := v.PutTurnVectors(ctx, items, 6); err != nil {
		t.Fatal(err)
	}
	mustUpsert(t, v, []engram.VectorItem{{ID: "mem1", Kind: engram.KindMemory, Namespace: engram.DefaultNamespace, Vector: make8(1)}})
	if err := indexOf(v).Load(ctx); err != nil {
		t.Fatal(err)
	}
	c, err := v.Check(ctx, 6)
	if err != nil {
		t.Fatal(err)
	}
	if c.Stored != 7 || c.ByKind[engram.KindTurn] != 6 || c.Bad != 0 || c.Missing != 0 || !c.Loaded || c.InMemory != 7 ||
		c.OnlyInMem+c.OnlyInStore+c.Differ != 0 || c.Orphans != 0 || c.EmbeddedSeq != 6 || c.State != ModelBuilding {
		t.Fatalf("sound index: %+v", c)
	}

	nan := make8(1)
	nan[3] = float32(math.NaN())
	err = db.Update(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE vectors SET vec = ? WHERE id = 't2'`, vecrow.Encode(nil, nan)); err != nil {
			return err
		}
		// The CHECK on length(vec) stops a short BLOB; a damaged page does not ask.
		if _, err := tx.ExecContext(ctx, `PRAGMA ignore_check_constraints = 1`); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE vectors SET vec = x'00112233445566' WHERE id = 't3'`); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `PRAGMA ignore_check_constraints = 0`); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM vectors WHERE id IN ('t4', 't5')`); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE vectors SET vec = ? WHERE id = 't6'`, vecrow.Encode(nil, make8(-1)))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err = v.Check(ctx, 6)
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, b := range c.BadSample {
		reasons = append(reasons, b.String())
	}
	if c.Stored != 5 || c.Bad != 2 || len(c.BadSample) != 2 || c.Missing != 2 || !slices.Equal(c.MissingIDs, []string{"t4", "t5"}) ||
		c.OnlyInMem != 2 || c.OnlyInStore != 0 || c.Differ != 1 || c.InMemory != 7 {
		t.Fatalf("damaged index: %+v", c)
	}
	if s := strings.Join(reasons, "; "); !strings.Contains(s, "t2 (turn): holds a value that is not finite") ||
		!strings.Contains(s, "t3 (turn): 7 bytes, want 12") {
		t.Errorf("reasons: %s", s)
	}
	// Load refuses the model as it is.
	if _, err := indexOf(v).Reload(ctx); engram.ErrorCode(err) != engram.EINTERNAL {
		t.Fatalf("reload with bad rows: %v", err)
	}

	bad, err := v.DropBad(ctx)
	if err != nil || len(bad) != 2 {
		t.Fatalf("DropBad = %v, %v", bad, err)
	}
	n, err := indexOf(v).Reload(ctx)
	if err != nil || n != 3 {
		t.Fatalf("Reload = %d, %v", n, err)
	}
	lost, err := v.TurnsWithoutVector(ctx, 0, 6, 10)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, t := range lost {
		ids = append(ids, t.ID)
	}
	if !slices.Equal(ids, []string{"t2", "t3", "t4", "t5"}) || lost[0].Content != "turn 2" {
		t.Fatalf("TurnsWithoutVector = %v", ids)
	}
	if got, _ := v.TurnsWithoutVector(ctx, 3, 4, 10); len(got) != 1 || got[0].ID != "t4" {
		t.Fatalf("TurnsWithoutVector(3, 4) = %+v", got)
	}
	if err := v.Upsert(ctx, []engram.VectorItem{items[1], items[2], items[3], items[4], items[5]}); err != nil {
		t.Fatal(err)
	}
	c, err = v.Check(ctx, 6)
	if err != nil {
		t.Fatal(err)
	}
	if c.Stored != 7 || c.Bad+c.OnlyInMem+c.OnlyInStore+c.Differ != 0 || c.Missing != 0 || c.InMemory != 7 {
		t.Fatalf("repaired index: %+v", c)
	}

	// A turn vector whose turn the palace lacks is an orphan.
	mustUpsert(t, v, []engram.VectorItem{{ID: "t99", Kind: engram.KindTurn, Namespace: engram.DefaultNamespace, Vector: make8(2)}})
	if c, err = v.Check(ctx, 6); err != nil || c.Orphans != 1 {
		t.Fatalf("orphan: %+v, %v", c, err)
	}
}

func TestReindexResetWorkerSeqs(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	for k, seq := range map[string]int64{"vec:m:memories": 5, "vec:m:scenes": 3, "vec:m2:scenes": 2, "vec:m": 9} {
		if err := db.SetWorkerSeq(ctx, k, seq); err != nil {
			t.Fatal(err)
		}
	}
	n, err := db.ResetWorkerSeqs(ctx, "vec:m:")
	if err != nil || n != 2 {
		t.Fatalf("ResetWorkerSeqs = %d, %v", n, err)
	}
	for k, want := range map[string]int64{"vec:m:memories": 0, "vec:m:scenes": 0, "vec:m2:scenes": 2, "vec:m": 9} {
		if got, err := db.WorkerSeq(ctx, k); err != nil || got != want {
			t.Errorf("WorkerSeq(%s) = %d, %v; want %d", k, got, err, want)
		}
	}
	// Reset, a watermark can start over (SetWorkerSeq never moves back).
	if err := db.SetWorkerSeq(ctx, "vec:m:scenes", 1); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.WorkerSeq(ctx, "vec:m:scenes"); got != 1 {
		t.Errorf("after reset: %d", got)
	}
	if _, err := db.ResetWorkerSeqs(ctx, ""); engram.ErrorCode(err) != engram.EINVALID {
		t.Errorf("empty prefix: %v", err)
	}
}

// TestDoctorIntegrityCheck damages a full-text index and the turn table behind
// the palace's back: integrity_check reports the first, the counts the
// second.
func TestDoctorIntegrityCheck(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	var turns []engram.Turn
	for i := int64(1); i <= 200; i++ {
		turns = append(turns, testTurn(i, strings.Repeat("words of turn "+itoa(i)+" ", 20)))
	}
	if err := db.PutTurns(ctx, turns); err != nil {
		t.Fatal(err)
	}
	if p, err := db.IntegrityCheck(ctx, 10); err != nil || len(p) != 0 {
		t.Fatalf("sound palace: %v, %v", p, err)
	}
	c, err := db.CountTurnIndexes(ctx)
	if err != nil || c != (TurnCounts{IndexedSeq: 200, Turns: 200, Keyword: 200, Trigram: 200}) {
		t.Fatalf("counts: %+v, %v", c, err)
	}

	mustExec(t, db, `DELETE FROM turns WHERE seq = 7`)
	if c, _ := db.CountTurnIndexes(ctx); c.Turns != 199 || c.Keyword != 200 {
		t.Fatalf("counts after a lost row: %+v", c)
	}
	mustExec(t, db, `DELETE FROM turns_fts_data WHERE id > 10`)
	p, err := db.IntegrityCheck(ctx, 10)
	if err != nil || len(p) == 0 || !strings.Contains(strings.Join(p, " "), "fts5") {
		t.Fatalf("damaged full-text index: %v, %v", p, err)
	}
	// Closed here: the invariants checked at cleanup would fail, rightly.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.IntegrityCheck(ctx, 10); engram.ErrorCode(err) != engram.EUNAVAILABLE {
		t.Fatalf("closed: %v", err)
	}
}

// TestIntegrityCheckUnderWrites: a check while turns keep arriving finds a
// sound palace sound. FTS5's own check, run beside a writer, reports
// corruption that is not there about a third of the time; a doctor run on
// a busy server must not call its palace damaged.
func TestIntegrityCheckUnderWrites(t *testing.T) {
	testutil.LongRun(t)
	ctx := context.Background()
	db := MustOpenDB(t)
	werr := make(chan error, 1)
	stop := testutil.Writers(t, 1, func(_, i int) bool {
		seq := int64(i) + 1
		tt := testTurn(seq, "turn "+itoa(seq)+" about the billing service and its database")
		tt.Session = "s" + itoa(seq%3)
		if err := db.PutTurns(ctx, []engram.Turn{tt}); err != nil {
			werr <- err
			return false
		}
		return true
	})
	for i := range 100 {
		if p, err := db.IntegrityCheck(ctx, 5); err != nil || len(p) != 0 {
			t.Errorf("check %d beside the writer: %v, %v", i, p, err)
			break
		}
	}
	stop()
	if len(werr) > 0 {
		t.Fatal(<-werr)
	}
}
