package engine

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// collectTimeout bounds the reads of one scrape (the palace counts, the
// job state), so a stuck store cannot hold a scraper forever.
const collectTimeout = 10 * time.Second

// Descriptions of the engine's metrics, read at scrape time.
var (
	descItems          = newDesc("engram_index_items", "Items stored per namespace and layer (turns, memories, scenes, facts, ...).", "namespace", "layer")
	descArchiveTurns   = newDesc("engram_archive_turns", "Turns in the archive.")
	descArchiveBytes   = newDesc("engram_archive_bytes", "Size of the archive files.")
	descArchiveFiles   = newDesc("engram_archive_files", "Files of the archive.")
	descArchiveSeq     = newDesc("engram_archive_last_seq", "Sequence number of the last archived turn.")
	descArchiveCorrupt = newDesc("engram_archive_corrupt_lines", "Corrupt archive lines, skipped and kept in place.")
	descIndexLag       = newDesc("engram_index_lag_turns", "Archived turns not yet searchable by keyword.")
	descVectors        = newDesc("engram_vectors", "Vectors in the active model's index.", "model")
	descVectorLag      = newDesc("engram_vector_lag_turns", "Archived turns without a vector of the active model yet.", "model")

	descJobLastRun     = newDesc("engram_job_last_run_timestamp_seconds", "When the job last ran (Unix time); absent if it never ran.", "job")
	descJobLastSuccess = newDesc("engram_job_last_success_timestamp_seconds", "When the job last succeeded (Unix time); absent if it never did.", "job")
	descJobLag         = newDesc("engram_job_lag_seconds", "How far past its interval the job's last success is.", "job")
	descJobFailures    = newDesc("engram_job_consecutive_failures", "Failed runs of the job since its last success.", "job")
	descJobFailing     = newDesc("engram_job_failing", "1 if the job's last run failed.", "job")
	descJobRunning     = newDesc("engram_job_running", "1 while the job runs.", "job")
	descJobSkipped     = newDesc("engram_job_skipped_batches", "Batches a layer worker gave up on (its LLM's output unusable).", "job")
)

// newDesc describes a gauge of the engine, with its label names.
func newDesc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

// engineCollector exports the engine's sizes and job state, read when
// Prometheus scrapes rather than kept up to date on every write.
type engineCollector struct{ e *Engine }

var _ prometheus.Collector = engineCollector{}

// Collector returns the engine's metrics for a Prometheus registry: its
// sizes and job states, read at scrape time.
func (e *Engine) Collector() prometheus.Collector { return engineCollector{e} }

// Describe implements prometheus.Collector.
func (engineCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descItems, descArchiveTurns, descArchiveBytes, descArchiveFiles, descArchiveSeq,
		descArchiveCorrupt, descIndexLag, descVectors, descVectorLag, descJobLastRun, descJobLastSuccess, descJobLag,
		descJobFailures, descJobFailing, descJobRunning, descJobSkipped} {
		ch <- d
	}
}

// Collect implements prometheus.Collector. A read that fails drops its
// metrics from the scrape (an invalid metric the handler logs), not the
// others.
func (c engineCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), collectTimeout)
	defer cancel()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}

	if st, err := c.e.Stats(ctx); err != nil {
		ch <- prometheus.NewInvalidMetric(descItems, err)
	} else {
		for ns, layers := range st.Layers {
			for layer, n := range layers {
				gauge(descItems, float64(n), ns, layer)
			}
		}
		a := st.Archive
		gauge(descArchiveTurns, float64(a.Turns))
		gauge(descArchiveBytes, float64(a.Bytes))
		gauge(descArchiveFiles, float64(a.Files))
		gauge(descArchiveSeq, float64(a.LastSeq))
		gauge(descArchiveCorrupt, float64(a.Corrupt))
		gauge(descIndexLag, float64(a.IndexLag))
	}

	c.e.vec.mu.Lock()
	side := c.e.vec.side
	var model string
	var lag int64
	if side != nil {
		model, lag = side.model, side.vx.Lag()
	}
	c.e.vec.mu.Unlock()
	if side != nil {
		gauge(descVectorLag, float64(lag), model)
		// A re-embed may swap and close the side meanwhile: its count then
		// fails, and the next scrape reads the new one.
		if n, err := side.store.Count(ctx); err != nil {
			ch <- prometheus.NewInvalidMetric(descVectors, err)
		} else {
			gauge(descVectors, float64(n), model)
		}
	}

	if c.e.sched == nil {
		return
	}
	for _, j := range c.e.Jobs(ctx) {
		if !j.LastRun.IsZero() {
			gauge(descJobLastRun, unixSeconds(j.LastRun), j.Name)
		}
		if !j.LastSuccess.IsZero() {
			gauge(descJobLastSuccess, unixSeconds(j.LastSuccess), j.Name)
		}
		gauge(descJobLag, j.LagSeconds, j.Name)
		gauge(descJobFailures, float64(j.Failures), j.Name)
		gauge(descJobFailing, b2f(j.Failing), j.Name)
		gauge(descJobRunning, b2f(j.Running), j.Name)
		gauge(descJobSkipped, float64(j.Skipped), j.Name)
	}
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
