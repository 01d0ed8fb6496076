package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/internal/filetest"
	"github.com/engram-dev/engram/internal/pgtest"
	"github.com/engram-dev/engram/internal/testutil"
)

// TestMigratePostgres copies a home's archive into an empty PostgreSQL
// database and back into a new home, which a rebuild then indexes: the
// same turns on each side. A full database, a home without an archive, a
// home with an archive already and another program's folder are refused,
// the last without a byte of it changed.
func TestMigratePostgres(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ctx := t.Context()
	tmp := t.TempDir()
	cfg := testConfig(filepath.Join(tmp, "home"))
	e, err := engine.Open(ctx, cfg, quiet())
	if err != nil {
		t.Fatal(err)
	}
	var turns []engram.Turn
	for i, text := range []string{"The quokka migration is planned for May.", "Staging runs on port 6543.", "Alice prefers tea."} {
		turns = append(turns, engram.Turn{ID: "t" + string(rune('1'+i)), Namespace: engram.DefaultNamespace, Session: "s1",
			Role: engram.RoleUser, Content: text})
	}
	if _, err := e.Ingest(ctx, turns); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	// The home's settings, vaults among them, go with it and come back.
	vault := filepath.Join(tmp, "vault")
	conf := "embedder = \"none\"\nextractor = \"none\"\n\n[[vaults]]\npath = \"" + vault + "\"\n"
	if err := os.WriteFile(filepath.Join(cfg.Home, config.ConfigFile), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}

	info, err := engine.MigrateToPostgres(ctx, cfg.Home, url, quiet())
	if err != nil || info.Lines != 3 || info.Turns != 3 || info.LastSeq != 3 || info.Config != int64(len(conf)) {
		t.Fatalf("MigrateToPostgres: %+v, %v", info, err)
	}
	if _, err := engine.MigrateToPostgres(ctx, cfg.Home, url, quiet()); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("into a full database: %v", err)
	}
	if _, err := engine.MigrateToPostgres(ctx, filepath.Join(tmp, "none"), url, quiet()); err == nil || !strings.Contains(err.Error(), "has no archive") {
		t.Fatalf("from a home without an archive: %v", err)
	}

	back := testConfig(filepath.Join(tmp, "back"))
	if info, err = engine.MigrateFromPostgres(ctx, url, back.Home, quiet()); err != nil || info.Lines != 3 || info.Turns != 3 {
		t.Fatalf("MigrateFromPostgres: %+v, %v", info, err)
	}
	if got, err := os.ReadFile(filepath.Join(back.Home, config.ConfigFile)); err != nil || string(got) != conf {
		t.Fatalf("the migrated home's config.toml: %q %v; want the first home's", got, err)
	}
	if _, err := engine.MigrateFromPostgres(ctx, url, back.Home, quiet()); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("into a home with an archive: %v", err)
	}
	rep, err := engine.Rebuild(ctx, back, quiet(), nil, false)
	if err != nil || rep.Turns != 3 {
		t.Fatalf("rebuild of the migrated home: %+v, %v", rep, err)
	}
	e, err = engine.Open(ctx, back, quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if !finds(t, e, "quokka", "planned for May") {
		t.Error("the migrated home does not recall a migrated turn")
	}

	other := filepath.Join(tmp, "other")
	testutil.WriteTree(t, other, map[string]string{"engram.db": otherToolDB})
	before := filetest.Snapshot(t, other)
	if _, err := engine.MigrateFromPostgres(ctx, url, other, quiet()); err == nil || !strings.Contains(err.Error(), "engram.db") {
		t.Fatalf("into another program's folder: %v", err)
	}
	filetest.MustBeUnchanged(t, "migrate --from", other, before)
}
