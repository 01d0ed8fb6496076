package engram

import (
	"context"
	"time"
)

// The states of a reindex.
const (
	ReindexRunning = "running"
	ReindexDone    = "done"
	ReindexFailed  = "failed"
)

// ReindexRequest is the body of POST /v1/reindex.
type ReindexRequest struct {
	// Reembed embeds every turn (and memory, scene, fact and vault chunk)
	// again with the active model, instead of only what lacks a vector.
	Reembed bool `json:"reembed"`
}

// ReindexStatus reports a rebuild of the vector index of the active model.
type ReindexStatus struct {
	Model    string    `json:"model"`
	Backend  string    `json:"backend"` // "embedded" or "chroma"
	Reembed  bool      `json:"reembed"`
	State    string    `json:"state"` // ReindexRunning, ReindexDone or ReindexFailed
	Phase    string    `json:"phase"` // what it is doing now: check, embed, layers, load, push
	Done     int64     `json:"done"`  // progress of the phase
	Total    int64     `json:"total"`
	Dropped  int       `json:"dropped"`  // unusable vectors deleted
	Embedded int64     `json:"embedded"` // texts embedded (again)
	Indexed  int64     `json:"indexed"`  // vectors loaded into memory or pushed to Chroma
	Error    string    `json:"error,omitempty"`
	Started  time.Time `json:"started"`
	Ended    time.Time `json:"ended,omitzero"`
}

// ReindexService rebuilds the vector index in the background.
type ReindexService interface {
	// StartReindex starts a reindex and returns at once. ECONFLICT if a
	// reindex or a re-embed is running; EINVALID when the embedder is none.
	StartReindex(ctx context.Context, req ReindexRequest) (ReindexStatus, error)
	// ReindexStatus returns the running or last reindex; ENOTFOUND if none
	// ran since the server started.
	ReindexStatus(ctx context.Context) (ReindexStatus, error)
}
