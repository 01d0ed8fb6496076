package engine_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/engram-dev/engram/chroma"
	"github.com/engram-dev/engram/embedder"
	"github.com/engram-dev/engram/internal/testutil"
)

// chromaHome makes a home whose vector index is the shared Chroma test
// server, in a database of its own named after prefix, and opens that
// database's collection of the builtin model for the test to look into
// (closed at the end).
func chromaHome(t *testing.T, prefix string) (string, *chroma.Index) {
	t.Helper()
	env := testutil.Servers(t, "ENGRAM_TEST_CHROMA_URL")
	home := filepath.Join(t.TempDir(), "home")
	database := prefix + "-" + time.Now().Format("150405.000000")
	writeConfig(t, home, "extractor = \"none\"\nvector_index = \"chroma\"\nchroma_url = \""+env["ENGRAM_TEST_CHROMA_URL"]+"\"\nchroma_database = \""+database+"\"\n")
	b := embedder.New()
	ix, err := chroma.Open(t.Context(), chroma.Config{URL: env["ENGRAM_TEST_CHROMA_URL"], Database: database, Model: b.Model(), Dim: b.Dim()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return home, ix
}
