package engine_test

import (
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/engine"
)

// TestReindexVectorsRefusesWithoutVectors: a reindex in the foreground
// refuses a home with no vector index by itself (EINVALID), as the
// server's reindex does, instead of relying on its caller to ask first.
func TestReindexVectorsRefusesWithoutVectors(t *testing.T) {
	ctx := t.Context()
	e, err := engine.Open(ctx, testConfig(t.TempDir()), quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.ReindexVectors(ctx, false, nil); engram.ErrorCode(err) != engram.EINVALID {
		t.Fatalf("ReindexVectors with embedder = none: %v, want EINVALID", err)
	}
}
