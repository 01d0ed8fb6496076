package server_test

import (
	"path/filepath"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/testutil"
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
