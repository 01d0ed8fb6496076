package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
