package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-dev/engram/internal/testutil"
)

func testImportClaude(t *testing.T, home string) {
	projects := t.TempDir()
	testutil.CCTranscript(t, ccFixtures, projects, "session.jsonl", testutil.CCSession+".jsonl")
	testutil.CCTranscript(t, ccFixtures, projects, "broken.jsonl", "broken.jsonl")
	r := runCLI(t, home, "", "import", "claude-code", projects)
	if r.code != 0 || !strings.Contains(r.stderr, "2 transcripts, 16 new lines, 10 turns archived (0 duplicates), 2 bad lines") {
		t.Fatalf("first import: %+v", r)
	}
	r = runCLI(t, home, "", "import", "claude-code", projects)
	if r.code != 0 || !strings.Contains(r.stderr, "0 new lines, 0 turns archived (0 duplicates)") {
		t.Fatalf("second import: %+v", r)
	}
	// Offsets lost: everything is read again, and nothing is added.
	os.Remove(filepath.Join(home, "hooks", "claude-code-offsets.json"))
	r = runCLI(t, home, "", "import", "claude-code", projects)
	if r.code != 0 || !strings.Contains(r.stderr, "0 turns archived (10 duplicates)") {
		t.Fatalf("import without offsets: %+v", r)
	}
	r = runCLI(t, home, "", "recall", "--namespace", "cc-billing-api", "--mode", "keyword", "staging port")
	if !strings.Contains(r.stdout, "6543") {
		t.Errorf("recall after import:\n%s", r.stdout)
	}
}

func TestImportClaudeCodeLocal(t *testing.T) { testImportClaude(t, t.TempDir()) }

func TestImportClaudeCodeServer(t *testing.T) {
	home := t.TempDir()
	s := startServer(t, home)
	testImportClaude(t, home)
	s.stop(t)
}

func TestImportClaudeCodeUsage(t *testing.T) {
	home := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"import"}, "engram import: want a source"},
		{[]string{"import", "slack"}, `unknown source "slack"`},
		{[]string{"import", "claude-code", filepath.Join(home, "nope")}, "no folder"},
		{[]string{"import", "claude-code", "a", "b"}, "at most one DIR"},
	} {
		if r := runCLI(t, home, "", tc.args...); r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: %+v", tc.args, r)
		}
	}
}
