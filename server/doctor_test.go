package server_test

import (
	"path/filepath"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/server"
)

// TestDoctorServed: a server, whose jobs ran at start, answers GET
// /v1/doctor with every check passed and the jobs on schedule.
func TestDoctorServed(t *testing.T) {
	s := startServer(t, filepath.Join(t.TempDir(), "home"), nil)
	ingestVectorTurns(t, s)
	testutil.WaitUntil(t, "the jobs' first runs", func() bool {
		var out struct{ Jobs []engram.JobStatus }
		call(t, s, "GET", "/v1/jobs", nil, &out)
		for _, j := range out.Jobs {
			if j.LastSuccess.IsZero() {
				return false
			}
		}
		return len(out.Jobs) > 0
	})
	var rep engram.DoctorReport
	if code := call(t, s, "GET", "/v1/doctor", nil, &rep); code != 200 || rep.Status != "ok" {
		t.Fatalf("GET /v1/doctor: %d %+v", code, rep)
	}
	if n := rep.Count(engram.CheckWarn); n > 0 {
		t.Errorf("%d warnings on a clean served home:\n%s", n, testutil.ReportText(rep))
	}
	testutil.MustFindCheck(t, rep, "jobs", "ok", "jobs on schedule")
}

// TestDoctorHereOrOnTheServer: server.Doctor checks the home here when no
// server runs, and asks the running server when one does, naming it.
func TestDoctorHereOrOnTheServer(t *testing.T) {
	ctx := t.Context()
	home := filepath.Join(t.TempDir(), "home")
	s, stop := serve(t, home, nil)
	ingestVectorTurns(t, s)
	if err := server.WriteServeInfo(home, s.Addr()); err != nil { // as engram serve does
		t.Fatal(err)
	}
	cfg, err := server.LoadConfig(home, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	rep, at, err := server.Doctor(ctx, cfg, quiet())
	if err != nil || at != s.Addr() || len(rep.Checks) == 0 {
		t.Fatalf("Doctor beside a server: at %q, %v, %+v", at, err, rep)
	}
	stop()
	rep, at, err = server.Doctor(ctx, cfg, quiet())
	if err != nil || at != "" || rep.Failed() {
		t.Fatalf("Doctor here: at %q, %v\n%s", at, err, testutil.ReportText(rep))
	}
	testutil.MustFindCheck(t, rep, "archive", "ok", "3 turns")
}
