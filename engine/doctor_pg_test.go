package engine_test

import (
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/internal/pgtest"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/postgres"
)

// lagOK reports whether the doctor of e finds its palace current with the
// shared archive.
func lagOK(t *testing.T, e *engine.Engine) bool {
	t.Helper()
	_, ok := testutil.FindCheck(e.Doctor(t.Context()), "postgres-lag", engram.CheckOK, "current")
	return ok
}

// TestDoctorTeamBehind: the doctor of a stopped server reports how far
// its palace is behind what another server archived and forgot since (a
// warning naming engram serve); the running server, and the stopped one
// once it serves again, are current. Both report the database and its
// schema.
func TestDoctorTeamBehind(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ctx := t.Context()
	cfgA, cfgB := teamConfig(filepath.Join(t.TempDir(), "a"), url), teamConfig(filepath.Join(t.TempDir(), "b"), url)
	a, err := engine.Open(ctx, cfgA, quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := engine.Open(ctx, cfgB, quiet())
	if err != nil {
		t.Fatal(err)
	}
	turn := func(id, content string) engram.Turn {
		return engram.Turn{ID: id, Namespace: engram.DefaultNamespace, Session: "s1", Speaker: "Ana", Role: "user", Content: content}
	}
	if _, err := a.Ingest(ctx, []engram.Turn{turn("t1", "the kettle whistles at seven")}); err != nil {
		t.Fatal(err)
	}
	testutil.WaitUntil(t, "B to index A's turn", func() bool { return finds(t, b, "kettle whistles", "seven") })
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}

	if _, err := a.Ingest(ctx, []engram.Turn{turn("t2", "the lantern is blue"), turn("t3", "the lantern is green")}); err != nil {
		t.Fatal(err)
	}
	if rep, err := a.Forget(ctx, engram.ForgetRequest{IDs: []string{"t1"}, Reason: "test"}); err != nil || len(rep.Turns) != 1 {
		t.Fatalf("forget on A: %+v, %v", rep, err)
	}
	rep := engine.DoctorHome(ctx, cfgB, quiet())
	testutil.MustFindCheck(t, rep, "postgres", engram.CheckOK, "answers", postgres.Where(url))
	testutil.MustFindCheck(t, rep, "postgres-schema", engram.CheckOK, "as this engram knows")
	c := testutil.MustFindCheck(t, rep, "postgres-lag", engram.CheckWarn, "2 turns behind the archive (indexed through seq 1 of 3)",
		"1 forget or redaction behind its rewrite journal (applied through entry 0 of 1)", "no server had it open")
	if !strings.HasPrefix(c.Fix, "engram serve") {
		t.Errorf("fix: %q", c.Fix)
	}

	// A passes its own forget's journal entry in the background.
	testutil.WaitUntil(t, "A to be current", func() bool { return lagOK(t, a) })
	testutil.MustFindCheck(t, a.Doctor(ctx), "postgres-lag", engram.CheckOK, "indexed through seq 3", "through entry 1")
	b, err = engine.Open(ctx, cfgB, quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	testutil.WaitUntil(t, "B to catch up", func() bool { return lagOK(t, b) })
}

// TestDoctorTeamDown: with its database down, the doctor fails the
// check naming host:port/database, never the password, in its JSON too,
// and does not open the home (which would wait on the database).
func TestDoctorTeamDown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cfg := testConfig(filepath.Join(t.TempDir(), "home"))
	cfg.Store = config.StorePostgres
	cfg = cfg.WithPostgresURL(fmt.Sprintf("postgres://team:pw-h1dden-42@127.0.0.1:%d/memory?sslmode=disable", port))
	rep := doctor(t, cfg, true)
	where := fmt.Sprintf("127.0.0.1:%d/memory", port)
	c := testutil.MustFindCheck(t, rep, "postgres", engram.CheckFail, "cannot reach PostgreSQL at "+where)
	if !strings.Contains(c.Fix, "start PostgreSQL at "+where) {
		t.Errorf("fix: %q", c.Fix)
	}
	out, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "pw-h1dden-42") || !strings.Contains(string(out), `"name":"postgres","status":"fail"`) {
		t.Fatalf("JSON: %s", out)
	}
}

// TestDoctorTeamDatabaseStops: a running server whose database stops
// fails the check (and skips those that read the archive), then passes
// once the database is back.
func TestDoctorTeamDatabaseStops(t *testing.T) {
	c := pgtest.StartCluster(t)
	ctx := t.Context()
	e, err := engine.Open(ctx, teamConfig(filepath.Join(t.TempDir(), "home"), c.URL()), quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.Ingest(ctx, []engram.Turn{{ID: "t1", Namespace: engram.DefaultNamespace, Session: "s", Speaker: "Ana", Role: "user",
		Content: "the tide turns at dusk"}}); err != nil {
		t.Fatal(err)
	}
	c.Kill(t)
	rep := e.Doctor(ctx)
	testutil.MustFindCheck(t, rep, "postgres", engram.CheckFail, "cannot reach PostgreSQL")
	testutil.MustFindCheck(t, rep, "sqlite", engram.CheckOK)
	for _, ch := range rep.Checks {
		if ch.Name == "archive" || ch.Name == "index" {
			t.Errorf("the archive was checked in a database that does not answer:\n%s", testutil.ReportText(rep))
		}
	}
	c.Start(t)
	testutil.WaitUntil(t, "the doctor to find the database back", func() bool { return lagOK(t, e) })
}
