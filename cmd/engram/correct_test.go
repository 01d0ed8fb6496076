package main_test

import (
	"regexp"
	"strings"
	"testing"
)

// TestCorrectCommand: the usage errors of `engram correct`, what it prints,
// and the memories' listing of a memory marked wrong (engine's tests
// check the corrections themselves).
func TestCorrectCommand(t *testing.T) {
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
	if r := runCLI(t, home, "", "memories", "--superseded", "Acme"); !strings.Contains(r.stdout, "marked wrong") {
		t.Errorf("the memories do not say the memory is wrong: %s", r.stdout)
	}
}
