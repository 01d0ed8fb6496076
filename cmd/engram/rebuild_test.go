package main_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestRebuildCommand: what `engram rebuild` prints and its exit status
// (engine's tests check the rebuild itself, a killed one too).
func TestRebuildCommand(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	if r := runCLI(t, home, vectorTurns, "ingest", "-"); r.code != 0 {
		t.Fatalf("ingest: %+v", r)
	}
	r := runCLI(t, home, "", "rebuild")
	if r.code != 0 || !strings.Contains(r.stdout, "rebuilt "+filepath.Join(home, "palace.db")+" in ") || !strings.Contains(r.stdout, ": 3 turns, ") ||
		!strings.Contains(r.stdout, "the replaced palace is kept as "+filepath.Join(home, "palace.db.before-rebuild")) || !strings.Contains(r.stderr, "engram rebuild: ") {
		t.Fatalf("rebuild: %+v", r)
	}
	if r := runCLI(t, home, "", "rebuild", "extra"); r.code != 2 {
		t.Errorf("rebuild with an argument: %+v", r)
	}
	s := startServer(t, home)
	defer s.stop(t)
	if r := runCLI(t, home, "", "rebuild"); r.code != 1 || !strings.Contains(r.stderr, "engram serve is running") {
		t.Errorf("rebuild while serving: %+v", r)
	}
}
