package pgpalace

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	engram "github.com/engram-dev/engram"
)

// memoryBatches are memories as the extraction job writes them, in
// batches: facts of a few subjects said again in other words (near
// duplicates), relations whose values change (superseding) or flip
// (likes, dislikes), out of order, some batches replayed.
func memoryBatches(turns []engram.Turn) [][]engram.Memory {
	rng := rand.New(rand.NewPCG(21, 8))
	words := strings.Fields(`harbour lantern quill orchard tessel plover brimmock keswick lumen marl vantor ziggle 会议 东京`)
	subjects := []string{"Ana", "Ben", "ana", ""}
	places := []string{"Lisbon", "Porto", "the Harbour", "Zorblax Tower"}
	base := time.Date(2026, 4, 1, 8, 0, 0, 0, time.UTC)
	var all []engram.Memory
	for i := range 360 {
		m := engram.Memory{ID: fmt.Sprintf("m%d", i), Namespace: []string{"work", "home"}[rng.IntN(2)],
			Type: []string{"fact", "preference", "event"}[rng.IntN(3)], Subject: subjects[rng.IntN(len(subjects))],
			Importance: float64(rng.IntN(12)) / 10, TS: base.Add(time.Duration(rng.IntN(90*24)) * time.Hour)}
		if i > 20 && i%4 == 0 { // a repeat of an earlier one, said again or with a word more
			old := all[rng.IntN(len(all))]
			m.Namespace, m.Type, m.Subject, m.Text = old.Namespace, old.Type, old.Subject, old.Text
			if i%8 == 0 {
				m.Text += " again"
			}
		} else {
			var b []string
			for range 3 + rng.IntN(5) {
				b = append(b, words[rng.IntN(len(words))])
			}
			m.Text = strings.Join(b, " ")
		}
		if rng.IntN(3) == 0 {
			m.ValidFrom = m.TS.Add(-time.Duration(rng.IntN(48)) * time.Hour)
		}
		switch rng.IntN(5) {
		case 0:
			m.Relation = &engram.Relation{Subject: []string{"Ana", "Ben"}[rng.IntN(2)], Predicate: "lives_in", Object: places[rng.IntN(len(places))]}
			m.Text = m.Relation.Subject + " lives in " + m.Relation.Object
		case 1:
			m.Relation = &engram.Relation{Subject: "Ana", Predicate: []string{"likes", "dislikes"}[rng.IntN(2)], Object: "jazz"}
			m.Text = "Ana " + m.Relation.Predicate + " jazz"
		}
		if rng.IntN(4) == 0 {
			m.Rationale = "because of the " + words[rng.IntN(len(words))]
		}
		if rng.IntN(3) == 0 {
			m.Entities = []string{"Zorblax", words[rng.IntN(len(words))]}
		}
		for range 1 + rng.IntN(3) {
			m.Sources = append(m.Sources, turns[rng.IntN(len(turns))].ID)
		}
		all = append(all, m)
	}
	var batches [][]engram.Memory
	for i := 0; i < len(all); i += 30 {
		batches = append(batches, all[i:min(i+30, len(all))])
		if i%90 == 0 {
			batches = append(batches, all[i:min(i+30, len(all))]) // replayed after a crash
		}
	}
	return batches
}

