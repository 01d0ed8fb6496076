package main_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/engram-dev/engram"
)

// TestRedactCommand: what `engram redact` asks, prints and exits with
// (engine's tests check the redactions themselves): a usage error without
// a span, no redaction unless confirmed, the count, the engine's warnings
// on stderr, the JSON of --json; its help says what a redaction does not
// reach.
func TestRedactCommand(t *testing.T) {
	help := runCLI(t, t.TempDir(), "", "redact", "--help")
	for _, want := range []string{"id, namespace and session", "keys of\nits meta", "engram\nforget --turn ID", "At most 1000 spans"} {
		if !strings.Contains(help.stdout+help.stderr, want) {
			t.Errorf("engram redact --help lacks %q:\n%s%s", want, help.stdout, help.stderr)
		}
	}
	home := ingestHome(t, `{"id":"t1","session":"s1","speaker":"Ana","content":"the staging password is plumbusgrax, keep it safe"}
{"id":"t2","session":"zibbleflorp-chat","speaker":"Ana","content":"the deploy key is zibbleflorp"}
`, false)
	if r := runCLI(t, home, "", "redact", "--turn", "t1"); r.code != 2 || !strings.Contains(r.stderr, "texts") {
		t.Fatalf("redact without a span: %+v", r)
	}
	if r := runCLI(t, home, "n\n", "redact", "--turn", "t1", "--span", "plumbusgrax"); r.code == 0 || !strings.Contains(r.stderr, "not confirmed") {
		t.Fatalf("redact, not confirmed: %+v", r)
	}
	if r := runCLI(t, home, "y\n", "redact", "--turn", "t1", "--span", "plumbusgrax", "--marker", "[secret]"); r.code != 0 || !strings.Contains(r.stdout, "redacted 1 span(s) in 1 turn(s)") {
		t.Fatalf("redact: %+v", r)
	}
	if r := runCLI(t, home, "", "recall", "--mode", "keyword", "staging password"); !strings.Contains(r.stdout, "the staging password is [secret], keep it safe") {
		t.Fatalf("recall after the redaction: %+v", r)
	}
	r := runCLI(t, home, "", "redact", "--span", "zibbleflorp", "--yes", "--dry-run", "--json")
	var rep engram.RedactReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != 0 || !rep.DryRun || rep.Spans != 1 || len(rep.Warnings) != 1 {
		t.Fatalf("redact --dry-run --json: %+v (%v)", r, err)
	}
	r = runCLI(t, home, "", "redact", "--span", "zibbleflorp", "--yes")
	if r.code != 0 || !strings.Contains(r.stdout, "redacted 1 span(s) in 1 turn(s)") ||
		!strings.Contains(r.stderr, `warning: a span is also in the session of 1 turn ("t2")`) {
		t.Fatalf("redact of a span a session holds: %+v", r)
	}
}
