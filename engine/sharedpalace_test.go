package engine_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/homedir"
	"github.com/engram-dev/engram/internal/pgtest"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/pgpalace"
	"github.com/engram-dev/engram/pipeline"
)

// sharedConfig is teamConfig with the palace in the database too, and the
// rules extractor, so that the layer jobs have work.
func sharedConfig(home, url string) config.Config {
	cfg := teamConfig(home, url)
	cfg.Palace = config.PalacePostgres
	cfg.Extractor = config.ExtractorRules
	return cfg
}

// TestSharedPalace runs two engines on one palace in PostgreSQL (palace =
// "postgres"): no home holds a palace file; a turn ingested on A is found
// on B; a forget on B is gone from A's next recall (one palace, nothing to
// apply); a layer job runs under the archive's lease and its memories
// are both servers'; doctor shows the palace's checks; a rebuild makes it
// again from the archive.
func TestSharedPalace(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ctx := t.Context()
	homeA, homeB := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	a, b := openTeam(t, sharedConfig(homeA, url)), openTeam(t, sharedConfig(homeB, url))
	for _, home := range []string{homeA, homeB} {
		if _, err := os.Stat(filepath.Join(home, homedir.PalaceFile)); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s holds a palace file (%v); the palace is the database's", home, err)
		}
	}
	if _, err := a.Ingest(ctx, []engram.Turn{
		{ID: "t1", Namespace: engram.DefaultNamespace, Session: "s1", Speaker: "Ana", Role: "user", Content: "I moved to Lisbon last spring, the vault code is zorblatt-7781"},
		{ID: "t2", Namespace: engram.DefaultNamespace, Session: "s1", Speaker: "Ana", Role: "user", Content: "I love jazz and the kiln fires at noon"},
		{ID: "t3", Namespace: engram.DefaultNamespace, Session: "s1", Speaker: "Ana", Role: "user", Content: "My locker combination is quixplod-4410"},
	}); err != nil {
		t.Fatal(err)
	}
	testutil.WaitUntil(t, "B to find the turn ingested on A", func() bool { return finds(t, b, "vault code", "zorblatt-7781") })

	// A layer job over the shared palace: A's run writes the memories B
	// reads; B's run after it finds nothing new (the watermark is the
	// palace's), and the lease records the run.
	st, err := a.RunJob(ctx, pipeline.WorkerMemories)
	if err != nil || st.LastError != "" {
		t.Fatalf("run %s on A: %+v %v", pipeline.WorkerMemories, st, err)
	}
	if !memoryHolds(t, b, "jazz") {
		t.Fatal("B does not read the memories A's job wrote")
	}
	count := func() int {
		t.Helper()
		mems, err := b.Memories(ctx, engram.MemoryQuery{Superseded: true, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		return len(mems)
	}
	before := count()
	if st, err := b.RunJob(ctx, pipeline.WorkerMemories); err != nil || st.LastError != "" {
		t.Fatalf("run %s on B: %+v %v", pipeline.WorkerMemories, st, err)
	}
	if after := count(); after != before {
		t.Fatalf("B's run of the memory job after A's changed the memories: %d, then %d", before, after)
	}
	db, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	var runs int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM team_jobs WHERE name = $1 AND last_success IS NOT NULL`, pipeline.WorkerMemories).Scan(&runs); err != nil || runs != 1 {
		t.Fatalf("the shared job's record: %d, %v", runs, err)
	}

	// A forget on B: gone from A's next recall and from the memories.
	if _, err := b.Forget(ctx, engram.ForgetRequest{IDs: []string{"t1"}, Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	if finds(t, a, "vault code", "zorblatt") || memoryHolds(t, a, "zorblatt") {
		t.Fatal("A still finds what B forgot in the palace they share")
	}
	if !finds(t, a, "kiln fires", "noon") {
		t.Fatal("A lost the turn B did not forget")
	}
	// A redaction on B: A reads the redacted turn at once.
	if rep, err := b.Redact(ctx, engram.RedactRequest{Texts: []string{"quixplod-4410"}, Marker: "[secret]"}); err != nil || len(rep.Turns) != 1 {
		t.Fatalf("redact on B: %+v, %v", rep, err)
	}
	if finds(t, a, "locker combination", "quixplod") || !finds(t, a, "locker combination", "[secret]") {
		t.Fatal("A does not read the redaction B made in the palace they share")
	}

	rep := a.Doctor(ctx)
	checks := map[string]engram.DoctorCheck{}
	for _, c := range rep.Checks {
		checks[c.Name] = c
	}
	if c := checks[pgpalace.CheckSchema]; c.Status != engram.CheckOK {
		t.Errorf("doctor's %s check = %+v", pgpalace.CheckSchema, c)
	}
	if _, ok := checks[pgpalace.CheckIndexes]; !ok {
		t.Errorf("doctor has no %s check: %+v", pgpalace.CheckIndexes, rep.Checks)
	}

	// A rebuild of the shared palace, the servers stopped: from the
	// archive, the forgotten turn nowhere, the layers made again.
	a.Close()
	b.Close()
	if _, err := db.Exec(ctx, `INSERT INTO palace_meta (key, value) VALUES ('worker:gone', 5)`); err != nil {
		t.Fatal(err)
	}
	rb, err := engine.Rebuild(ctx, sharedConfig(filepath.Join(t.TempDir(), "c"), url), quiet(), nil, false)
	if err != nil || rb.Turns != 2 || rb.Memories == 0 || rb.Previous != "" {
		t.Fatalf("rebuild of the palace in PostgreSQL: %+v, %v; want the two turns left, memories, nothing kept aside", rb, err)
	}
	var left int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM palace_meta WHERE key = 'worker:gone'`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("a watermark the rebuild does not make is still there (%d, %v): the palace was not emptied first", left, err)
	}
	a = openTeam(t, sharedConfig(homeA, url))
	if !finds(t, a, "kiln fires", "noon") || finds(t, a, "vault code", "zorblatt") || !memoryHolds(t, a, "jazz") ||
		finds(t, a, "locker combination", "quixplod") {
		t.Fatal("the rebuilt palace is not the archive's")
	}
	// The rebuilt palace starts the rewrite journal over: A reads the
	// forget and the redaction again and finds both held already, so it
	// changes nothing (no turn redacted again, no vector made again).
	testutil.WaitUntil(t, "A to read the rewrite journal through its end", func() bool {
		var applied, last int64
		if err := db.QueryRow(ctx, `SELECT coalesce((SELECT value FROM palace_meta WHERE key = 'worker:rewrites'), 0), (SELECT max(n) FROM archive_rewrites)`).Scan(&applied, &last); err != nil {
			t.Fatal(err)
		}
		return last == 2 && applied == last
	})
	if n := a.RewritesApplied(); n != 0 {
		t.Fatalf("A applied %d turns of the rewrite journal to a palace that held the forget and the redaction already", n)
	}
}

