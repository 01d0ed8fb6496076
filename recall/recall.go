package recall

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/engram-dev/engram"
)

// AllNamespaces, given as a request's namespace, searches every namespace.
const AllNamespaces = "*"

// DefaultSyncWait bounds how long a recall waits for the index to catch up
// with the archive before it answers from what is indexed, with a warning.
const DefaultSyncWait = 500 * time.Millisecond

// Service runs recall requests.
type Service struct {
	index engram.TurnIndex

	// Sync, if set, waits until the index holds every archived turn; recall
	// calls it (bounded by SyncWait) so a client reads its own writes.
	Sync     func(ctx context.Context) error
	SyncWait time.Duration
	// Now is the clock, for took_ms.
	Now func() time.Time
}

var _ engram.RecallService = (*Service)(nil)

// NewService returns a recall service over idx.
func NewService(idx engram.TurnIndex) *Service {
	return &Service{index: idx, SyncWait: DefaultSyncWait, Now: time.Now}
}

// Validate checks a request and fills in its defaults. Errors are EINVALID
// (ETOOLARGE for an overlong query) and name the field.
func Validate(req engram.RecallRequest) (engram.RecallRequest, error) {
	if req.Namespace == "" {
		req.Namespace = engram.DefaultNamespace
	}
	if !utf8.ValidString(req.Query) {
		return req, engram.FieldError("query", "query is not valid UTF-8")
	}
	if strings.TrimSpace(req.Query) == "" {
		return req, engram.FieldError("query", "query is required and must not be blank")
	}
	if len(req.Query) > engram.MaxQueryBytes {
		return req, &engram.Error{Code: engram.ETOOLARGE, Field: "query",
			Message: fmt.Sprintf("query is %d bytes, over the limit of %d", len(req.Query), engram.MaxQueryBytes)}
	}
	switch {
	case req.K == 0:
		req.K = engram.DefaultK
	case req.K < 0 || req.K > engram.MaxK:
		return req, engram.FieldError("k", "k must be between 1 and %d, got %d", engram.MaxK, req.K)
	}
	switch req.Mode {
	case "":
		req.Mode = engram.ModeAuto
	case engram.ModeAuto, engram.ModeKeyword:
	default:
		return req, engram.FieldError("mode", "unknown mode %q (available: %s, %s)", req.Mode, engram.ModeAuto, engram.ModeKeyword)
	}
	return req, nil
}

// Recall validates req and answers it.
func (s *Service) Recall(ctx context.Context, req engram.RecallRequest) (engram.RecallResponse, error) {
	start := s.Now()
	req, err := Validate(req)
	if err != nil {
		return engram.RecallResponse{}, err
	}
	var resp engram.RecallResponse
	if s.Sync != nil {
		sctx, cancel := context.WithTimeout(ctx, s.SyncWait)
		err := s.Sync(sctx)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return engram.RecallResponse{}, ctx.Err()
			}
			resp.Warnings = append(resp.Warnings, "the index is behind the archive: the newest turns may be missing from these results")
		}
	}
	ns := req.Namespace
	if ns == AllNamespaces {
		ns = ""
	}
	// Only keyword search exists so far, so auto runs it.
	resp.Mode = engram.ModeKeyword
	hits, err := s.index.SearchTurns(ctx, engram.TextQuery{Namespace: ns, Text: req.Query, Limit: req.K})
	if err != nil {
		return engram.RecallResponse{}, fmt.Errorf("keyword search: %w", err)
	}
	resp.Results = make([]engram.Result, 0, len(hits))
	for _, h := range hits {
		resp.Results = append(resp.Results, engram.TurnResult(h.Turn, h.Score))
	}
	resp.TookMS = float64(s.Now().Sub(start).Microseconds()) / 1000
	return resp, nil
}
