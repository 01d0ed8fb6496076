package httpapi

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/engram-dev/engram"
)

// MetricsPath is where the Prometheus metrics are served. It follows the
// same auth rules as the API: the bearer token is required when one is
// configured.
const MetricsPath = "/metrics"

// routeUnmatched is the route label of requests no route matched, so that
// scanners probing random paths cannot grow the label set.
const routeUnmatched = "unmatched"

// Buckets of the latency histograms, in seconds: ingest waits for an fsync,
// recall for an embedding and a search, so both span a millisecond to tens
// of seconds (a cold Ollama model).
var latencyBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// resultBuckets are the buckets of the recall result-count histogram (k is
// at most engram.MaxK).
var resultBuckets = []float64{0, 1, 3, 5, 10, 20, 50, 100, 200}

// metrics are the server's Prometheus metrics, in a private registry (never
// the global one, so two servers in one process, as in tests, do not clash).
type metrics struct {
	reg *prometheus.Registry

	httpRequests *prometheus.CounterVec   // method, route, status
	httpDuration *prometheus.HistogramVec // method, route

	ingestRequests   *prometheus.CounterVec // code: "ok" or the engram error code
	ingestTurns      prometheus.Counter
	ingestDuplicates prometheus.Counter
	ingestDuration   prometheus.Histogram

	recallDuration *prometheus.HistogramVec // mode that ran
	recallResults  *prometheus.HistogramVec // mode that ran
	recallErrors   *prometheus.CounterVec   // code
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "engram_http_requests_total",
			Help: "HTTP requests by method (\"other\" for a non-standard one), route (the route pattern, or \"unmatched\") and status.",
		}, []string{"method", "route", "status"}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "engram_http_request_duration_seconds",
			Help:    "HTTP request latency by method and route.",
			Buckets: latencyBuckets,
		}, []string{"method", "route"}),
		ingestRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "engram_ingest_requests_total",
			Help: "Ingest calls by outcome: \"ok\" or the engram error code.",
		}, []string{"code"}),
		ingestTurns: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "engram_ingest_turns_total",
			Help: "Turns acknowledged by ingest, duplicates included.",
		}),
		ingestDuplicates: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "engram_ingest_duplicates_total",
			Help: "Turns whose id was archived before (nothing written).",
		}),
		ingestDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "engram_ingest_duration_seconds",
			Help:    "Ingest latency, the archive fsync included.",
			Buckets: latencyBuckets,
		}),
		recallDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "engram_recall_duration_seconds",
			Help:    "Latency of successful recalls by the mode that ran (auto resolves to hybrid or deep).",
			Buckets: latencyBuckets,
		}, []string{"mode"}),
		recallResults: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "engram_recall_results",
			Help:    "Results returned per successful recall, by the mode that ran.",
			Buckets: resultBuckets,
		}, []string{"mode"}),
		recallErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "engram_recall_errors_total",
			Help: "Failed recalls by engram error code.",
		}, []string{"code"}),
	}
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.httpRequests, m.httpDuration,
		m.ingestRequests, m.ingestTurns, m.ingestDuplicates, m.ingestDuration,
		m.recallDuration, m.recallResults, m.recallErrors,
	)
	return m
}

// Registerer returns the registry /metrics serves, for the collectors of
// the process that embeds the server (index sizes, jobs).
func (s *Server) Registerer() prometheus.Registerer { return s.metrics.reg }

// metricsHandler serves the registry in the Prometheus text format (or
// OpenMetrics or protobuf, as the scraper asks). A collector that fails
// drops its own metrics from the scrape, not the others.
func (s *Server) metricsHandler() echo.HandlerFunc {
	h := promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{
		ErrorLog:      slogAdapter{s.logger},
		ErrorHandling: promhttp.ContinueOnError,
		Registry:      s.metrics.reg, // promhttp_metric_handler_errors_total
	})
	return echo.WrapHandler(h)
}

// slogAdapter lets promhttp log through slog.
type slogAdapter struct{ l *slog.Logger }

func (a slogAdapter) Println(v ...any) { a.l.Warn("collect metrics", "err", fmt.Sprint(v...)) }

var notFoundHandler = reflect.ValueOf(echo.NotFoundHandler).Pointer()

// methodOther is the method label of every method but the standard ones.
const methodOther = "other"

// methodLabel is the method label of a request: the method when it is a
// standard one, else methodOther. The instrument runs before the Host,
// Origin and token checks, so nothing a client chooses freely may become a
// label value: each new value would be a series kept for the process's
// life.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions:
		return m
	}
	return methodOther
}

// instrument counts every request by route and status and times it. It
// runs outside the other middleware so that 401s and recovered panics are
// counted, and hands an error to the error handler itself to learn the
// status it answers with.
func (s *Server) instrument(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		if err := next(c); err != nil {
			c.Error(err)
		}
		route := c.Path()
		if h := c.Handler(); h == nil || reflect.ValueOf(h).Pointer() == notFoundHandler || route == "" {
			route = routeUnmatched
		}
		method := methodLabel(c.Request().Method)
		s.metrics.httpRequests.WithLabelValues(method, route, strconv.Itoa(c.Response().Status)).Inc()
		s.metrics.httpDuration.WithLabelValues(method, route).Observe(time.Since(start).Seconds())
		return nil
	}
}

// instrumentServices wraps Ingest and Recall to record their metrics,
// whatever transport calls them. It is idempotent.
func (s *Server) instrumentServices() {
	if s.Ingest != nil {
		if _, ok := s.Ingest.(meteredIngest); !ok {
			s.Ingest = meteredIngest{s.Ingest, s.metrics}
		}
	}
	if s.Recall != nil {
		if _, ok := s.Recall.(meteredRecall); !ok {
			s.Recall = meteredRecall{s.Recall, s.metrics}
		}
	}
}

// meteredIngest records ingest counts and latency.
type meteredIngest struct {
	next engram.IngestService
	m    *metrics
}

func (mi meteredIngest) Ingest(ctx context.Context, turns []engram.Turn) (engram.IngestResult, error) {
	start := time.Now()
	res, err := mi.next.Ingest(ctx, turns)
	mi.m.ingestDuration.Observe(time.Since(start).Seconds())
	if err != nil {
		mi.m.ingestRequests.WithLabelValues(engram.ErrorCode(err)).Inc()
		return res, err
	}
	mi.m.ingestRequests.WithLabelValues("ok").Inc()
	mi.m.ingestTurns.Add(float64(len(res.Turns)))
	for _, t := range res.Turns {
		if t.Duplicate {
			mi.m.ingestDuplicates.Inc()
		}
	}
	return res, nil
}

// meteredRecall records recall latency and result counts by the mode that
// ran, read from the response.
type meteredRecall struct {
	next engram.RecallService
	m    *metrics
}

func (mr meteredRecall) Recall(ctx context.Context, req engram.RecallRequest) (engram.RecallResponse, error) {
	start := time.Now()
	resp, err := mr.next.Recall(ctx, req)
	if err != nil {
		mr.m.recallErrors.WithLabelValues(engram.ErrorCode(err)).Inc()
		return resp, err
	}
	mode := resp.Mode
	if mode == "" {
		mode = "unknown"
	}
	mr.m.recallDuration.WithLabelValues(mode).Observe(time.Since(start).Seconds())
	mr.m.recallResults.WithLabelValues(mode).Observe(float64(len(resp.Results)))
	return resp, nil
}

var (
	_ engram.IngestService = meteredIngest{}
	_ engram.RecallService = meteredRecall{}
)
