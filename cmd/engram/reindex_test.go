package main_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestReindexUsage: usage errors exit 2 with what to type; an engine's
// refusal exits 1 and says why (engine's tests check the reindex itself).
func TestReindexUsage(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	for _, args := range [][]string{{"reindex"}, {"reindex", "palace"}, {"reindex", "vectors", "extra"}, {"reindex", "vectors", "--bogus"}} {
		if r := runCLI(t, home, "", args...); r.code != 2 || !strings.Contains(r.stderr, "engram reindex") {
			t.Errorf("%v: %+v", args, r)
		}
	}
	writeConfig(t, home, "embedder = \"none\"\n")
	if r := runCLI(t, home, vectorTurns, "ingest", "-"); r.code != 0 {
		t.Fatalf("ingest: %+v", r)
	}
	if r := runCLI(t, home, "", "reindex", "vectors"); r.code != 1 || !strings.Contains(r.stderr, "embedder = none") {
		t.Errorf("reindex with embedder none: %+v", r)
	}
}
