package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-dev/engram"
)

// TestShallowRecallBuiltin: with no configuration, recall embeds the query
// with the builtin embedder and searches the embedded vector index; a
// trigger phrase runs deep; deleting the palace loses nothing.
func TestShallowRecallBuiltin(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	cfg := ingestHome(t, home, vectorTurns)
	// Two of the three turns: the cat on the mat shares no word and is the
	// least similar (score 0), which no longer pads the list.
	resp := recallOnce(t, cfg, "", "which database did we choose", 0)
	if resp.Mode != "hybrid" || len(resp.Results) != 2 || !strings.Contains(resp.Results[0].Text, "PostgreSQL") {
		t.Fatalf("shallow recall: %+v", resp)
	}
	if len(resp.Results[0].Sources) != 1 || resp.Results[0].Sources[0].ID != resp.Results[0].ID {
		t.Errorf("a turn lists itself as its source: %+v", resp.Results[0])
	}
	if resp = recallOnce(t, cfg, engram.ModeKeyword, "database", 0); resp.Mode != "keyword" || len(resp.Results) != 1 {
		t.Fatalf("keyword recall: %+v", resp)
	}
	// A trigger phrase runs deep, which finds the turn by its vector too.
	resp = recallOnce(t, cfg, "", "认真回忆 database PostgreSQL", 0)
	if resp.Mode != engram.ModeDeep || resp.Trigger != "认真回忆" || len(resp.Results) == 0 || !strings.Contains(resp.Results[0].Text, "PostgreSQL") {
		t.Fatalf("deep recall by a trigger: %+v", resp)
	}
	// Deleting the palace loses nothing: turns and vectors come back from
	// the archive at the next open.
	for _, f := range []string{"palace.db", "palace.db-wal", "palace.db-shm"} {
		os.Remove(filepath.Join(home, f))
	}
	resp = recallOnce(t, cfg, "", "which database did we choose", 0)
	if resp.Mode != "hybrid" || len(resp.Results) != 2 || !strings.Contains(resp.Results[0].Text, "PostgreSQL") {
		t.Fatalf("shallow recall after deleting palace.db: %+v", resp)
	}
}
