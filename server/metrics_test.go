package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/homedir"
	"github.com/engram-dev/engram/httpapi"
	"github.com/engram-dev/engram/internal/layertest"
	"github.com/engram-dev/engram/internal/metricstest"
	"github.com/engram-dev/engram/internal/testutil"
)

// startMetricsServer serves a home whose palace holds the layertest
// fixtures (memories, scenes and facts in namespaces default and work) the
// way `engram serve` does, and returns its HTTP server.
func startMetricsServer(t *testing.T) *httpapi.Server {
	t.Helper()
	home := layertest.MustHome(t, homedir.PalaceFile, time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC))
	return startServer(t, home, nil).HTTP
}

func scrapeMetrics(t *testing.T, base string) map[string]*dto.MetricFamily {
	t.Helper()
	return metricstest.Scrape(t, base+httpapi.MetricsPath, "")
}

// gaugeOf returns the gauge of family name with the labels want, and
// whether there is one.
func gaugeOf(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	m := metricstest.Find(fams, name, want)
	return m.GetGauge().GetValue(), m != nil
}

func TestMetricsEngine(t *testing.T) {
	srv := startMetricsServer(t)
	base := "http://" + srv.Addr()

	post := func(path, body string, out any) {
		t.Helper()
		resp, err := http.Post(base+path, "application/json", bytes.NewBufferString(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode >= 300 {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("POST %s: %d %s", path, resp.StatusCode, b)
		}
		if out != nil {
			if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
				t.Fatal(err)
			}
		}
	}
	post("/v1/turns", `{"turns":[{"session":"s9","content":"We moved the API to port 30001"},{"session":"s9","content":"Postgres runs the billing"}]}`, nil)
	var rr struct{ Mode string }
	post("/v1/recall", `{"query":"which port does the API use"}`, &rr)

	// The scheduler catches up on every job at start; wait for the jobs
	// and the vectors of the new turns rather than sleep.
	var fams map[string]*dto.MetricFamily
	testutil.WaitUntil(t, "the snapshot job's run and the vectors of the new turns", func() bool {
		fams = scrapeMetrics(t, base)
		_, ran := gaugeOf(fams, "engram_job_last_run_timestamp_seconds", map[string]string{"job": config.JobSnapshot})
		lag, vec := gaugeOf(fams, "engram_vector_lag_turns", nil)
		return ran && vec && lag == 0
	})

	for _, tc := range []struct {
		name   string
		labels map[string]string
		min    float64
	}{
		{"engram_index_items", map[string]string{"namespace": "default", "layer": "turns"}, 2},
		{"engram_index_items", map[string]string{"namespace": "default", "layer": "memories"}, 3},
		{"engram_index_items", map[string]string{"namespace": "work", "layer": "memories"}, 1},
		{"engram_index_items", map[string]string{"namespace": "default", "layer": "scenes"}, 3},
		{"engram_index_items", map[string]string{"namespace": "default", "layer": "facts"}, 1},
		{"engram_archive_turns", nil, 2},
		{"engram_archive_bytes", nil, 1},
		{"engram_archive_last_seq", nil, 2},
		{"engram_vectors", nil, 2},
		{"engram_job_last_run_timestamp_seconds", map[string]string{"job": config.JobSnapshot}, float64(time.Now().Add(-time.Hour).Unix())},
		{"engram_job_last_success_timestamp_seconds", map[string]string{"job": config.JobSnapshot}, 1},
	} {
		if v, ok := gaugeOf(fams, tc.name, tc.labels); !ok || v < tc.min {
			t.Errorf("%s%v = %v (present %v), want at least %v", tc.name, tc.labels, v, ok, tc.min)
		}
	}
	for _, name := range []string{"engram_job_lag_seconds", "engram_job_consecutive_failures", "engram_job_failing", "engram_job_running"} {
		if v, ok := gaugeOf(fams, name, map[string]string{"job": config.JobVerify}); !ok || v < 0 {
			t.Errorf("%s{job=%q} = %v, present %v", name, config.JobVerify, v, ok)
		}
	}
	if v, ok := gaugeOf(fams, "engram_job_failing", map[string]string{"job": config.JobSnapshot}); !ok || v != 0 {
		t.Errorf("engram_job_failing{job=%q} = %v, present %v", config.JobSnapshot, v, ok)
	}
	// The recall is counted by the mode that ran, not the one asked for.
	if rr.Mode == "" || rr.Mode == "auto" {
		t.Fatalf("recall mode %q", rr.Mode)
	}
	found := false
	for _, m := range fams["engram_recall_duration_seconds"].GetMetric() {
		for _, lp := range m.GetLabel() {
			found = found || (lp.GetName() == "mode" && lp.GetValue() == rr.Mode && m.GetHistogram().GetSampleCount() == 1)
		}
	}
	if !found {
		t.Errorf("engram_recall_duration_seconds{mode=%q} lacks the recall: %v", rr.Mode, fams["engram_recall_duration_seconds"])
	}
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes", "engram_http_requests_total", "engram_ingest_turns_total"} {
		if fams[name] == nil {
			t.Errorf("family %s missing", name)
		}
	}
}

// TestOpenAPIServe checks the description against the routes of the fully
// wired server, whatever the other packages add to it.
func TestOpenAPIServe(t *testing.T) {
	srv := startMetricsServer(t)
	diffs, err := httpapi.OpenAPIMismatches(srv.Routes())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Error(d)
	}
}
