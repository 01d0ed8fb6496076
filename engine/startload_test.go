package engine_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/homedir"
	"github.com/engram-dev/engram/internal/testutil"
)

// TestServeAnswersWhileVectorsLoad: an engine opened as a server opens it
// (BackgroundLoad) answers health, recall and writes while its embedded
// vector index is still loading (held by the test's hook): health says the index is loading, recall answers by keyword with a warning saying so, and a turn
// written meanwhile gets its vector once the index is loaded.
func TestServeAnswersWhileVectorsLoad(t *testing.T) {
	ctx := t.Context()
	cfg := testConfig(t.TempDir())
	cfg.Embedder = config.EmbedderBuiltin

	// A home with vectors to load.
	e, err := engine.Open(ctx, cfg, quiet())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Ingest(ctx, []engram.Turn{
		{Namespace: "default", Session: "s1", Role: "user", Content: "The capybara in the garden ate all the lettuce"},
		{Namespace: "default", Session: "s1", Role: "user", Content: "We moved the greenhouse to the north side"},
	}); err != nil {
		t.Fatal(err)
	}
	if err := e.WaitVectors(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	reached, release := make(chan struct{}), make(chan struct{})
	engine.SetVectorLoadHook(t, func(ctx context.Context) {
		close(reached)
		select {
		case <-release:
		case <-ctx.Done():
		}
	})
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	e = openAsServer(t, cfg, "the vector index loads")
	defer e.Close()
	e.Warm()
	if err := e.StartJobs(ctx); err != nil {
		t.Fatal(err)
	}
	<-reached

	health := func() engram.Health { return e.Health(ctx) }
	h := health()
	vi, ok := h.Indexes["vectors"]
	if !ok || vi.State != "loading" || vi.Loaded != 0 {
		t.Fatalf("health while loading: indexes %+v, want vectors loading, none read", h.Indexes)
	}
	if h.Status != "ok" {
		t.Errorf("health while loading: status %q, problems %q; loading is no problem", h.Status, h.Problems)
	}
	if _, ok := h.Indexes["keywords-turns"]; !ok {
		t.Errorf("health: indexes %+v, want the turns' keyword index", h.Indexes)
	}

	for _, mode := range []string{"shallow", "hybrid", "deep"} {
		resp, err := e.Recall(ctx, engram.RecallRequest{Namespace: "default", Query: "capybara lettuce", Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Results) == 0 || !strings.Contains(resp.Results[0].Text, "capybara") {
			t.Errorf("%s recall while loading: %+v, want the capybara turn by keyword", mode, resp.Results)
		}
		if !strings.Contains(strings.Join(resp.Warnings, "; "), "still loading") {
			t.Errorf("%s recall while loading: warnings %q, want one saying the vector index is loading", mode, resp.Warnings)
		}
	}

	// A write while loading is acknowledged, and embedded once loaded.
	ing, err := e.Ingest(ctx, []engram.Turn{{Namespace: "default", Session: "s2", Role: "user", Content: "The heron fishes at the pond every dawn"}})
	if err != nil || len(ing.Turns) != 1 {
		t.Fatalf("write while loading: %+v", ing)
	}
	close(release)
	testutil.WaitUntil(t, "the vector index to load and embed the new turn", func() bool {
		h := health()
		return h.Indexes["vectors"].State == "ready" && h.Vectors != nil && h.Vectors.Lag == 0 && h.Vectors.EmbeddedSeq == h.ArchiveSeq
	})
	// The load reads every vector in SQLite when it starts: the two
	// turns', and those the layer jobs wrote (a session's units).
	if vi := health().Indexes["vectors"]; vi.Loaded < 2 || vi.Loaded != vi.Total {
		t.Errorf("health once loaded: %+v, want every vector read, the two turns' at least", vi)
	}
	// Shallow recall searches the vectors alone: the new turn is found
	// by meaning, with no warning.
	resp, err := e.Recall(ctx, engram.RecallRequest{Namespace: "default", Query: "a bird catching fish in the morning", Mode: "shallow", K: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Warnings) > 0 {
		t.Errorf("recall once loaded: warnings %q", resp.Warnings)
	}
	if len(resp.Results) != 1 || resp.Results[0].ID != ing.Turns[0].ID {
		t.Errorf("recall once loaded: %+v, want the turn written while loading", resp.Results)
	}
}

// TestServeAnswersWhileTheIndexCatchesUp: turns another process archived
// (`engram ingest` while no server ran) are indexed behind a server's Open,
// not before it: the engine opens while the indexer is held at its first
// batch, health says how many turns are behind, a write is archived
// meanwhile, and once the indexer goes on every turn is found.
func TestServeAnswersWhileTheIndexCatchesUp(t *testing.T) {
	ctx := t.Context()
	home := t.TempDir()
	cfg := testConfig(home)
	e, err := engine.Open(ctx, cfg, quiet())
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	a, err := archive.Open(filepath.Join(home, homedir.ArchiveDir), archive.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var turns []engram.Turn
	for i := range 150 {
		turns = append(turns, engram.Turn{Namespace: "default", Session: fmt.Sprintf("s%d", i/10), Role: "user",
			Content: fmt.Sprintf("note %d about the walrus colony", i), TS: time.Now().UTC()})
	}
	if _, err := a.Append(ctx, turns); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	reached, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	engine.SetTestHooks(t, func([]engram.Turn) {
		once.Do(func() { close(reached) })
		<-release
	}, nil, nil)
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	e = openAsServer(t, cfg, "the indexer catches up")
	defer e.Close()
	<-reached
	if h := e.Health(ctx); h.IndexLag != 150 || h.ArchiveSeq != 150 || h.Status != "ok" {
		t.Fatalf("health while catching up: lag %d, archive seq %d, status %q %q", h.IndexLag, h.ArchiveSeq, h.Status, h.Problems)
	}
	ing, err := e.Ingest(engram.IngestNoIndexWait(ctx), []engram.Turn{{Namespace: "default", Session: "new", Role: "user", Content: "the walrus colony moved north"}})
	if err != nil || len(ing.Turns) != 1 || ing.Turns[0].Seq != 151 {
		t.Fatalf("write while catching up: %+v, %v", ing, err)
	}
	close(release)
	testutil.WaitUntil(t, "the index to catch up", func() bool { return e.Health(ctx).IndexLag == 0 })
	resp, err := e.Recall(ctx, engram.RecallRequest{Namespace: "default", Query: "walrus colony", Mode: "keyword", K: 200})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) != 151 || len(resp.Warnings) > 0 {
		t.Fatalf("recall once caught up: %d results, warnings %q; want all 151", len(resp.Results), resp.Warnings)
	}
}

// TestServeWritesSecondaryIndexesBehindItsListener: the session units and
// substring rows of turns a process stored without them (it stopped before
// its indexer wrote them) are written behind a server's Open, not in it:
// with the indexer's secondary step held, the engine opens and the palace
// still lacks them; let go, they are written.
func TestServeWritesSecondaryIndexesBehindItsListener(t *testing.T) {
	ctx := t.Context()
	cfg := testConfig(t.TempDir())
	hold := make(chan struct{})
	engine.SetSecondaryHook(t, func(ctx context.Context) {
		select {
		case <-hold:
		case <-ctx.Done():
		}
	})
	e, err := engine.Open(ctx, cfg, quiet())
	if err != nil {
		t.Fatal(err)
	}
	var turns []engram.Turn
	for i := range 150 {
		turns = append(turns, engram.Turn{Namespace: "default", Session: fmt.Sprintf("s%d", i/10), Role: "user",
			Content: fmt.Sprintf("the otter den %d by the weir", i)})
	}
	if _, err := e.Ingest(ctx, turns); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil { // the secondary step held: none written
		t.Fatal(err)
	}

	cfg.BackgroundLoad = true
	e, err = engine.Open(ctx, cfg, quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if seq, err := e.SecondarySeq(ctx); err != nil || seq != 0 {
		t.Fatalf("secondary indexes after Open: through seq %d, %v; want none yet (the indexer is held)", seq, err)
	}
	close(hold)
	testutil.WaitUntil(t, "the secondary indexes to be written", func() bool {
		seq, err := e.SecondarySeq(ctx)
		return err == nil && seq == 150
	})
}

// openAsServer opens the engine of cfg as a server opens it
// (BackgroundLoad), while a test's hook holds what happens meanwhile: were
// that in Open's way, Open would wait for the hook's release, and the wait
// here fails.
func openAsServer(t *testing.T, cfg config.Config, meanwhile string) *engine.Engine {
	t.Helper()
	cfg.BackgroundLoad = true
	opened := make(chan *engine.Engine, 1)
	go func() {
		e, err := engine.Open(t.Context(), cfg, quiet())
		if err != nil {
			t.Error(err)
		}
		opened <- e
	}()
	var e *engine.Engine
	testutil.WaitUntil(t, "the engine to open while "+meanwhile, func() bool {
		select {
		case e = <-opened:
			return true
		default:
			return false
		}
	})
	if e == nil {
		t.FailNow()
	}
	return e
}
