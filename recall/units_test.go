package recall_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/recall"
)

// unitContents are two sessions of 20 turns (the fixture's sessions): a
// trip planned in s0, an office move in s1. The answer to "when were the
// Lisbon flights booked?" is a turn of s0 that shares no word with it; s1
// holds a turn that shares two, about other flights.
func unitContents() []string {
	s0 := []string{
		"Let's plan the Lisbon trip for June.",
		"The flights to Lisbon are cheaper on Tuesdays.",
		"Which airline flies direct to Lisbon?",
		"TAP has a direct flight, and the flights leave at nine.",
		"Should I book the Lisbon flights now?",
		"Done, took care of it this morning.", // the answer
	}
	s1 := []string{
		"The office move is next month.",
		"We need a room for the all-hands.",
		"Their flights got booked.", // the decoy
	}
	var out []string
	for i := range 20 {
		if i < len(s0) {
			out = append(out, s0[i])
		} else {
			out = append(out, fmt.Sprintf("Packing list item %d for the trip.", i))
		}
	}
	for i := range 20 {
		if i < len(s1) {
			out = append(out, s1[i])
		} else {
			out = append(out, fmt.Sprintf("Box %d of the office move is labelled.", i))
		}
	}
	return out
}

// TestUnitEvidence: the session a turn belongs to counts as a document of
// its own: in hybrid recall the answer, whose words miss the question,
// ranks higher with the units than without; in deep recall it carries more
// session evidence than the decoy, whose session is about something else.
func TestUnitEvidence(t *testing.T) {
	f := mustOpenFixture(t, unitContents())
	with := f.service()
	with.Units = f.db
	without := f.service()
	ctx := context.Background()
	answer, decoy := f.turns[5].ID, f.turns[22].ID
	rank := func(s *recall.Service, mode string) (map[string]int, map[string]*engram.Signals) {
		t.Helper()
		resp, err := s.Recall(ctx, engram.RecallRequest{Query: "when were the Lisbon flights booked?", Mode: mode, K: 40})
		if err != nil {
			t.Fatal(err)
		}
		ranks, sig := map[string]int{}, map[string]*engram.Signals{}
		for i, r := range resp.Results {
			ranks[r.ID], sig[r.ID] = i+1, r.Signals
		}
		return ranks, sig
	}
	on, _ := rank(with, engram.ModeHybrid)
	off, _ := rank(without, engram.ModeHybrid)
	if on[answer] == 0 || off[answer] == 0 || on[answer] >= off[answer] {
		t.Errorf("hybrid: the answer is at rank %d with the units, %d without", on[answer], off[answer])
	}
	_, sig := rank(with, engram.ModeDeep)
	if a, d := sig[answer], sig[decoy]; a == nil || d == nil || a.Session <= d.Session || a.Session > 1 {
		t.Errorf("deep: session evidence of the answer %+v, of the decoy %+v", a, d)
	}
}
