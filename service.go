package engram

import "context"

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
	// Ingest returns only after the turns are on stable storage. An error
	// means no turn of the call was acknowledged.
	Ingest(ctx context.Context, turns []Turn) (IngestResult, error)
}

// RecallService answers recall requests.
type RecallService interface {
	Recall(ctx context.Context, req RecallRequest) (RecallResponse, error)
}

// Health is the state of a running engram, for /v1/health.
type Health struct {
	Status     string   `json:"status"` // "ok" or "degraded"
	Version    string   `json:"version"`
	ArchiveSeq int64    `json:"archive_seq"` // last archived turn
	IndexedSeq int64    `json:"indexed_seq"` // last turn searchable
	IndexLag   int64    `json:"index_lag"`   // archived turns not yet searchable
	Problems   []string `json:"problems,omitempty"`
}

// StatusService reports health and counts.
type StatusService interface {
	Health(ctx context.Context) Health
	Stats(ctx context.Context) (Stats, error)
}
