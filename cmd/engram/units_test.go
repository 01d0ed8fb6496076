package main_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/engram-dev/engram"
)

// TestScenesFollowIngest: while `engram serve` runs, a new turn joins its
// open scene, and its session's and scene's evidence (vectors included)
// reach deep recall within moments, not when the l2-scenes and
// layer-vectors jobs next run (a day away here).
func TestScenesFollowIngest(t *testing.T) {
	if testing.Short() {
		t.Skip("starts engram serve")
	}
	home := t.TempDir()
	writeConfig(t, home, "[jobs]\nl2-scenes = \"24h\"\nlayer-vectors = \"24h\"\n")
	s := startServer(t, home)
	defer s.stop(t)
	ctx := context.Background()
	jobRuns := func() map[string]time.Time {
		var st struct{ Jobs []engram.JobStatus }
		if code, err := s.get(ctx, "/v1/jobs", &st); err != nil || code != 200 {
			t.Fatalf("GET /v1/jobs: %d %v", code, err)
		}
		runs := map[string]time.Time{}
		for _, j := range st.Jobs {
			runs[j.Name] = j.LastSuccess
		}
		return runs
	}
	// The jobs' first runs, at start, are over before any turn arrives.
	waitFor(t, "the jobs' first runs", func() bool {
		r := jobRuns()
		return !r["l2-scenes"].IsZero() && !r["layer-vectors"].IsZero()
	})
	before := jobRuns()

	post := func(speaker, content string) string {
		t.Helper()
		var out struct{ IDs []string }
		code, err := s.post(ctx, "/v1/turns", map[string]any{"session": "trip", "speaker": speaker, "content": content}, &out)
		if err != nil || code != 201 {
			t.Fatalf("POST /v1/turns: %d %v", code, err)
		}
		return out.IDs[0]
	}
	sceneOf := func(id string) (string, bool) {
		var out struct{ Scenes []engram.Scene }
		if code, err := s.get(ctx, "/v1/scenes?session=trip", &out); err != nil || code != 200 {
			t.Fatalf("GET /v1/scenes: %d %v", code, err)
		}
		for _, sc := range out.Scenes {
			if slices.Contains(sc.Turns, id) {
				return sc.ID, true
			}
		}
		return "", false
	}
	first := post("Ana", "Let's plan the Lisbon trip for June and book the flights.")
	waitFor(t, "the first turn's scene", func() bool { _, ok := sceneOf(first); return ok })
	scene, _ := sceneOf(first)
	second := post("Bo", "Done, I booked them this morning.")
	waitFor(t, "the second turn in the same open scene", func() bool { id, ok := sceneOf(second); return ok && id == scene })

	waitFor(t, "session and scene evidence of the second turn", func() bool {
		var resp engram.RecallResponse
		code, err := s.post(ctx, "/v1/recall", map[string]any{"query": "when were the Lisbon flights booked?", "mode": "deep"}, &resp)
		if err != nil || code != 200 {
			t.Fatalf("POST /v1/recall: %d %v", code, err)
		}
		for _, r := range resp.Results {
			// Both units hold both turns: their keyword and vector
			// evidence is the best there is (1 each, mean 1).
			if r.ID == second && r.Signals != nil && r.Signals.Session == 1 && r.Signals.Scene == 1 {
				return true
			}
		}
		return false
	})
	if after := jobRuns(); !after["l2-scenes"].Equal(before["l2-scenes"]) || !after["layer-vectors"].Equal(before["layer-vectors"]) {
		t.Errorf("the jobs ran again (%v, then %v): the follower is what this test is about", before, after)
	}
}
