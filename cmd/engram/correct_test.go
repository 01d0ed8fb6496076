package main_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCorrectThenRebuild corrects a memory and a graph fact through the
// CLI, then rebuilds the palace from the archive: the corrections come back
// from the home's journal and win over the extraction that runs again.
func TestCorrectThenRebuild(t *testing.T) {
	home := ingestHome(t, `{"id":"t1","session":"s1","speaker":"Ana","content":"I live in Lisbon."}
{"id":"t2","session":"s1","speaker":"Ana","content":"I work at Acme."}
`, true)
	memRE, factRE := regexp.MustCompile(`mem-[0-9a-f]{20}`), regexp.MustCompile(`kg-[0-9a-f]{20}`)
	r := runCLI(t, home, "", "memories", "Acme")
	acme := memRE.FindString(r.stdout)
	r = runCLI(t, home, "", "kg", "Ana")
	var lives string
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.Contains(l, "Lisbon") {
			lives = factRE.FindString(l)
		}
	}
	if acme == "" || lives == "" {
		t.Fatalf("no memory about Acme or fact about Lisbon to correct: %q %q", acme, lives)
	}

	// Usage errors name the problem.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"correct", "--wrong"}, "name what to correct"},
		{[]string{"correct", "--memory", acme}, "say what is wrong"},
		{[]string{"correct", "--fact", lives, "--text", "x"}, "object"},
		{[]string{"correct", "--memory", "mem-nothing", "--wrong"}, "mem-nothing"},
	} {
		if r := runCLI(t, home, "", c.args...); r.code == 0 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: %+v, want an error naming %q", c.args, r, c.want)
		}
	}
	if r := runCLI(t, home, "", "correct", "--memory", acme, "--wrong", "--reason", "never worked there"); r.code != 0 || !strings.Contains(r.stdout, "marked memory") {
		t.Fatalf("correct --wrong: %+v", r)
	}
	if r := runCLI(t, home, "", "correct", "--fact", lives, "--object", "Porto"); r.code != 0 || !strings.Contains(r.stdout, `object "Porto"`) {
		t.Fatalf("correct --object: %+v", r)
	}
	check := func(when string) {
		t.Helper()
		if r := runCLI(t, home, "", "memories", "Acme"); strings.Contains(r.stdout, acme) {
			t.Errorf("%s: the memory marked wrong is listed: %s", when, r.stdout)
		}
		if r := runCLI(t, home, "", "memories", "--superseded", "Acme"); !strings.Contains(r.stdout, "marked wrong") {
			t.Errorf("%s: the history does not say the memory is wrong: %s", when, r.stdout)
		}
		if r := runCLI(t, home, "", "kg", "Ana"); !strings.Contains(r.stdout, "Porto") || strings.Contains(r.stdout, "Lisbon") {
			t.Errorf("%s: the graph lacks the correction: %s", when, r.stdout)
		}
	}
	check("after the corrections")
	if b, err := os.ReadFile(filepath.Join(home, "corrections.jsonl")); err != nil || strings.Count(string(b), "\n") != 2 {
		t.Fatalf("corrections journal: %v %q", err, b)
	}
	if r := runCLI(t, home, "", "rebuild"); r.code != 0 {
		t.Fatalf("rebuild: %+v", r)
	}
	check("after the rebuild")
	if r := runCLI(t, home, "", "jobs", "run", "--all"); r.code != 0 {
		t.Fatalf("jobs run --all: %+v", r)
	}
	check("after the rebuild and the jobs")

	// A backup carries the journal and the tombstones; the restored home
	// keeps the corrections through its own rebuild.
	if r := runCLI(t, home, "y\n", "forget", "--turn", "t1"); r.code != 0 {
		t.Fatalf("forget: %+v", r)
	}
	dir := filepath.Join(t.TempDir(), "backup")
	if r := runCLI(t, home, "", "backup", dir); r.code != 0 {
		t.Fatalf("backup: %+v", r)
	}
	man, err := os.ReadFile(filepath.Join(dir, "engram-backup.json"))
	if err != nil || !strings.Contains(string(man), `"corrections.jsonl"`) {
		t.Fatalf("the manifest lacks the journal: %v %s", err, man)
	}
	home = filepath.Join(t.TempDir(), "restored")
	if r := runCLI(t, home, "", "restore", dir); r.code != 0 {
		t.Fatalf("restore: %+v", r)
	}
	if r := runCLI(t, home, "", "rebuild"); r.code != 0 {
		t.Fatalf("rebuild of the restored home: %+v", r)
	}
	if r := runCLI(t, home, "", "memories", "--superseded", "Acme"); !strings.Contains(r.stdout, "marked wrong") {
		t.Errorf("the restored home lost the correction: %s", r.stdout)
	}
	if r := runCLI(t, home, "", "recall", "--mode", "keyword", "Lisbon"); strings.Contains(r.stdout, "I live in Lisbon") {
		t.Errorf("the restored home brought a forgotten turn back: %s", r.stdout)
	}
	if r := runCLI(t, home, "", "doctor"); r.code != 0 || !strings.Contains(r.stdout, "forgotten") {
		t.Errorf("doctor of the restored home: %+v", r)
	}
}
