package engine_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/homedir"
	"github.com/engram-dev/engram/internal/layertest"
	"github.com/engram-dev/engram/internal/testutil"
)

// recallIDs runs fixed queries in every mode (as of a fixed time, so decay
// does not move) and returns the result ids, one line per query and mode.
func recallIDs(t *testing.T, e *engine.Engine) []string {
	t.Helper()
	var out []string
	asOf := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	for _, mode := range []string{"keyword", "shallow", "deep"} {
		for _, q := range []string{"billing service database decision", "where does Chen live", "favourite book", "coffee", "latency of service 7"} {
			resp, err := e.Recall(t.Context(), engram.RecallRequest{Namespace: engram.DefaultNamespace, Query: q, Mode: mode, AsOf: asOf,
				Kinds: []string{engram.KindTurn, engram.KindMemory}})
			if err != nil {
				t.Fatalf("recall %s %q: %v", mode, q, err)
			}
			ids := make([]string, len(resp.Results))
			for i, x := range resp.Results {
				ids[i] = x.ID
			}
			out = append(out, mode+" "+q+": "+strings.Join(ids, " "))
		}
	}
	return out
}

// TestRebuild_DeletedPalace: delete palace.db, rebuild from the archive, and
// recall gives the same top-10 ids as before for a fixed set of queries; a
// second rebuild keeps the first as palace.db.before-rebuild.
func TestRebuild_DeletedPalace(t *testing.T) {
	testutil.LongRun(t)
	ctx := t.Context()
	home := filepath.Join(t.TempDir(), "home")
	e, cfg := openDefault(t, home)
	conv, err := os.ReadFile(layertest.Conversation(t, 1200))
	if err != nil {
		t.Fatal(err)
	}
	ingestLines(t, e, cfg, string(conv))
	runAllJobs(t, e)
	before := recallIDs(t, e)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"palace.db", "palace.db-wal", "palace.db-shm"} {
		os.Remove(filepath.Join(home, f))
	}
	rep, err := engine.Rebuild(ctx, cfg, quiet(), nil, true)
	if err != nil || rep.Turns != 1200 {
		t.Fatalf("rebuild: %+v, %v", rep, err)
	}
	e, _ = openDefault(t, home)
	if after := recallIDs(t, e); !slices.Equal(after, before) {
		for i := range before {
			if before[i] != after[i] {
				t.Errorf("after the rebuild:\n got %s\nwant %s", after[i], before[i])
			}
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	// A second rebuild keeps the first as palace.db.before-rebuild.
	if rep, err = engine.Rebuild(ctx, cfg, quiet(), nil, true); err != nil || !strings.HasSuffix(rep.Previous, homedir.PreviousSuffix) {
		t.Fatalf("second rebuild: %+v, %v", rep, err)
	}
	if _, err := os.Stat(filepath.Join(home, homedir.PalaceFile+homedir.PreviousSuffix)); err != nil {
		t.Error(err)
	}
}
