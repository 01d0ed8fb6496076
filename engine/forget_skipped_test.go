package engine_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/homedir"
	"github.com/engram-dev/engram/importer"
	"github.com/engram-dev/engram/internal/filetest"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/pipeline"
)

// openDefault opens a new home (or home, when given) with the default
// configuration, as the CLI does on a home without config.toml, until the
// test ends or the caller closes it.
func openDefault(t *testing.T, home string) (*engine.Engine, config.Config) {
	t.Helper()
	cfg := config.DefaultConfig()
	cfg.Home = home
	e, err := engine.Open(t.Context(), cfg, quiet())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e, cfg
}

// ingestLines archives lines (JSON lines of turns, as `engram ingest`
// reads them) through e.
func ingestLines(t *testing.T, e *engine.Engine, cfg config.Config, lines string) {
	t.Helper()
	imp := importer.NewImporter(e, cfg.Limits(), "", true, io.Discard)
	_, err := imp.Import(t.Context(), func(emit func(importer.Record) error) (string, error) {
		_, err := importer.ReadLines(strings.NewReader(lines), "", emit)
		return "", err
	})
	if err = imp.Result(err, "lines"); err != nil {
		t.Fatalf("ingest: %v", err)
	}
}

// TestForgetAfterRebuild: a rebuild keeps the palace it replaced
// (palace.db.before-rebuild), which holds every turn as it was; a later
// forget, and a later redaction, remove it, so that the words are in no
// file of the home.
func TestForgetAfterRebuild(t *testing.T) {
	ctx := t.Context()
	home := filepath.Join(t.TempDir(), "home")
	e, cfg := openDefault(t, home)
	ingestLines(t, e, cfg, `{"id":"t1","session":"s1","speaker":"Ana","content":"I live in Lisbon and I work at Acme."}
{"id":"t2","session":"s1","speaker":"Ana","content":"I moved to Quokkaville and I love xylophones."}
`)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	previous := filepath.Join(home, homedir.PalaceFile+homedir.PreviousSuffix)
	for _, step := range []struct {
		name  string
		run   func(*engine.Engine) (removed bool, err error)
		words []string
	}{
		{"forget", func(e *engine.Engine) (bool, error) {
			rep, err := e.Forget(ctx, engram.ForgetRequest{IDs: []string{"t2"}})
			return rep.PreviousPalace, err
		}, []string{"Quokkaville", "xylophone", "quokkavill"}},
		{"redact", func(e *engine.Engine) (bool, error) {
			rep, err := e.Redact(ctx, engram.RedactRequest{Texts: []string{"Lisbon"}})
			return rep.PreviousPalace, err
		}, []string{"Lisbon", "lisbon"}},
	} {
		if _, err := engine.Rebuild(ctx, cfg, quiet(), nil, true); err != nil {
			t.Fatalf("rebuild: %v", err)
		}
		if _, err := os.Stat(previous); err != nil {
			t.Fatalf("the rebuild kept no previous palace: %v", err)
		}
		e, _ := openDefault(t, home)
		removed, err := step.run(e)
		if err != nil || !removed {
			t.Fatalf("%s: removed the previous palace %v, %v", step.name, removed, err)
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(previous); !os.IsNotExist(err) {
			t.Fatalf("after %s the previous palace is still there (%v)", step.name, err)
		}
		filetest.MustHoldNowhere(t, home, step.words...)
	}
}

// TestForgetAndRedactReachSkippedTurns: a turn the palace skipped (here a
// time it cannot store) holds its text only in the archive; a forget or a
// redaction by session must reach it there too.
func TestForgetAndRedactReachSkippedTurns(t *testing.T) {
	ctx := t.Context()
	home := filepath.Join(t.TempDir(), "home")
	e, cfg := openDefault(t, home)
	ingestLines(t, e, cfg, `{"id":"t1","session":"s1","content":"I live in Lisbon."}
{"id":"t2","session":"s2","content":"We keep the API on port 30001."}
`)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	a, err := archive.Open(filepath.Join(home, homedir.ArchiveDir), archive.Options{})
	if err != nil {
		t.Fatal(err)
	}
	old := time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC) // before engram.MinYear
	_, err = a.Append(context.Background(), []engram.Turn{
		{ID: "x1", Namespace: engram.DefaultNamespace, Session: "s1", Role: engram.RoleUser, Content: "My street is Wombatstrasse.", TS: old},
		{ID: "x2", Namespace: engram.DefaultNamespace, Session: "s2", Role: engram.RoleUser, Content: "The token is kiwi-4242-xyz.", TS: old},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	e, _ = openDefault(t, home) // indexes the new lines: two skips
	for _, req := range []engram.RedactRequest{
		{Session: "s2", Namespace: engram.DefaultNamespace, Texts: []string{"kiwi-4242-xyz"}, DryRun: true},
		{IDs: []string{"x2"}, Texts: []string{"kiwi-4242-xyz"}, DryRun: true},
	} {
		if rep, err := e.Redact(ctx, req); err != nil || len(rep.Turns) != 1 {
			t.Fatalf("redact %+v as a dry run, of a skipped turn: %+v, %v", req, rep, err)
		}
	}
	if rep, err := e.Redact(ctx, engram.RedactRequest{Session: "s2", Namespace: engram.DefaultNamespace, Texts: []string{"kiwi-4242-xyz"}}); err != nil || len(rep.Turns) != 1 {
		t.Fatalf("redact of a skipped turn: %+v, %v", rep, err)
	}
	if rep, err := e.Forget(ctx, engram.ForgetRequest{Session: "s1", Namespace: engram.DefaultNamespace}); err != nil || !slices.Equal(rep.Turns, []string{"t1", "x1"}) {
		t.Fatalf("forget by session with a skipped turn: %+v, %v", rep, err)
	}
	resp, err := e.Recall(ctx, engram.RecallRequest{Namespace: engram.DefaultNamespace, Query: "port 30001", Mode: engram.ModeKeyword})
	if err != nil || len(resp.Results) == 0 || !strings.Contains(resp.Results[0].Text, "30001") {
		t.Fatalf("a kept turn is lost: %+v, %v", resp, err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	filetest.MustHoldNowhere(t, home, "Wombatstrasse", "wombatstras", "kiwi-4242", "Lisbon")
}

// runAllJobs runs every scheduled job of e and fails the test on a failing
// one.
func runAllJobs(t *testing.T, e *engine.Engine) {
	t.Helper()
	jobs, err := e.RunJobs(t.Context(), "", false)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if j.Failing {
			t.Fatalf("job %s: %s", j.Name, j.LastError)
		}
	}
}

// TestTurnOutOfRangeSkippedEverywhere: an archived turn whose ts the palace
// cannot store (year 9999, a hand edit) is skipped by every pipeline, as by
// the keyword index: the vectors embed the turns after it, the scenes job
// runs, a rebuild completes, and the doctor and health name the skip.
func TestTurnOutOfRangeSkippedEverywhere(t *testing.T) {
	ctx := t.Context()
	home := filepath.Join(t.TempDir(), "home")
	e, cfg := openDefault(t, home)
	ingestLines(t, e, cfg, `{"id":"t1","session":"s1","content":"I live in Lisbon and I work at Acme."}
`)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	a, err := archive.Open(filepath.Join(home, homedir.ArchiveDir), archive.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Append(context.Background(), []engram.Turn{
		{ID: "far", Namespace: engram.DefaultNamespace, Session: "s1", Role: engram.RoleUser, Content: "A turn from the far future.",
			TS: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)},
		{ID: "t3", Namespace: engram.DefaultNamespace, Session: "s1", Role: engram.RoleUser, Content: "We keep the API on port 30001.",
			TS: time.Now()},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	e, _ = openDefault(t, home)
	runAllJobs(t, e) // with a turn of year 9999
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := engine.Rebuild(ctx, cfg, quiet(), nil, true); err != nil {
		t.Fatalf("rebuild with a turn of year 9999: %v", err)
	}
	e, _ = openDefault(t, home)
	runAllJobs(t, e) // after the rebuild
	// As a server runs it.
	e.Warm()
	if err := e.StartJobs(ctx); err != nil {
		t.Fatal(err)
	}
	testutil.WaitUntil(t, "the vectors of the turns after the skipped one", func() bool {
		_, ok := testutil.FindCheck(e.Doctor(ctx), "vectors", "ok", "through seq 3, all readable")
		return ok
	})
	testutil.MustFindCheck(t, e.Doctor(ctx), "index", "warn", "1 archived turn is not indexed", `seq 2 (id "far")`)
	if h := e.Health(ctx); h.SkippedTurns != 1 {
		t.Errorf("health: %+v, want one skipped turn", h)
	}
	resp, err := e.Recall(ctx, engram.RecallRequest{Namespace: engram.DefaultNamespace, Query: "API port 30001", K: 5})
	if err != nil || !slices.ContainsFunc(resp.Results, func(r engram.Result) bool { return r.ID == "t3" }) {
		t.Fatalf("recall misses the turn after the skipped one: %+v, %v", resp, err)
	}
}

// TestForgetDuringALayerJob: a forget does not wait for a layer job's run
// to end, only for a store of it in flight; the run's store of what it
// read before the forget is refused, and it reads the archive again, so
// that nothing derived from the forgotten turn is stored.
func TestForgetDuringALayerJob(t *testing.T) {
	ctx := t.Context()
	e, cfg := openDefault(t, filepath.Join(t.TempDir(), "home"))
	ingestLines(t, e, cfg, `{"id":"t1","session":"s1","speaker":"Ana","content":"I live in Lisbon and I work at Acme."}
{"id":"t2","session":"s1","speaker":"Ana","content":"I moved to Quokkaville and I love xylophones."}
`)
	release := engine.HoldWork(t, e)
	job := make(chan error, 1)
	go func() {
		_, err := e.RunJob(ctx, pipeline.WorkerMemories)
		job <- err
	}()
	testutil.WaitUntil(t, "the memory job's run to wait for a worker", func() bool { return engine.WorkWaiting(e) > 0 })
	rep, err := e.Forget(ctx, engram.ForgetRequest{IDs: []string{"t2"}})
	if err != nil || len(rep.Turns) != 1 {
		t.Fatalf("forget while the memory job runs: %+v %v", rep, err)
	}
	release()
	if err := <-job; err != nil {
		t.Fatal(err)
	}
	mems, err := e.Memories(ctx, engram.MemoryQuery{Limit: 100})
	if err != nil || len(mems) == 0 {
		t.Fatalf("memories after the run: %d %v", len(mems), err)
	}
	for _, m := range mems {
		if slices.Contains(m.Sources, "t2") || strings.Contains(m.Text, "xylophone") {
			t.Fatalf("memory %q of the forgotten turn was stored", m.Text)
		}
	}
}