// TestSharedPalace_NUL: turns whose contents hold NUL bytes (which
// PostgreSQL's text refuses) are archived and kept as sent, and the layer
// jobs derive their memories, scenes, personas and graph into the palace
// in PostgreSQL without them, instead of failing the batch at every run.
func TestSharedPalace_NUL(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ctx := t.Context()
	a := openTeam(t, sharedConfig(filepath.Join(t.TempDir(), "a"), url))
	const content = "I moved to Lis\x00bon last spring with my sister Ma\x00ria. I love ja\x00zz and my dog Re\x00x."
	if _, err := a.Ingest(ctx, []engram.Turn{
		{ID: "n1", Namespace: engram.DefaultNamespace, Session: "s1", Speaker: "Ana", Role: "user", Content: content},
		{ID: "n2", Namespace: engram.DefaultNamespace, Session: "s1", Speaker: "Ana", Role: "user", Content: "Ma\x00ria works at Goo\x00gle and she visited Pa\x00ris."},
	}); err != nil {
		t.Fatal(err)
	}
	for _, job := range []string{pipeline.WorkerMemories, pipeline.WorkerScenes, pipeline.WorkerPersona, pipeline.WorkerGraph} {
		if st, err := a.RunJob(ctx, job); err != nil || st.LastError != "" {
			t.Fatalf("run %s over turns with NUL bytes: %q, %v", job, st.LastError, err)
		}
	}
	if !memoryHolds(t, a, "Lisbon") || memoryHolds(t, a, "\x00") {
		t.Fatal("the memories of turns with NUL bytes are not derived without them")
	}
	turns, err := a.ListTurns(ctx, engram.TurnQuery{Namespace: engram.DefaultNamespace, IDs: []string{"n1"}})
	if err != nil || len(turns) != 1 || turns[0].Content != content {
		t.Fatalf("the turn as the palace keeps it: %+v, %v; want it as sent", turns, err)
	}
}

