package server_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/chroma"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/embedder"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/homedir"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/server"
)

// TestNotServedCommands: a rebuild, a restore and a repair need the home to
// themselves: while a server answers for it (serve.json names it) they are
// refused with ECONFLICT naming the server, and nothing is changed.
func TestNotServedCommands(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	s := startServer(t, home, nil)
	if err := server.WriteServeInfo(home, s.Addr()); err != nil {
		t.Fatal(err)
	}
	cfg, err := server.LoadConfig(home, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	refused := func(what string, err error) {
		t.Helper()
		if engram.ErrorCode(err) != engram.ECONFLICT || !strings.Contains(err.Error(), s.Addr()) || !strings.Contains(err.Error(), "stop it") {
			t.Errorf("%s while served: %v, want ECONFLICT naming the server", what, err)
		}
	}
	_, _, err = server.Rebuild(ctx, cfg, quiet(), nil, true)
	refused("rebuild", err)
	refused("repair", server.CheckNotServed(ctx, cfg, "repair"))
	backup := filepath.Join(t.TempDir(), "backup")
	if _, err := s.Engine.Backup(ctx, engram.BackupRequest{Dir: backup}); err != nil {
		t.Fatal(err)
	}
	_, err = server.Restore(ctx, cfg, backup, true, func() (server.Config, error) { return cfg, nil }, func(server.Config) *slog.Logger { return quiet() })
	refused("restore", err)
	if _, err := os.Stat(filepath.Join(home, homedir.PalaceFile+homedir.PreviousSuffix)); err == nil {
		t.Error("a refused rebuild kept a previous palace")
	}
}

// TestRestore_StorePostgres: a backup restored into a home whose config
// selects store = "postgres" is refused with a message that says why,
// once its files are in place (the database would be served, not them).
func TestRestore_StorePostgres(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	s := startServer(t, home, nil)
	ctx := t.Context()
	if _, err := s.Engine.Ingest(ctx, []engram.Turn{{ID: "r1", Namespace: engram.DefaultNamespace, Session: "s", Speaker: "Ana", Role: "user", Content: "the kiln fires at noon"}}); err != nil {
		t.Fatal(err)
	}
	backup := filepath.Join(t.TempDir(), "backup")
	if _, err := s.Engine.Backup(ctx, engram.BackupRequest{Dir: backup}); err != nil {
		t.Fatal(err)
	}
	into := filepath.Join(t.TempDir(), "restored")
	load := func() (server.Config, error) {
		cfg, err := server.LoadConfig(into, func(string) string { return "" })
		cfg.Store = config.StorePostgres
		return cfg, err
	}
	_, err := server.Restore(ctx, server.Config{Config: config.Config{Home: into}}, backup, false, load, func(server.Config) *slog.Logger { return quiet() })
	if engram.ErrorCode(err) != engram.EINVALID || !strings.Contains(err.Error(), `store = "postgres"`) || !strings.Contains(err.Error(), "engram migrate") {
		t.Fatalf("restore into a home on PostgreSQL: %v, want EINVALID naming the store and engram migrate", err)
	}
	if _, err := os.Stat(filepath.Join(into, homedir.PalaceFile)); err != nil {
		t.Errorf("the backup's files are not in place after the refusal: %v", err)
	}
}

// TestRebuildChroma: with vector_index = chroma, the rebuild also refills
// the Chroma collection from the rebuilt palace (here after the collection
// was lost), and the doctor finds it in step.
func TestRebuildChroma(t *testing.T) {
	env := testutil.Servers(t, "ENGRAM_TEST_CHROMA_URL")
	ctx := t.Context()
	home := filepath.Join(t.TempDir(), "home")
	database := "rebuild-" + time.Now().Format("150405.000000")
	writeConfig(t, home, "extractor = \"none\"\nvector_index = \"chroma\"\nchroma_url = \""+env["ENGRAM_TEST_CHROMA_URL"]+"\"\nchroma_database = \""+database+"\"\n")
	b := embedder.New()
	ix, err := chroma.Open(ctx, chroma.Config{URL: env["ENGRAM_TEST_CHROMA_URL"], Database: database, Model: b.Model(), Dim: b.Dim()})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	cfg, err := server.LoadConfig(home, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.Open(ctx, cfg.Config, quiet())
	if err != nil {
		t.Fatal(err)
	}
	var turns []engram.Turn
	for i := range 12 {
		turn, err := engram.TurnInput{Session: fmt.Sprintf("s%d", i%3), Speaker: "Ana", Content: fmt.Sprintf("note zq%04d about the release checklist, number %d", i, i)}.Turn("", time.Now(), cfg.Limits())
		if err != nil {
			t.Fatal(err)
		}
		turns = append(turns, turn)
	}
	if _, err := e.Ingest(ctx, turns); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ix.DropCollection(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"palace.db", "palace.db-wal", "palace.db-shm"} {
		os.Remove(filepath.Join(home, f))
	}
	rep, refilled, err := server.Rebuild(ctx, cfg, quiet(), nil, true)
	if err != nil || !refilled || rep.Turns != 12 {
		t.Fatalf("rebuild: %+v, refilled %v, %v", rep, refilled, err)
	}
	// The 12 turns' vectors and their 3 sessions' (retrieval units).
	if n, err := ix.Count(ctx); err != nil || n != 15 {
		t.Fatalf("Chroma holds %d vectors (%v), want 15", n, err)
	}
	doc := engine.DoctorHome(ctx, cfg.Config, quiet())
	found := false
	for _, c := range doc.Checks {
		found = found || c.Name == "chroma" && c.Status == engram.CheckOK && strings.Contains(c.Finding, "holds the 15 stored vectors")
	}
	if !found {
		t.Errorf("doctor after the rebuild: %+v, want chroma ok holding the 15 stored vectors", doc.Checks)
	}
	if err := ix.DropCollection(context.Background()); err != nil {
		t.Error(err)
	}
}
