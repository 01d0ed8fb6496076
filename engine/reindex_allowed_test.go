package engine_test

import (
	"strings"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/internal/testutil"
)

// TestReindexVectorsRefusesWithoutVectors: a reindex in the foreground
// refuses a home with no vector index by itself (EINVALID), as the
// server's reindex does, instead of relying on its caller to ask first;
// the error names the setting, and the doctor finds nothing wrong.
func TestReindexVectorsRefusesWithoutVectors(t *testing.T) {
	ctx := t.Context()
	cfg := testConfig(t.TempDir())
	e, err := engine.Open(ctx, cfg, quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ingestLines(t, e, cfg, vectorTurns)
	if _, err := e.ReindexVectors(ctx, false, nil); engram.ErrorCode(err) != engram.EINVALID || !strings.Contains(err.Error(), "embedder = none") {
		t.Fatalf("ReindexVectors with embedder = none: %v, want EINVALID naming the setting", err)
	}
	rep := e.Doctor(ctx)
	if rep.Failed() {
		t.Fatalf("doctor:\n%s", testutil.ReportText(rep))
	}
	testutil.MustFindCheck(t, rep, "vectors", "ok", "embedder = none")
}
