package main_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/engram-dev/engram/internal/testutil"
)

// commandsNamed checks that every `engram WORD` a warning or an error in
// the log text points to names a command `engram help` lists.
func commandsNamed(t *testing.T, text string) {
	t.Helper()
	help := runCLI(t, t.TempDir(), "", "help").stdout
	var warnings strings.Builder
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") {
			warnings.WriteString(line + "\n")
		}
	}
	for _, m := range regexp.MustCompile(`engram ([a-z-]+)`).FindAllStringSubmatch(warnings.String(), -1) {
		if !regexp.MustCompile(`(?m)^  ` + m[1] + ` `).MatchString(help) {
			t.Errorf("the log points to `engram %s`, which is no command:\n%s", m[1], text)
		}
	}
}

// TestServeLogNamesCommands: the log of `engram serve` on a home with a
// damaged archive line points to engram doctor, and every command its
// warnings name is one `engram help` lists. (server's tests check what a
// damaged line does to ingest, health, the doctor and the repair.)
func TestServeLogNamesCommands(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	in := `{"id":"a1","session":"s","content":"alpha the first turn"}
{"id":"b2","session":"s","content":"bravo the second turn"}
{"id":"c3","session":"s","content":"charlie the third turn"}
`
	if r := runCLI(t, home, in, "ingest", "-"); r.code != 0 {
		t.Fatalf("ingest: %+v", r)
	}
	day := testutil.DayFiles(t, home)[0]
	b, err := os.ReadFile(day)
	if err != nil {
		t.Fatal(err)
	}
	b[strings.Index(string(b), "bravo")] = 'B' // the checksum no longer matches
	if err := os.WriteFile(day, b, 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, home)
	var out struct{}
	if code, err := s.post(context.Background(), "/v1/turns", map[string]any{"id": "b2", "session": "s", "content": "bravo the second turn"}, &out); err != nil || code != http.StatusCreated {
		t.Fatalf("POST /v1/turns: %d %v", code, err)
	}
	s.stop(t)
	if !strings.Contains(s.stderr.String(), "engram doctor") {
		t.Errorf("the log does not point to engram doctor:\n%s", s.stderr)
	}
	commandsNamed(t, s.stderr.String())
}
