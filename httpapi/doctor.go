package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/engram-dev/engram"
)

// The statuses of a doctor check, from best to worst.
const (
	CheckOK   = "ok"
	CheckWarn = "warn"
	CheckFail = "fail"
)

// DoctorCheck is one finding of GET /v1/doctor and `engram doctor`.
type DoctorCheck struct {
	Name    string `json:"name"`   // what was checked: archive, sqlite, index, vectors, ...
	Status  string `json:"status"` // CheckOK, CheckWarn or CheckFail
	Finding string `json:"finding"`
	// Fix is the command that repairs a problem, "" when there is none to
	// run (or nothing to repair).
	Fix string `json:"fix,omitempty"`
}

// DoctorReport is the answer of GET /v1/doctor.
type DoctorReport struct {
	Status string        `json:"status"` // the worst status of the checks
	Checks []DoctorCheck `json:"checks"`
	TookMS float64       `json:"took_ms"`
}

// Add appends a check and keeps Status the worst one.
func (r *DoctorReport) Add(c DoctorCheck) {
	r.Checks = append(r.Checks, c)
	if rank(c.Status) > rank(r.Status) {
		r.Status = c.Status
	}
}

// Failed reports whether a check failed.
func (r DoctorReport) Failed() bool { return r.Status == CheckFail }

func rank(status string) int {
	switch status {
	case CheckOK:
		return 1
	case CheckWarn:
		return 2
	case CheckFail:
		return 3
	}
	return 0
}

// DoctorService checks a running engram's stores against each other and
// its dependencies. A problem is a finding in the report, never an error.
type DoctorService interface {
	Doctor(ctx context.Context) DoctorReport
}

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

// getDoctor runs every check and answers 200 with the report, whatever it
// found: the findings are the answer.
func (s *Server) getDoctor(c echo.Context) error {
	if s.Doctor == nil {
		return engram.Errorf(engram.EUNSUPPORTED, "doctor is not available on this server")
	}
	return c.JSON(http.StatusOK, s.Doctor.Doctor(c.Request().Context()))
}

// postReindex starts a reindex of the vectors, {"reembed": true} to embed
// everything again, and answers 202 at once; GET /v1/reindex reports it.
func (s *Server) postReindex(c echo.Context) error {
	if s.Reindex == nil {
		return engram.Errorf(engram.EUNSUPPORTED, "reindexing is not available on this server")
	}
	body, err := s.readBody(c)
	if err != nil {
		return err
	}
	var req ReindexRequest
	if len(bytes.TrimSpace(body)) > 0 {
		if !utf8.Valid(body) {
			return engram.FieldError("body", "request body is not valid UTF-8")
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(body, &obj); err != nil || obj == nil {
			return engram.FieldError("body", "must be a JSON object like {\"reembed\": false}")
		}
		for k, v := range obj {
			if k != "reembed" {
				return engram.FieldError(k, "unknown field %q (known: reembed)", k)
			}
			if err := json.Unmarshal(v, &req.Reembed); err != nil {
				return engram.FieldError("reembed", "must be true or false")
			}
		}
	}
	st, err := s.Reindex.StartReindex(c.Request().Context(), req)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, st)
}

// getReindex reports the running or last reindex.
func (s *Server) getReindex(c echo.Context) error {
	if s.Reindex == nil {
		return engram.Errorf(engram.EUNSUPPORTED, "reindexing is not available on this server")
	}
	st, err := s.Reindex.ReindexStatus(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, st)
}
