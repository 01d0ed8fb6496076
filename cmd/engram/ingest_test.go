package main_test

import (
	"strings"
	"testing"
)

// TestIngestWithinMaxBatch: engram ingest sends no more turns at once than
// the home's max_batch allows, so that a server with a small one takes the
// whole file (ingest sent batches of 1000, which such a server refused).
func TestIngestWithinMaxBatch(t *testing.T) {
	home := t.TempDir()
	writeConfig(t, home, "max_batch = 2\nembedder = \"none\"\n")
	s := startServer(t, home)
	var lines strings.Builder
	for _, text := range []string{"one", "two", "three", "four", "five"} {
		lines.WriteString(`{"session":"s1","content":"turn ` + text + `"}` + "\n")
	}
	r := runCLI(t, home, lines.String(), "ingest", "-")
	if r.code != 0 || !strings.Contains(r.stderr, "5 turns archived (0 already present)") {
		t.Fatalf("ingest through a server with max_batch 2: %+v\n%s", r, s.stderr)
	}
	s.stop(t)
}