// TestSharedPalace_NULInRequests: a request naming an id, a session or a
// name with a NUL byte, which PostgreSQL's text cannot hold, is EINVALID
// saying so (not a database failure, 500 or 503); a query's text with one
// is searched without it.
func TestSharedPalace_NULInRequests(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ctx := t.Context()
	a := openTeam(t, sharedConfig(filepath.Join(t.TempDir(), "a"), url))
	if _, err := a.Ingest(ctx, []engram.Turn{{ID: "n1", Namespace: engram.DefaultNamespace, Session: "s1", Speaker: "Ana", Role: "user",
		Content: "I moved to Lisbon last spring. I love jazz."}}); err != nil {
		t.Fatal(err)
	}
	for _, job := range []string{pipeline.WorkerMemories, pipeline.WorkerPersona, pipeline.WorkerGraph} {
		if _, err := a.RunJob(ctx, job); err != nil {
			t.Fatal(err)
		}
	}
	ns := engram.DefaultNamespace
	for _, mode := range []string{engram.ModeKeyword, engram.ModeDeep} {
		if _, err := a.Recall(ctx, engram.RecallRequest{Namespace: ns, Query: "ja\x00zz Lis\x00bon", Mode: mode, K: 5}); err != nil {
			t.Errorf("recall %s of a query with NUL bytes: %v", mode, err)
		}
	}
	for what, call := range map[string]func() error{
		"forget": func() error { _, err := a.Forget(ctx, engram.ForgetRequest{IDs: []string{"n\x001"}}); return err },
		"correct": func() error {
			_, err := a.Correct(ctx, engram.CorrectionRequest{Target: engram.CorrectMemory, ID: "mem\x00", Wrong: true})
			return err
		},
		"session": func() error {
			_, err := a.ListTurns(ctx, engram.TurnQuery{Namespace: ns, Session: "s\x001"})
			return err
		},
		"turn ids": func() error {
			_, err := a.ListTurns(ctx, engram.TurnQuery{Namespace: ns, IDs: []string{"n\x001"}})
			return err
		},
		"memories": func() error {
			_, err := a.Memories(ctx, engram.MemoryQuery{Namespace: ns, Subject: "A\x00na"})
			return err
		},
		"entities": func() error {
			_, err := a.Entities(ctx, engram.EntityQuery{Namespace: ns, Prefix: "Li\x00"})
			return err
		},
		"graph": func() error {
			_, err := a.Graph(ctx, engram.GraphQuery{Namespace: ns, Entity: "Li\x00sbon"})
			return err
		},
		"persona": func() error { _, err := a.Persona(ctx, ns, "A\x00na"); return err },
	} {
		if err := call(); engram.ErrorCode(err) != engram.EINVALID || !strings.Contains(err.Error(), "NUL byte") {
			t.Errorf("%s naming a NUL byte: %v, want EINVALID saying so", what, err)
		}
	}
}
