package recall_test

import (
	"context"
	"testing"
	"time"

	"github.com/engram-dev/engram"
)

// TestDeepRecall_Layers checks that deep recall weighs the derived layers:
// a memory citing a turn raises it (layer signal), a graph triple about an
// entity the query names raises the turn it stems from (kg signal), and a
// turn only a layer cites joins the candidates.
func TestDeepRecall_Layers(t *testing.T) {
	contents := []string{
		"Let's talk about the storage layer for the billing service.",
		"OK so after all that back and forth, final answer: PG it is, the JSONB support sold it.",
		"Agreed, and Redis only as a cache in front of it.",
		"Unrelated: the cat sat on the mat all afternoon.",
		"Morning all, greetings from my new flat.",
		"Remind me to renew the TLS certificates next month.",
	}
	f := mustOpenFixture(t, contents)
	ctx := context.Background()
	at := f.turns[1].TS
	mem := engram.Memory{ID: "mem-1", Namespace: "default", Type: engram.MemoryDecision, Subject: "Bob",
		Text: "Bob decided to use PostgreSQL for the billing database", Rationale: "JSONB support", Importance: 0.9,
		TS: at, ValidFrom: at, Sources: []string{f.turns[1].ID}}
	if _, err := f.db.PutMemories(ctx, "test", []engram.Memory{mem}, 6); err != nil {
		t.Fatal(err)
	}
	if err := f.db.ApplyTriples(ctx, "test", []engram.Triple{{Namespace: "default", Subject: "Dana", Predicate: "lives_in",
		Object: "Lisbon", ValidFrom: f.turns[4].TS, Sources: []string{f.turns[4].ID}}}, 1); err != nil {
		t.Fatal(err)
	}
	asOf := time.Date(2026, 5, 8, 12, 0, 0, 0, time.UTC)
	find := func(s interface {
		Recall(context.Context, engram.RecallRequest) (engram.RecallResponse, error)
	}, q, id string) (int, *engram.Signals) {
		t.Helper()
		resp, err := s.Recall(ctx, engram.RecallRequest{Query: q, Mode: engram.ModeDeep, AsOf: asOf})
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range resp.Results {
			if r.ID == id {
				return i, r.Signals
			}
		}
		return -1, nil
	}

	without := f.service()
	with := f.service()
	with.Layers = f.db
	q := "which database did we pick for billing"
	rankOff, sigOff := find(without, q, f.turns[1].ID)
	rank, sig := find(with, q, f.turns[1].ID)
	if rank < 0 || rank > rankOff || sig.Layer != 1 || (sigOff != nil && sig.Final <= sigOff.Final) {
		t.Errorf("with layers the decision turn is at rank %d with %+v (without: rank %d, %+v), want layer 1 and a higher score", rank, sig, rankOff, sigOff)
	}
	if sigOff != nil && sigOff.Layer != 0 {
		t.Errorf("without layers the layer signal is %v", sigOff.Layer)
	}
	rank, sig = find(with, "where does Dana live", f.turns[4].ID)
	if rank < 0 || sig.KG != 0.5 {
		t.Errorf("the turn behind (Dana, lives_in, Lisbon): rank %d, signals %+v, want kg 0.5", rank, sig)
	}
	// As of before the statement, the graph says nothing.
	resp, err := with.Recall(ctx, engram.RecallRequest{Query: "where does Dana live", Mode: engram.ModeDeep, AsOf: f.turns[3].TS})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range resp.Results {
		if r.Signals.KG != 0 {
			t.Errorf("as of before the triple, %s has kg %v", r.ID, r.Signals.KG)
		}
	}
}
