package extract_test

import (
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/extract"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/internal/work"
)

// TestRulesExtractorPaced: with a Pace, the rules extractor's batch is a
// task of the scheduler: it waits while every worker is busy, so that
// batches extracted side by side never take the core kept for requests.
func TestRulesExtractorPaced(t *testing.T) {
	ctx := t.Context()
	s := work.New(1)
	busy, err := s.Begin(ctx, work.Index) // the one worker
	if err != nil {
		t.Fatal(err)
	}
	turns := []engram.Turn{{ID: "t1", Namespace: "n", Session: "s", Role: engram.RoleUser, Speaker: "Alice",
		TS: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), Content: "I live in Berlin now."}}
	type result struct {
		mems []engram.Memory
		err  error
	}
	out := make(chan result, 1)
	go func() {
		mems, err := extract.RulesExtractor{Pace: work.Pace{S: s, Class: work.Derive}}.Extract(ctx, turns)
		out <- result{mems, err}
	}()
	testutil.WaitUntil(t, "the extraction waiting for a worker", func() bool { return s.Stats().Waiting["derive"] == 1 })
	select {
	case r := <-out:
		t.Fatalf("extracted while the only worker was busy: %d memories, %v", len(r.mems), r.err)
	default:
	}
	busy()
	r := <-out
	if r.err != nil || len(r.mems) == 0 {
		t.Fatalf("after the worker was free: %d memories, %v", len(r.mems), r.err)
	}
	if st := s.Stats(); st.Running != 0 {
		t.Fatalf("the extraction's task still holds its worker: %+v", st)
	}
}
