package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/archivetest"
	"github.com/engram-dev/engram/internal/pgtest"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/postgres"
)

// doctor runs postgres.Doctor and returns its checks as a report.
func doctor(t *testing.T, url string, a postgres.Applied, usable bool) engram.DoctorReport {
	t.Helper()
	checks, ok := postgres.Doctor(context.Background(), url, a)
	var rep engram.DoctorReport
	for _, c := range checks {
		rep.Add(c)
	}
	if ok != usable {
		t.Fatalf("usable %v, want %v:\n%s", ok, usable, testutil.ReportText(rep))
	}
	return rep
}

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

// TestDoctorUnreachable: a database nobody listens for fails the check,
// naming host:port/database and a fix, never the password; nothing else
// is checked.
func TestDoctorUnreachable(t *testing.T) {
	port := closedPort(t)
	url := fmt.Sprintf("postgres://team:pw-h1dden-42@127.0.0.1:%d/memory?sslmode=disable", port)
	rep := doctor(t, url, postgres.Applied{}, false)
	where := fmt.Sprintf("127.0.0.1:%d/memory", port)
	c := testutil.MustFindCheck(t, rep, postgres.CheckReach, engram.CheckFail, "cannot reach PostgreSQL at "+where)
	if !strings.Contains(c.Fix, "start PostgreSQL at "+where) {
		t.Errorf("fix: %q", c.Fix)
	}
	if len(rep.Checks) != 1 || strings.Contains(testutil.ReportText(rep), "pw-h1dden-42") {
		t.Fatalf("report:\n%s", testutil.ReportText(rep))
	}
	rep = doctor(t, "", postgres.Applied{}, false)
	testutil.MustFindCheck(t, rep, postgres.CheckReach, engram.CheckFail, "no PostgreSQL URL")
}

// TestDoctorSchema: a database without an archive and one at an older
// version warn (engram migrates them when it opens the archive); once
// opened, the check says from which version; a version newer than this
// engram's fails, and the lag is not checked.
func TestDoctorSchema(t *testing.T) {
	url := pgtest.NewDatabase(t)
	rep := doctor(t, url, postgres.Applied{}, true)
	testutil.MustFindCheck(t, rep, postgres.CheckReach, engram.CheckOK, "answers")
	testutil.MustFindCheck(t, rep, postgres.CheckSchema, engram.CheckWarn, "holds no engram archive yet")
	testutil.MustFindCheck(t, rep, postgres.CheckLag, engram.CheckOK, "current")

	db := connect(t, url)
	mustExec(t, db, `CREATE TABLE schema_migrations (component text NOT NULL, version integer NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (component, version))`)
	mustExec(t, db, postgres.Migrations[0])
	mustExec(t, db, `INSERT INTO schema_migrations (component, version) VALUES ('archive', 1)`)
	known := len(postgres.Migrations)
	rep = doctor(t, url, postgres.Applied{}, true)
	testutil.MustFindCheck(t, rep, postgres.CheckSchema, engram.CheckWarn, fmt.Sprintf("at version 1, this engram knows %d", known), "migrates it")

	a := mustOpen(t, url, postgres.Options{})
	if a.SchemaFound() != 1 {
		t.Fatalf("SchemaFound %d, want 1", a.SchemaFound())
	}
	rep = doctor(t, url, postgres.Applied{SchemaFound: a.SchemaFound()}, true)
	testutil.MustFindCheck(t, rep, postgres.CheckSchema, engram.CheckOK, fmt.Sprintf("version %d", known), "migrated from version 1")

	mustExec(t, db, `INSERT INTO schema_migrations (component, version) VALUES ('archive', $1)`, known+1)
	rep = doctor(t, url, postgres.Applied{}, false)
	testutil.MustFindCheck(t, rep, postgres.CheckSchema, engram.CheckFail, "a newer engram migrated it")
	if _, ok := testutil.FindCheck(rep, postgres.CheckLag, engram.CheckOK); ok {
		t.Errorf("the lag was checked on a schema this engram does not know:\n%s", testutil.ReportText(rep))
	}
}

