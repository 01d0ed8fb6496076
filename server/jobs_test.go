package server_test

import (
	"path/filepath"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/testutil"
)

// TestJobsServed: a server serves the engine's nine scheduled jobs: GET
// /v1/jobs lists them, POST /v1/jobs/NAME/run runs one and answers its
// status, and an unknown job is a 404.
func TestJobsServed(t *testing.T) {
	s := startServer(t, filepath.Join(t.TempDir(), "home"), nil)
	var list struct{ Jobs []engram.JobStatus }
	if code := call(t, s, "GET", "/v1/jobs", nil, &list); code != 200 || len(list.Jobs) != 9 {
		t.Fatalf("GET /v1/jobs: %d %+v", code, list)
	}
	// A new home's jobs are all overdue: the server catches up on them as
	// it starts, and a run asked for meanwhile is a 409.
	testutil.WaitUntil(t, "the catch-up of the jobs at start", func() bool {
		call(t, s, "GET", "/v1/jobs", nil, &list)
		for _, j := range list.Jobs {
			if j.Running || j.LastRun.IsZero() {
				return false
			}
		}
		return true
	})
	var st engram.JobStatus
	if code := call(t, s, "POST", "/v1/jobs/index-compact/run", map[string]any{}, &st); code != 200 || st.Name != "index-compact" || st.Failing {
		t.Fatalf("POST /v1/jobs/index-compact/run: %d %+v", code, st)
	}
	var e struct{ Error struct{ Code string } }
	if code := call(t, s, "POST", "/v1/jobs/nope/run", map[string]any{}, &e); code != 404 || e.Error.Code != "not_found" {
		t.Errorf("unknown job over HTTP: %d %+v", code, e)
	}
}
