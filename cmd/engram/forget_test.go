package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestForgetCommand: what `engram forget` asks, prints and exits with
// (engine's tests check what a forget removes).
func TestForgetCommand(t *testing.T) {
	home := ingestHome(t, `{"id":"t1","session":"s1","speaker":"Ana","content":"I live in Lisbon and I work at Acme."}
{"id":"t2","session":"s1","speaker":"Ana","content":"I moved to Quokkaville and I love xylophones."}
{"id":"t3","session":"s2","speaker":"Bo","content":"My favourite band is Zanzibarmonic, we decided on Postgres."}
{"id":"t4","session":"s2","speaker":"Bo","content":"Zanzibarmonic plays on Friday in Quokkaville."}
{"id":"t5","session":"s3","speaker":"Bo","content":"We keep the API on port 30001."}
`, false)

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
