package engine_test

import (
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/engine"
)

// TestRecallDoesNotWaitForOtherWrites: a client's turn is acknowledged,
// then another client's write is archived and held in the indexer. Recall,
// in every mode, answers from what is indexed without waiting for the held
// write: it finds the acknowledged turn, with no warning, since every
// acknowledged turn is searchable. Before, each recall waited for the index
// to reach the held turn, gave up after its bound and warned that the index
// was behind.
func TestRecallDoesNotWaitForOtherWrites(t *testing.T) {
	ctx := t.Context()
	held := make(chan struct{})    // the indexer holds the other client's turn
	release := make(chan struct{}) // it may store it
	var heldOnce, releaseOnce sync.Once
	letGo := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(letGo)
	engine.SetTestHooks(t, func(batch []engram.Turn) {
		if slices.ContainsFunc(batch, func(tu engram.Turn) bool { return tu.ID == "other" }) {
			heldOnce.Do(func() { close(held) })
			<-release
		}
	}, nil, nil)
	cfg := config.DefaultConfig()
	cfg.Home = filepath.Join(t.TempDir(), "home")
	cfg.Extractor = config.ExtractorNone
	e, err := engine.Open(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		letGo()
		if err := e.Close(); err != nil {
			t.Error(err)
		}
	})

	mine := engram.Turn{ID: "mine", Namespace: engram.DefaultNamespace, Session: "s1", Role: engram.RoleUser,
		Content: "The deploy window moved to Thursday at noon."}
	if res, err := e.Ingest(ctx, []engram.Turn{mine}); err != nil || len(res.Warnings) > 0 {
		t.Fatalf("ingest mine: %+v, %v", res, err)
	}
	found := func(resp engram.RecallResponse) bool {
		for _, r := range resp.Results {
			for _, s := range r.Sources {
				if s.ID == "mine" {
					return true
				}
			}
		}
		return false
	}
	// Read-your-writes: with nothing else written, the vector index is
	// waited for (bounded: a loaded machine may take longer, and then the
	// answer warns), and shallow recall finds the turn just acknowledged.
	resp, err := e.Recall(ctx, engram.RecallRequest{Query: "deploy window Thursday", Mode: engram.ModeShallow})
	if err != nil || (!found(resp) && len(resp.Warnings) == 0) {
		t.Fatalf("shallow recall of the acknowledged turn: %+v, %v", resp, err)
	}
	if err := e.WaitVectors(ctx); err != nil {
		t.Fatal(err)
	}

	ingested := make(chan error, 1)
	go func() {
		other := engram.Turn{ID: "other", Namespace: engram.DefaultNamespace, Session: "s2", Role: engram.RoleUser,
			Content: "Another client writes about the deploy window too."}
		_, err := e.Ingest(ctx, []engram.Turn{other})
		ingested <- err
	}()
	<-held
	for _, mode := range []string{engram.ModeAuto, engram.ModeHybrid, engram.ModeDeep, engram.ModeKeyword, engram.ModeShallow} {
		resp, err := e.Recall(ctx, engram.RecallRequest{Query: "deploy window Thursday", Mode: mode})
		if err != nil || !found(resp) {
			t.Fatalf("%s recall while another write is held: %+v, %v", mode, resp, err)
		}
		if len(resp.Warnings) > 0 {
			t.Errorf("%s recall while another client's write is held warns %q: it waited for that write", mode, strings.Join(resp.Warnings, "; "))
		}
	}
	letGo()
	if err := <-ingested; err != nil {
		t.Fatal(err)
	}
}
