package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-dev/engram/internal/testutil"
)

// testServers returns the real servers' settings (testutil.Servers).
var testServers = testutil.Servers

func writeConfig(t *testing.T, home, toml string) {
	t.Helper()
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
}

var vectorTurns = strings.Join([]string{
	`{"session":"s1","speaker":"Ana","content":"We decided to keep the API on port 30001","meta":{"n":1}}`,
	`{"session":"s1","speaker":"Bo","content":"The cat sat on the mat all afternoon"}`,
	`{"session":"s2","speaker":"Ana","content":"Our database will be PostgreSQL because of its JSONB support"}`,
}, "\n") + "\n"

func recallJSON(t *testing.T, home string, args ...string) (recallResponse, result) {
	t.Helper()
	r := runCLI(t, home, "", append([]string{"recall", "--json"}, args...)...)
	if r.code != 0 {
		t.Fatalf("recall %v: %+v", args, r)
	}
	var resp struct {
		recallResponse
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &resp); err != nil {
		t.Fatal(err)
	}
	r.stderr = strings.Join(resp.Warnings, "\n")
	return resp.recallResponse, r
}

// TestRecallCommand: what `engram recall` prints (engine's tests check
// what recall finds): the JSON of --json with each turn its own source;
// for a trigger phrase, the phrase, the signals and the packed context.
func TestRecallCommand(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	if r := runCLI(t, home, vectorTurns, "ingest", "-"); r.code != 0 {
		t.Fatalf("ingest: %+v", r)
	}
	resp, _ := recallJSON(t, home, "which database did we choose")
	if resp.Mode != "hybrid" || len(resp.Results) != 2 || !strings.Contains(resp.Results[0].Text, "PostgreSQL") {
		t.Fatalf("recall --json: %+v", resp)
	}
	if len(resp.Results[0].Sources) != 1 || resp.Results[0].Sources[0].ID != resp.Results[0].ID {
		t.Errorf("a turn lists itself as its source: %+v", resp.Results[0])
	}
	r := runCLI(t, home, "", "recall", "--budget", "120", "认真回忆 database PostgreSQL")
	if r.code != 0 || !strings.Contains(r.stdout, `(deep recall: "认真回忆")`) || !strings.Contains(r.stdout, "signals: vector") ||
		!strings.Contains(r.stdout, "Relevant memories") {
		t.Fatalf("deep recall from the CLI: %+v", r)
	}
}

// TestReembedBogusModel: engram reembed names the model it cannot use.
func TestReembedBogusModel(t *testing.T) {
	if r := runCLI(t, filepath.Join(t.TempDir(), "home"), "", "reembed", "--model", "bogus"); r.code != 1 || !strings.Contains(r.stderr, `model: unknown model "bogus"`) {
		t.Errorf("engram reembed --model bogus: %+v", r)
	}
}
