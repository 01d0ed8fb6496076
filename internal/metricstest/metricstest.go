// Package metricstest reads a Prometheus scrape for the tests of the HTTP
// API and of the CLI: fetch and parse /metrics, find a metric by its
// labels, read its value. Only tests import it.
package metricstest

import (
	"net/http"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/engram-dev/engram/internal/testutil"
)

// Scrape fetches url, a /metrics endpoint, with token as the bearer unless
// it is "", and parses the answer, which must be 200 in the text format.
func Scrape(tb testing.TB, url, token string) map[string]*dto.MetricFamily {
	tb.Helper()
	headers := map[string]string{}
	if token != "" {
		headers["Authorization"] = "Bearer " + token
	}
	resp := testutil.Request(tb, "GET", url, "", headers)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		tb.Fatalf("GET /metrics: status %d", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		tb.Fatalf("GET /metrics: Content-Type %q, want the text format", ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		tb.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// Find returns the metric of family name whose labels include want, or
// nil.
func Find(fams map[string]*dto.MetricFamily, name string, want map[string]string) *dto.Metric {
next:
	for _, m := range fams[name].GetMetric() {
		got := map[string]string{}
		for _, lp := range m.GetLabel() {
			got[lp.GetName()] = lp.GetValue()
		}
		for k, v := range want {
			if got[k] != v {
				continue next
			}
		}
		return m
	}
	return nil
}

// Value is a counter's or gauge's value, a histogram's sample count; -1
// for no metric or another kind.
func Value(m *dto.Metric) float64 {
	switch {
	case m == nil:
		return -1
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	}
	return -1
}
