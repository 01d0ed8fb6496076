package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRedactCommand redacts a span of a turn through the CLI, with the
// confirmation, and finds it in no file of the home afterwards, nor after
// a rebuild.
func TestRedactCommand(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	file := filepath.Join(t.TempDir(), "turns.jsonl")
	lines := `{"id":"t1","session":"s1","speaker":"Ana","content":"the staging password is plumbusgrax, keep it safe"}
{"id":"t2","session":"s1","speaker":"Ana","content":"we deploy on Fridays"}
`
	if err := os.WriteFile(file, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, home, "", "ingest", file); r.code != 0 {
		t.Fatalf("ingest: %+v", r)
	}
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
	if r := runCLI(t, home, "", "rebuild"); r.code != 0 {
		t.Fatalf("rebuild: %+v", r)
	}
	err := filepath.WalkDir(home, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err == nil && strings.Contains(string(b), "plumbusgrax") {
			t.Errorf("%s still holds the span", path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, home, "", "doctor"); r.code != 0 {
		t.Fatalf("doctor: %+v", r)
	}
}
