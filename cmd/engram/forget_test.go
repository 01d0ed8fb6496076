package main_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/internal/filetest"
)

// TestForgetThenRebuild forgets a turn and a session through the CLI after
// the layers were derived, rebuilds the palace from the archive, and then
// finds the forgotten words in no file of the home.
func TestForgetThenRebuild(t *testing.T) {
	home := ingestHome(t, `{"id":"t1","session":"s1","speaker":"Ana","content":"I live in Lisbon and I work at Acme."}
{"id":"t2","session":"s1","speaker":"Ana","content":"I moved to Quokkaville and I love xylophones."}
{"id":"t3","session":"s2","speaker":"Bo","content":"My favourite band is Zanzibarmonic, we decided on Postgres."}
{"id":"t4","session":"s2","speaker":"Bo","content":"Zanzibarmonic plays on Friday in Quokkaville."}
{"id":"t5","session":"s3","speaker":"Bo","content":"We keep the API on port 30001."}
`, true)

	// Not confirmed: nothing happens.
	if r := runCLI(t, home, "n\n", "forget", "--turn", "t2"); r.code == 0 || !strings.Contains(r.stderr, "not confirmed") {
		t.Fatalf("forget, not confirmed: %+v", r)
	}
	if r := runCLI(t, home, "", "recall", "--mode", "keyword", "xylophones"); !strings.Contains(r.stdout, "xylophones") {
		t.Fatalf("an unconfirmed forget forgot: %+v", r)
	}
	if r := runCLI(t, home, "y\n", "forget", "--turn", "t2", "--reason", "asked"); r.code != 0 || !strings.Contains(r.stdout, "forgot 1 turn") {
		t.Fatalf("forget --turn: %+v", r)
	}
	if r := runCLI(t, home, "", "forget", "--session", "s2", "--yes"); r.code != 0 || !strings.Contains(r.stdout, "forgot 2 turn") {
		t.Fatalf("forget --session: %+v", r)
	}
	// Usage errors name the problem.
	if r := runCLI(t, home, "", "forget"); r.code != 2 || !strings.Contains(r.stderr, "name what to forget") {
		t.Fatalf("forget without a selector: %+v", r)
	}
	if r := runCLI(t, home, "", "forget", "--turn", "nope", "--yes"); r.code == 0 || !strings.Contains(r.stderr, "nope") {
		t.Fatalf("forget of an unknown id: %+v", r)
	}

	if r := runCLI(t, home, "", "rebuild"); r.code != 0 {
		t.Fatalf("rebuild: %+v", r)
	}
	if r := runCLI(t, home, "", "jobs", "run", "--all"); r.code != 0 {
		t.Fatalf("jobs run --all: %+v", r)
	}
	for _, q := range []string{"Quokkaville", "xylophones", "Zanzibarmonic"} {
		if r := runCLI(t, home, "", "recall", "--mode", "keyword", "--kinds", "turn,memory,scene,fact", q); strings.Contains(r.stdout, q) {
			t.Errorf("recall %q after the rebuild: %s", q, r.stdout)
		}
	}
	if r := runCLI(t, home, "", "recall", "--mode", "keyword", "Lisbon"); !strings.Contains(r.stdout, "Lisbon") {
		t.Fatalf("a kept turn is lost: %+v", r)
	}
	filetest.MustHoldNowhere(t, home, "Quokkaville", "xylophone", "Zanzibarmonic", "quokkavill", "zanzibarmon")
	if r := runCLI(t, home, "", "doctor"); r.code != 0 {
		t.Fatalf("doctor after forget and rebuild: %+v", r)
	}
}

// ingestHome makes a home of lines (JSON lines of turns), through a file,
// and derives its layers when jobs is set.
func ingestHome(t *testing.T, lines string, jobs bool) string {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	file := filepath.Join(t.TempDir(), "turns.jsonl")
	if err := os.WriteFile(file, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, home, "", "ingest", file); r.code != 0 {
		t.Fatalf("ingest: %+v", r)
	}
	if !jobs {
		return home
	}
	if r := runCLI(t, home, "", "jobs", "run", "--all"); r.code != 0 {
		t.Fatalf("jobs run --all: %+v", r)
	}
	return home
}

// TestTurnOutOfRangeSkippedEverywhere: an archived turn whose ts the palace
// cannot store (year 9999, a hand edit) is skipped by every pipeline, as by
// the keyword index: the vectors embed the turns after it, the scenes job
// runs, a rebuild completes, and the doctor and health name the skip.
func TestTurnOutOfRangeSkippedEverywhere(t *testing.T) {
	home := ingestHome(t, `{"id":"t1","session":"s1","content":"I live in Lisbon and I work at Acme."}
`, false)
	a, err := archive.Open(filepath.Join(home, "archive"), archive.Options{})
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
	if r := runCLI(t, home, "", "jobs", "run", "--all"); r.code != 0 {
		t.Fatalf("jobs run --all with a turn of year 9999: %+v", r)
	}
	if r := runCLI(t, home, "", "rebuild"); r.code != 0 {
		t.Fatalf("rebuild with a turn of year 9999: %+v", r)
	}
	if r := runCLI(t, home, "", "jobs", "run", "--all"); r.code != 0 {
		t.Fatalf("jobs run --all after the rebuild: %+v", r)
	}
	s := startServer(t, home)
	defer s.stop(t)
	waitFor(t, "the vectors of the turns after the skipped one", func() bool {
		rep, _ := runDoctor(t, home, 0)
		_, ok := rep.find("vectors", "ok", "through seq 3, all readable")
		return ok
	})
	rep, _ := runDoctor(t, home, 0)
	rep.mustFind(t, "index", "warn", "1 archived turn is not indexed", `seq 2 (id "far")`)
	if h := getHealth(t, s); h.SkippedTurns != 1 {
		t.Errorf("health: %+v, want one skipped turn", h)
	}
	if a := recallHTTP(t, s, "", "API port 30001"); !a.has("t3") {
		t.Fatalf("shallow recall misses the turn after the skipped one: %+v", a)
	}
}
