package engine_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/internal/testutil"
)

// TestScenesFollowIngest: while the jobs run (StartJobs, as in `engram
// serve`), a new turn joins its open scene, and its session's and scene's
// evidence (vectors included) reach deep recall within moments, not when
// the l2-scenes and layer-vectors jobs next run (a day away here).
func TestScenesFollowIngest(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the jobs")
	}
	ctx := t.Context()
	home := filepath.Join(t.TempDir(), "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, config.ConfigFile), []byte("[jobs]\nl2-scenes = \"24h\"\nlayer-vectors = \"24h\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadConfig(home, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.Open(ctx, cfg, quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	e.Warm()
	if err := e.StartJobs(ctx); err != nil {
		t.Fatal(err)
	}
	jobRuns := func() map[string]time.Time {
		runs := map[string]time.Time{}
		for _, j := range e.Jobs(ctx) {
			runs[j.Name] = j.LastSuccess
		}
		return runs
	}
	// The jobs' first runs, at start, are over before any turn arrives.
	testutil.WaitUntil(t, "the jobs' first runs", func() bool {
		r := jobRuns()
		return !r["l2-scenes"].IsZero() && !r["layer-vectors"].IsZero()
	})
	before := jobRuns()

	post := func(speaker, content string) string {
		t.Helper()
		turn, err := engram.TurnInput{Session: "trip", Speaker: speaker, Content: content}.Turn("", time.Now(), cfg.Limits())
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.Ingest(ctx, []engram.Turn{turn})
		if err != nil {
			t.Fatalf("ingest: %v", err)
		}
		return res.IDs()[0]
	}
	sceneOf := func(id string) (string, bool) {
		scenes, err := e.Scenes(ctx, engram.SceneQuery{Namespace: engram.DefaultNamespace, Session: "trip"})
		if err != nil {
			t.Fatalf("scenes: %v", err)
		}
		for _, sc := range scenes {
			if slices.Contains(sc.Turns, id) {
				return sc.ID, true
			}
		}
		return "", false
	}
	first := post("Ana", "Let's plan the Lisbon trip for June and book the flights.")
	testutil.WaitUntil(t, "the first turn's scene", func() bool { _, ok := sceneOf(first); return ok })
	scene, _ := sceneOf(first)
	second := post("Bo", "Done, I booked them this morning.")
	testutil.WaitUntil(t, "the second turn in the same open scene", func() bool { id, ok := sceneOf(second); return ok && id == scene })

	testutil.WaitUntil(t, "session and scene evidence of the second turn", func() bool {
		resp, err := e.Recall(ctx, engram.RecallRequest{Namespace: engram.DefaultNamespace, Query: "when were the Lisbon flights booked?", Mode: "deep"})
		if err != nil {
			t.Fatalf("recall: %v", err)
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