// TestMemories_AsSQLite checks that this palace keeps memories as package
// palace's SQLite file does: the same rows, merges, supersessions and
// change numbers from the same batches, the same lists and searches, and
// the same through corrections (of memories and of graph facts, before
// and after extraction writes what they correct), a forget, a redaction
// and a dropped correction.
func TestMemories_AsSQLite(t *testing.T) {
	ctx := t.Context()
	turns := searchTurns(t)
	pg, lite := bothPalaces(t, turns, 100)
	type memoryPalace interface {
		PutMemories(ctx context.Context, worker string, mems []engram.Memory, throughSeq int64) (engram.MemoryResult, error)
		MemoriesSince(ctx context.Context, after int64, limit int) ([]engram.Memory, error)
		MemorySeq(ctx context.Context) (int64, error)
		Memories(ctx context.Context, q engram.MemoryQuery) ([]engram.Memory, error)
		SearchMemories(ctx context.Context, q engram.TextQuery) ([]engram.MemoryHit, error)
		GetMemories(ctx context.Context, ids []string) ([]engram.Memory, error)
		ApplyTriples(ctx context.Context, worker string, triples []engram.Triple, throughSeq int64) error
		TriplesSince(ctx context.Context, after int64, limit int) ([]engram.Triple, error)
		engram.CorrectionStore
		ForgottenLeft(ctx context.Context, limit int) ([]string, error)
		Stats(ctx context.Context) (engram.Stats, error)
		ForgetTurns(ctx context.Context, turns []engram.ForgetTurn, at time.Time, remake engram.SceneRemaker) (engram.ForgetResult, error)
		RedactTurns(ctx context.Context, turns []engram.Turn, spans []string, marker string) (engram.RedactResult, error)
	}
	palaces := []memoryPalace{pg, lite}
	put := func(batch []engram.Memory, through int64) {
		t.Helper()
		var res []engram.MemoryResult
		for _, p := range palaces {
			r, err := p.PutMemories(ctx, "memories", batch, through)
			if err != nil {
				t.Fatal(err)
			}
			res = append(res, r)
		}
		if res[0] != res[1] {
			t.Fatalf("PutMemories = %+v; the SQLite palace's %+v", res[0], res[1])
		}
	}
	for i, b := range memoryBatches(turns) {
		put(b, int64(i))
	}
	// The graph of the memories' relations, for the fact corrections.
	for _, p := range palaces {
		ms, err := p.MemoriesSince(ctx, 0, 100_000)
		if err != nil {
			t.Fatal(err)
		}
		var ts []engram.Triple
		for _, m := range ms {
			if m.Relation != nil && m.Active() {
				ts = append(ts, engram.Triple{Namespace: m.Namespace, Subject: m.Relation.Subject, Predicate: m.Relation.Predicate,
					Object: m.Relation.Object, ValidFrom: m.TS, Sources: m.Sources, Memory: m.ID})
			}
		}
		if err := p.ApplyTriples(ctx, "graph", ts, 1); err != nil {
			t.Fatal(err)
		}
	}
	compare := func(when string) {
		t.Helper()
		all, _ := lite.MemoriesSince(ctx, 0, 100_000)
		ids := []string{"unknown"}
		for _, m := range all {
			ids = append(ids, m.ID)
		}
		from, to := time.Date(2026, 4, 20, 0, 0, 0, 0, time.UTC), time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
		reads := map[string]func(memoryPalace) (any, error){
			"MemoriesSince": func(p memoryPalace) (any, error) { return p.MemoriesSince(ctx, 3, 100_000) },
			"MemorySeq":     func(p memoryPalace) (any, error) { return p.MemorySeq(ctx) },
			"GetMemories":   func(p memoryPalace) (any, error) { return p.GetMemories(ctx, ids) },
			"Memories":      func(p memoryPalace) (any, error) { return p.Memories(ctx, engram.MemoryQuery{Limit: 1000}) },
			"Memories, superseded too": func(p memoryPalace) (any, error) {
				return p.Memories(ctx, engram.MemoryQuery{Namespace: "work", Superseded: true, Limit: 1000})
			},
			"Memories of a subject": func(p memoryPalace) (any, error) {
				return p.Memories(ctx, engram.MemoryQuery{Subject: "ANA", Type: "fact", From: from, To: to, Limit: 1000})
			},
			"Memories holding words": func(p memoryPalace) (any, error) {
				ms, err := p.Memories(ctx, engram.MemoryQuery{Namespace: "home", Text: "harbour lantern", Limit: 1000})
				slices.SortFunc(ms, func(a, b engram.Memory) int { return strings.Compare(a.ID, b.ID) }) // FTS5 orders ties its own way
				return ms, err
			},
			"Triples": func(p memoryPalace) (any, error) {
				ts, err := p.TriplesSince(ctx, 0, 100_000)
				return byID(ts), err
			},
			"CorrectionIDs": func(p memoryPalace) (any, error) { return p.CorrectionIDs(ctx) },
			"ForgottenLeft": func(p memoryPalace) (any, error) { return p.ForgottenLeft(ctx, 100) },
			"Stats":         func(p memoryPalace) (any, error) { return p.Stats(ctx) },
		}
		for what, read := range reads {
			sameRead(t, when, what, memoryPalace(pg), memoryPalace(lite), read)
		}
		for _, text := range []string{"harbour", "lisbon", "ana likes jazz", "zorblax", "会议", "because orchard", "nothing"} {
			for _, q := range []engram.TextQuery{{Text: text, Limit: 8}, {Text: text, Namespace: "work", From: from, To: to, Limit: 100}} {
				want, err := lite.SearchMemories(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				got, err := pg.SearchMemories(ctx, q)
				if err != nil || !sameMemoryHits(got, want) {
					t.Errorf("%s: SearchMemories(%+v) = %v, %v\nwant %v", when, q, memoryHits(got), err, memoryHits(want))
				}
			}
		}
	}
	compare("stored")
	if st, _ := lite.Stats(ctx); st.Layers["work"]["memories"] < 30 {
		t.Fatalf("only %+v", st.Layers)
	}

	// Corrections: of memories (a text, one wrong, one restored, one
	// named by its extracted text, one of a memory not stored yet) and of
	// facts (one wrong, one object replaced).
	all, _ := lite.MemoriesSince(ctx, 0, 100_000)
	var active []engram.Memory
	for _, m := range all {
		if m.Active() {
			active = append(active, m)
		}
	}
	at := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	mc := func(id string, m engram.Memory) engram.Correction {
		return engram.Correction{ID: id, At: at, Target: engram.CorrectMemory, Of: m.ID, Namespace: m.Namespace, Type: m.Type, Original: m.Text}
	}
	triples, _ := lite.TriplesSince(ctx, 0, 100_000)
	stated, _ := lite.GetMemories(ctx, []string{triples[3].Memory}) // a memory a statement stands on
	related := stated[0]
	cs := []engram.Correction{mc("c1", active[3]), mc("c2", related), mc("c3", active[8]), mc("c4", active[8]),
		{ID: "c5", At: at, Target: engram.CorrectMemory, Of: "m-later", Namespace: "work", Type: "fact", Original: "a later memory", Text: "corrected later"}}
	cs[0].Text = "the corrected harbour text"
	cs[1].Wrong = true
	cs[2].Wrong = true
	cs[3].Restore = true
	for i, tr := range triples[:2] {
		c := engram.Correction{ID: fmt.Sprintf("f%d", i), At: at, Target: engram.CorrectFact, Of: tr.ID, Namespace: tr.Namespace,
			Subject: tr.Subject, Predicate: tr.Predicate, Original: tr.Object, Memories: []string{tr.Memory}}
		if i == 0 {
			c.Wrong = true
		} else {
			c.Object = "Zorblax Tower"
		}
		cs = append(cs, c)
	}
	for _, p := range palaces {
		n, err := p.ApplyCorrections(ctx, cs)
		if err != nil || n != len(cs) {
			t.Fatalf("ApplyCorrections = %d, %v", n, err)
		}
		if n, err := p.ApplyCorrections(ctx, cs[:3]); err != nil || n != 0 {
			t.Fatalf("ApplyCorrections again = %d, %v; want none new", n, err)
		}
	}
	put([]engram.Memory{{ID: "m-later", Namespace: "work", Type: "fact", Text: "a later memory", Importance: 0.5, TS: at, Sources: []string{turns[1].ID}}}, 900)
	compare("corrected")
	for _, id := range []string{triples[1].ID, "f0", triples[5].ID, "unknown"} {
		var got, want []any
		for i, p := range palaces {
			tr, key, mems, err := p.FactToCorrect(ctx, id)
			tr.Seq = 0
			if i == 0 {
				got = []any{tr, key, mems, engram.ErrorCode(err)}
			} else {
				want = []any{tr, key, mems, engram.ErrorCode(err)}
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("FactToCorrect(%s) = %v; the SQLite palace's %v", id, got, want)
		}
	}

	// Every source of a memory that superseded another goes too: what it
	// superseded stands again.
	all, _ = lite.MemoriesSince(ctx, 0, 100_000)
	forgotten := func(id string) bool { return turnIndex(turns, id)%6 == 1 }
	var loser, winner engram.Memory
	for _, m := range all {
		if m.SupersededBy == "" || slices.ContainsFunc(m.Sources, forgotten) {
			continue
		}
		w, _ := lite.GetMemories(ctx, []string{m.SupersededBy})
		if len(w) == 1 && !slices.ContainsFunc(w[0].Sources, func(id string) bool { return slices.Contains(m.Sources, id) }) {
			loser, winner = m, w[0]
			break
		}
	}
	if loser.ID == "" {
		t.Fatal("no superseded memory to stand again")
	}
	var forget []engram.ForgetTurn
	for i, tu := range turns {
		if forgotten(tu.ID) || slices.Contains(winner.Sources, tu.ID) {
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
	if !reflect.DeepEqual(fres[0], fres[1]) || fres[0].Memories == 0 || fres[0].MemoriesKept == 0 {
		t.Errorf("ForgetTurns = %+v\nthe SQLite palace's %+v", fres[0], fres[1])
	}
	if back, _ := pg.GetMemories(ctx, []string{loser.ID}); len(back) != 1 || back[0].SupersededBy != "" {
		t.Errorf("a memory whose superseding one was forgotten reads %+v; want it standing again", back)
	}
	compare("after a forget")

	var red []engram.Turn
	for i, tu := range turns {
		if !slices.ContainsFunc(forget, func(f engram.ForgetTurn) bool { return f.ID == tu.ID }) && i%2 == 0 {
			tu.Content += " [redacted]"
			red = append(red, tu)
		}
	}
	var rres []engram.RedactResult
	for _, p := range palaces {
		res, err := p.RedactTurns(ctx, red, []string{"harbour", "Zorblax"}, "[redacted]")
		if err != nil {
			t.Fatal(err)
		}
		rres = append(rres, res)
	}
	if rres[0].Memories != rres[1].Memories || rres[0].Memories == 0 {
		t.Errorf("RedactTurns changed %d memories; the SQLite palace %d", rres[0].Memories, rres[1].Memories)
	}
	compare("after a redaction")
	for _, p := range palaces {
		if err := p.DropCorrections(ctx, []string{"c1", "f1", "unknown"}); err != nil {
			t.Fatal(err)
		}
	}
	compare("after dropping corrections")
}

func sameMemoryHits(a, b []engram.MemoryHit) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !reflect.DeepEqual(a[i].Memory, b[i].Memory) || math.Abs(a[i].Score-b[i].Score) > 1e-9*math.Max(1, math.Abs(b[i].Score)) {
			return false
		}
	}
	return true
}

func memoryHits(hs []engram.MemoryHit) []string {
	var out []string
	for _, h := range hs {
		out = append(out, fmt.Sprintf("%s:%.6f", h.Memory.ID, h.Score))
	}
	return out
}

// turnIndex is the place of the turn id in turns.
func turnIndex(turns []engram.Turn, id string) int {
	return slices.IndexFunc(turns, func(t engram.Turn) bool { return t.ID == id })
}
