package engram

import (
	"context"
	"time"
)

// IngestResult is what an ingest reports: one entry per turn, in request
// order, and warnings when the turns are archived but not yet searchable.
type IngestResult struct {
	Turns    []Appended `json:"turns"`
	Warnings []string   `json:"warnings,omitempty"`
}

// IDs returns the ids of the turns, in request order.
func (r IngestResult) IDs() []string {
	ids := make([]string, len(r.Turns))
	for i, t := range r.Turns {
		ids[i] = t.ID
	}
	return ids
}

// IngestService archives turns durably.
type IngestService interface {
	// Ingest returns only after the turns are on stable storage, and, unless
	// ctx says otherwise (IngestNoIndexWait), once they are searchable or
	// a bounded wait for the index has passed. An error means no turn of
	// the call was acknowledged.
	Ingest(ctx context.Context, turns []Turn) (IngestResult, error)
}

// IngestNoIndexWait returns ctx marked so that an Ingest under it returns
// once the turns are archived (fsync'd), without waiting for them to be
// searchable: for bulk imports, which need not read each batch back. The
// index catches up behind them (engram_index_lag_turns, GET /v1/health);
// over HTTP it is POST /v1/turns?wait=archive.
func IngestNoIndexWait(ctx context.Context) context.Context {
	return context.WithValue(ctx, noIndexWaitKey{}, true)
}

// IngestWaitsForIndex reports whether an Ingest under ctx waits for the
// index (see IngestNoIndexWait).
func IngestWaitsForIndex(ctx context.Context) bool {
	no, _ := ctx.Value(noIndexWaitKey{}).(bool)
	return !no
}

type noIndexWaitKey struct{}

// RecallService answers recall requests.
type RecallService interface {
	Recall(ctx context.Context, req RecallRequest) (RecallResponse, error)
}

// Health is the state of a running engram, for /v1/health.
type Health struct {
	Status     string `json:"status"` // "ok" or "degraded"
	Version    string `json:"version"`
	ArchiveSeq int64  `json:"archive_seq"` // last archived turn
	IndexedSeq int64  `json:"indexed_seq"` // last turn searchable
	IndexLag   int64  `json:"index_lag"`   // archived turns not yet searchable
	// SkippedTurns counts archived turns the index passed over (an id it
	// holds under another seq, a time it cannot store); the doctor lists them.
	SkippedTurns int64 `json:"skipped_turns,omitempty"`
	// LayerLag says how far each derived layer that is behind lags its
	// source: l1-memories and l2-scenes in archived turns, l3-persona and
	// l4-graph in memory changes. Deep recall warns meanwhile.
	LayerLag map[string]int64 `json:"layer_lag,omitempty"`
	Vectors  *VectorHealth    `json:"vectors,omitempty"`
	// Indexes are the in-memory indexes a server loads in the background
	// after it starts, by name ("keywords-turns", "keywords-units",
	// "keywords-scenes", "keywords-memories", "vectors"). Recall answers
	// without one that is loading, and says so in its warnings.
	Indexes  map[string]IndexHealth `json:"indexes,omitempty"`
	Problems []string               `json:"problems,omitempty"`
}

// IndexHealth is the state of an in-memory index: "loading", "ready" or
// "failed" (recall goes on without it, and a problem says why), with the
// rows read and to read where the index counts them (the vectors).
type IndexHealth struct {
	State  string `json:"state"`
	Loaded int64  `json:"loaded,omitempty"`
	Total  int64  `json:"total,omitempty"`
}

// VectorHealth is the state of the vector side of recall.
type VectorHealth struct {
	Model       string `json:"model,omitempty"`   // the active model recall searches
	Backend     string `json:"backend,omitempty"` // "embedded" or "chroma"
	EmbeddedSeq int64  `json:"embedded_seq"`      // last turn with a vector
	Lag         int64  `json:"lag"`               // archived turns without a vector yet
	// ChromaLag (vector_index = "chroma") counts the vector changes the
	// Chroma collection has not received yet.
	ChromaLag int64          `json:"chroma_lag,omitempty"`
	Pending   string         `json:"reembed_pending,omitempty"`
	Reembed   *ReembedStatus `json:"reembed,omitempty"`
}

// Re-embed states.
const (
	ReembedRunning = "running"
	ReembedDone    = "done"
	ReembedFailed  = "failed"
)

// ReembedStatus reports a re-embed: every archived turn embedded with a new
// model into a new index, which replaces the old one atomically when
// complete. Until then recall uses the old index.
type ReembedStatus struct {
	Model   string    `json:"model"`
	State   string    `json:"state"`
	Done    int64     `json:"done"`  // turns embedded (by seq)
	Total   int64     `json:"total"` // turns to embed (the archive's last seq at the start)
	Error   string    `json:"error,omitempty"`
	Started time.Time `json:"started"`
}

// ReembedService starts re-embeds.
type ReembedService interface {
	// StartReembed starts embedding every turn with model in the
	// background and returns at once. ECONFLICT if one is running or the
	// model is already active; EINVALID for an unknown model.
	StartReembed(ctx context.Context, model string) (ReembedStatus, error)
}

// StatusService reports health and counts.
type StatusService interface {
	Health(ctx context.Context) Health
	Stats(ctx context.Context) (Stats, error)
}

// JobStatus is the state of a scheduled job, for /v1/jobs and `engram jobs
// status`.
type JobStatus struct {
	Name        string    `json:"name"`
	Interval    string    `json:"interval"`
	LastRun     time.Time `json:"last_run,omitzero"`
	LastSuccess time.Time `json:"last_success,omitzero"`
	NextRun     time.Time `json:"next_run,omitzero"`
	LagSeconds  float64   `json:"lag_seconds"` // how far past its interval the last success is
	Running     bool      `json:"running"`
	Failures    int       `json:"failures"` // consecutive
	LastError   string    `json:"last_error,omitempty"`
	Failing     bool      `json:"failing"`
	// Skipped counts the batches a layer worker gave up on (an LLM's output
	// unusable after its retries); LastSkip is the latest one's error.
	Skipped  int    `json:"skipped_batches,omitempty"`
	LastSkip string `json:"last_skip,omitempty"`
}

// JobService lists and runs the scheduled jobs.
type JobService interface {
	Jobs(ctx context.Context) []JobStatus
	// RunJob runs one job now and returns its status after the run; the
	// job's own failure is in the status, not the error. ENOTFOUND for an
	// unknown job, ECONFLICT if it is running.
	RunJob(ctx context.Context, name string) (JobStatus, error)
}

// IngestTally counts what became of the turns an importer sent to the
// archive: archived, or duplicates where the archive already held them.
type IngestTally struct{ Archived, Duplicates int }

// Send archives batch through svc and counts its turns. It returns svc's
// result, whose warnings are the caller's to report, and its error as is.
func (c *IngestTally) Send(ctx context.Context, svc IngestService, batch []Turn) (IngestResult, error) {
	res, err := svc.Ingest(ctx, batch)
	if err != nil {
		return res, err
	}
	for _, t := range res.Turns {
		if t.Duplicate {
			c.Duplicates++
		} else {
			c.Archived++
		}
	}
	return res, nil
}