// TestDoctorLag: a palace behind the archive and its rewrite journal
// warns with the counts; a current one passes; one ahead belongs to
// another database.
func TestDoctorLag(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a := mustOpen(t, url, postgres.Options{})
	res := archivetest.MustAppend(t, a, archivetest.Turn("s", "one"), archivetest.Turn("s", "two"), archivetest.Turn("s", "three"))
	if _, err := a.Forget(context.Background(), []string{res[0].ID}, engram.Forgotten{Reason: "x"}); err != nil {
		t.Fatal(err)
	}
	rep := doctor(t, url, postgres.Applied{IndexedSeq: 1, Stopped: true}, true)
	c := testutil.MustFindCheck(t, rep, postgres.CheckLag, engram.CheckWarn, "2 turns behind", "through seq 1 of 3",
		"1 forget or redaction behind", "entry 0 of 1", "no server had it open")
	if c.Fix != "engram serve (it catches up as it starts)" {
		t.Errorf("fix: %q", c.Fix)
	}
	rep = doctor(t, url, postgres.Applied{IndexedSeq: 3}, true)
	c = testutil.MustFindCheck(t, rep, postgres.CheckLag, engram.CheckWarn, "palace is 1 forget or redaction behind", "catches up on its own")
	if c.Fix != "" {
		t.Errorf("fix of a running server: %q", c.Fix)
	}
	rep = doctor(t, url, postgres.Applied{IndexedSeq: 3, Rewrites: 1}, true)
	testutil.MustFindCheck(t, rep, postgres.CheckLag, engram.CheckOK, "current", "through seq 3", "through entry 1")
	rep = doctor(t, url, postgres.Applied{IndexedSeq: 7, Rewrites: 1}, true)
	testutil.MustFindCheck(t, rep, postgres.CheckLag, engram.CheckFail, "another database")
}

// TestDoctorShared: the doctor names the server that ran each shared job
// last, warns of a shared job whose last run failed, and fails on a shared
// vector of a forgotten turn (which only a change behind engram's back
// leaves).
func TestDoctorShared(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ctx := context.Background()
	a := mustOpen(t, url, postgres.Options{})
	res := archivetest.MustAppend(t, a, archivetest.Turn("s", "one"), archivetest.Turn("s", "two"))
	applied := postgres.Applied{IndexedSeq: res[1].Seq}
	testutil.MustFindCheck(t, doctor(t, url, applied, true), postgres.CheckShared, engram.CheckOK, "no shared job has run yet")

	if _, err := a.RunShared(ctx, "archive-verify", time.Hour, func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	testutil.MustFindCheck(t, doctor(t, url, applied, true), postgres.CheckShared, engram.CheckOK, "archive-verify last run by", "no shared vector")
	db := connect(t, url)
	mustExec(t, db, `UPDATE team_jobs SET last_run = last_run - interval '2 hours', last_success = last_success - interval '2 hours'`)
	if _, err := a.RunShared(ctx, "archive-verify", time.Hour, func(context.Context) error { return errors.New("3 problems") }); err == nil {
		t.Fatal("the failing run returned no error")
	}
	c := testutil.MustFindCheck(t, doctor(t, url, applied, true), postgres.CheckShared, engram.CheckWarn, "archive-verify", "failed: 3 problems")
	if !strings.Contains(c.Fix, "engram jobs run archive-verify") {
		t.Errorf("fix: %q", c.Fix)
	}

	if _, err := a.PutTurnVectors(ctx, "m", 0, []int64{res[0].Seq}, [][]float32{{1, 0}}); err != nil {
		t.Fatal(err)
	}
	// Behind engram's back: the row made a tombstone, its vector left.
	mustExec(t, db, `UPDATE archive_turns SET ts = NULL WHERE seq = $1`, res[0].Seq)
	testutil.MustFindCheck(t, doctor(t, url, applied, true), postgres.CheckShared, engram.CheckFail, "1 shared turn vector of forgotten turns is")
}
