package httpapi_test

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/engram-dev/engram/httpapi"
	"github.com/engram-dev/engram/internal/metricstest"
)

func TestMetricsAfterTraffic(t *testing.T) {
	s := mustOpenStack(t, httpapi.Config{Token: "sekret"})

	before := metricstest.Scrape(t, s.URL+httpapi.MetricsPath, s.Token)
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total", "engram_ingest_turns_total", "engram_ingest_duplicates_total"} {
		if before[name] == nil {
			t.Errorf("family %s missing before any traffic", name)
		}
	}
	if v := metricstest.Value(metricstest.Find(before, "engram_ingest_turns_total", nil)); v != 0 {
		t.Fatalf("engram_ingest_turns_total = %v before any ingest", v)
	}

	for _, body := range []string{
		`{"session":"s1","id":"t-1","speaker":"Alice","content":"We decided to use PostgreSQL for billing"}`,
		`{"turns":[{"session":"s1","content":"Noted: PostgreSQL."},{"session":"s1","id":"t-1","speaker":"Alice","content":"We decided to use PostgreSQL for billing"}]}`,
	} {
		if code, out := s.do(t, "POST", "/v1/turns", []byte(body)); code != http.StatusCreated {
			t.Fatalf("ingest: %d %v", code, out)
		}
	}
	if code, out := s.do(t, "POST", "/v1/turns", []byte(`{"session":""}`)); code != http.StatusBadRequest {
		t.Fatalf("bad ingest: %d %v", code, out)
	}
	for range 2 {
		if code, out := s.do(t, "POST", "/v1/recall", []byte(`{"query":"PostgreSQL billing","mode":"keyword"}`)); code != http.StatusOK {
			t.Fatalf("recall: %d %v", code, out)
		}
	}
	if code, _ := s.do(t, "GET", "/no/such/route", nil); code != http.StatusNotFound {
		t.Fatalf("unknown route: %d", code)
	}
	if code, _ := s.do(t, "POST", "/v1/jobs/index/run", nil); code != http.StatusNotImplemented {
		t.Fatalf("jobs without a JobService: %d", code)
	}

	// Same auth rules as the API: no token, no metrics.
	resp, err := http.Get(s.URL + httpapi.MetricsPath)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("GET /metrics without the token: %d, want 401", resp.StatusCode)
	}

	after := metricstest.Scrape(t, s.URL+httpapi.MetricsPath, s.Token)
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"engram_ingest_turns_total", nil, 3},
		{"engram_ingest_duplicates_total", nil, 1},
		{"engram_ingest_requests_total", map[string]string{"code": "ok"}, 2},
		{"engram_ingest_duration_seconds", nil, 2},
		{"engram_recall_duration_seconds", map[string]string{"mode": "keyword"}, 2},
		{"engram_recall_results", map[string]string{"mode": "keyword"}, 2},
		{"engram_http_requests_total", map[string]string{"method": "POST", "route": "/v1/turns", "status": "201"}, 2},
		{"engram_http_requests_total", map[string]string{"method": "POST", "route": "/v1/turns", "status": "400"}, 1},
		{"engram_http_requests_total", map[string]string{"method": "POST", "route": "/v1/recall", "status": "200"}, 2},
		{"engram_http_requests_total", map[string]string{"method": "GET", "route": "unmatched", "status": "404"}, 1},
		{"engram_http_requests_total", map[string]string{"method": "POST", "route": "/v1/jobs/:name/run", "status": "501"}, 1},
		{"engram_http_requests_total", map[string]string{"method": "GET", "route": "/metrics", "status": "401"}, 1},
		{"engram_http_requests_total", map[string]string{"method": "GET", "route": "/metrics", "status": "200"}, 1},
		{"engram_http_request_duration_seconds", map[string]string{"method": "POST", "route": "/v1/recall"}, 2},
	} {
		if got := metricstest.Value(metricstest.Find(after, tc.name, tc.labels)); got != tc.want {
			t.Errorf("%s%v = %v, want %v", tc.name, tc.labels, got, tc.want)
		}
	}
	for name, typ := range map[string]dto.MetricType{
		"engram_http_requests_total":           dto.MetricType_COUNTER,
		"engram_http_request_duration_seconds": dto.MetricType_HISTOGRAM,
		"engram_ingest_duration_seconds":       dto.MetricType_HISTOGRAM,
		"engram_recall_duration_seconds":       dto.MetricType_HISTOGRAM,
		"engram_recall_results":                dto.MetricType_HISTOGRAM,
	} {
		if f := after[name]; f == nil || f.GetType() != typ {
			t.Errorf("%s: family %v, want type %v", name, f, typ)
		}
	}
	// Results per recall: 2 recalls of the 2 PostgreSQL turns (the
	// duplicate was not written again).
	if h := metricstest.Find(after, "engram_recall_results", map[string]string{"mode": "keyword"}).GetHistogram(); h.GetSampleSum() != 4 {
		t.Errorf("engram_recall_results sum = %v, want 4", h.GetSampleSum())
	}
}

// TestMetricsBoundedLabels: requests with invented methods, unknown paths
// and a foreign Host, none authenticated, leave a bounded number of series:
// the labels come from the server's own routes and methods, never from the
// request.
func TestMetricsBoundedLabels(t *testing.T) {
	s := mustOpenStack(t, httpapi.Config{Token: "sekret"})
	for i := range 300 {
		var req *http.Request
		switch i % 3 {
		case 0: // an invented method on a route
			req, _ = http.NewRequest(fmt.Sprintf("M%d", i), s.URL+"/v1/turns", nil)
		case 1: // an invented method on an unknown path, with a foreign Host
			req, _ = http.NewRequest(fmt.Sprintf("X%d", i), s.URL+fmt.Sprintf("/p/%d", i), nil)
			req.Host = fmt.Sprintf("h%d.example", i)
		case 2: // a known method, a foreign Host
			req, _ = http.NewRequest("GET", s.URL+fmt.Sprintf("/v1/stats?n=%d", i), nil)
			req.Host = fmt.Sprintf("h%d.example", i)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	after := metricstest.Scrape(t, s.URL+httpapi.MetricsPath, s.Token)
	for _, name := range []string{"engram_http_requests_total", "engram_http_request_duration_seconds"} {
		f := after[name]
		if f == nil {
			t.Fatalf("no %s", name)
		}
		if n := len(f.GetMetric()); n > 10 {
			t.Errorf("%s has %d series after 300 probes, want at most 10", name, n)
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "method" && !slices.Contains([]string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "other"}, l.GetValue()) {
					t.Errorf("%s has method %q", name, l.GetValue())
				}
			}
		}
	}
	if got := metricstest.Value(metricstest.Find(after, "engram_http_requests_total", map[string]string{"method": "other", "route": "unmatched", "status": "403"})); got != 100 {
		t.Errorf("refused probes with invented methods counted %v, want 100", got)
	}
}
