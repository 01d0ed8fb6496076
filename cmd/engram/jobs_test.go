package main_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-dev/engram/palace"
)

func TestJobs(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	r := runCLI(t, home, "", "jobs", "run", "--due")
	if r.code != 0 {
		t.Fatalf("jobs run --due on a new home: %+v", r)
	}
	for _, job := range []string{"archive-verify", "index-compact", "health-snapshot"} {
		if !strings.Contains(r.stdout, job) {
			t.Errorf("jobs run --due did not report %s:\n%s", job, r.stdout)
		}
	}
	r = runCLI(t, home, "", "jobs", "status", "--json")
	if r.code != 0 || strings.Count(r.stdout, `"last_success"`) != 9 || !strings.Contains(r.stdout, `"failing": false`) {
		t.Fatalf("jobs status after a run: %+v", r)
	}
	if r = runCLI(t, home, "", "jobs", "run", "nope"); r.code != 1 || !strings.Contains(r.stderr, `no job "nope"`) {
		t.Errorf("unknown job: %+v", r)
	}
	if r = runCLI(t, home, "", "jobs", "run"); r.code != 2 {
		t.Errorf("jobs run without a target: %+v", r)
	}

	// Through a running server (its HTTP side: server.TestJobsServed).
	s := startServer(t, home)
	defer s.stop(t)
	if r = runCLI(t, home, "", "jobs", "run", "archive-verify"); r.code != 0 || !strings.Contains(r.stdout, "archive-verify") {
		t.Errorf("jobs run through the server: %+v", r)
	}
}

func TestJobsStatusShowsSkippedBatches(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	if r := runCLI(t, home, "", "jobs", "status"); r.code != 0 {
		t.Fatalf("jobs status on a new home: %+v", r)
	}
	p, err := palace.Open(filepath.Join(home, "palace.db"), palace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Skip(context.Background(), "l1-memories", 1, 12, "the model's reply is not usable: cut at max tokens"); err != nil {
		t.Fatal(err)
	}
	p.Close()
	r := runCLI(t, home, "", "jobs", "status")
	if r.code != 0 || !strings.Contains(r.stdout, "l1-memories skipped 1 batches") || !strings.Contains(r.stdout, "seq 1-12") {
		t.Fatalf("jobs status does not report the skipped batch: %+v", r)
	}
	r = runCLI(t, home, "", "jobs", "status", "--json")
	if !strings.Contains(r.stdout, `"skipped_batches": 1`) {
		t.Fatalf("jobs status --json: %s", r.stdout)
	}
}
