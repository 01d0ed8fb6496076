package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/engram-dev/engram"
)

// turnsResponse is the 201 body of POST /v1/turns.
type turnsResponse struct {
	IDs      []string          `json:"ids"`
	Turns    []engram.Appended `json:"turns"`
	Warnings []string          `json:"warnings,omitempty"`
}

// postTurns archives one turn or a batch. A batch with one bad turn writes
// nothing and the error names the turn and field.
func (s *Server) postTurns(c echo.Context) error {
	body, err := s.readBody(c)
	if err != nil {
		return err
	}
	ins, prefixes, err := engram.DecodeTurnInputs(body)
	if err != nil {
		return err
	}
	if len(ins) > s.cfg.Limits.MaxBatch {
		return &engram.Error{Code: engram.ETOOLARGE, Field: "turns",
			Message: fmt.Sprintf("%d turns in one request, over the limit of %d", len(ins), s.cfg.Limits.MaxBatch)}
	}
	now := s.Now()
	turns := make([]engram.Turn, len(ins))
	for i, in := range ins {
		if turns[i], err = in.Turn(prefixes[i], now, s.cfg.Limits); err != nil {
			return err
		}
	}
	ctx := c.Request().Context()
	switch w := c.QueryParam("wait"); w {
	case "", "index":
	case "archive":
		ctx = engram.IngestNoIndexWait(ctx)
	default:
		return engram.FieldError("wait", "wait %q is neither index (the default: answer once the turns are searchable) nor archive (once they are archived)", w)
	}
	res, err := s.Ingest.Ingest(ctx, turns)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, turnsResponse{IDs: res.IDs(), Turns: res.Turns, Warnings: res.Warnings})
}

func (s *Server) postRecall(c echo.Context) error {
	return answer(c, http.StatusOK, fromBody(s, decodeRecall), s.Recall.Recall)
}

func decodeRecall(body []byte) (engram.RecallRequest, error) {
	var req engram.RecallRequest
	var asOf string
	// An absent k is the default; a k given must be 1 to MaxK, so 0 is
	// refused here (the service reads a zero K as "the default").
	var k *int
	err := decodeBody(body, bodyShape{like: `{"query": "..."}`, fields: []field{
		{"namespace", &req.Namespace, "a string"},
		{"query", &req.Query, "a string"},
		{"k", &k, "an integer"},
		{"mode", &req.Mode, "a string"},
		{"as_of", &asOf, "a string"},
		{"budget_tokens", &req.BudgetTokens, "an integer"},
		{"kinds", &req.Kinds, "an array of strings"},
	}})
	if err != nil {
		return req, err
	}
	if k != nil {
		if *k == 0 {
			return req, engram.FieldError("k", "k must be between 1 and %d, got 0 (leave it out for the default, %d)", engram.MaxK, engram.DefaultK)
		}
		req.K = *k
	}
	if asOf != "" {
		t, err := time.Parse(time.RFC3339Nano, asOf)
		if err != nil {
			return req, engram.FieldError("as_of", "timestamp %q is not RFC 3339 (for example 2026-05-01T14:03:00Z)", asOf)
		}
		if !engram.InTimeRange(t) {
			return req, engram.OutOfRange("as_of", "as_of")
		}
		req.AsOf = t.UTC()
	}
	return req, nil
}

func (s *Server) getHealth(c echo.Context) error {
	// Always 200 while the process serves: a degraded status (an index
	// lagging, say) is reported in the body, since the API still works.
	h := s.Status.Health(c.Request().Context())
	if !s.authorized(c.Request()) {
		// A probe without the token learns whether engram is up and
		// behind, not why: the problems and the vector side's state can
		// name turn ids, models and upstream URLs.
		h.Problems, h.Vectors = nil, nil
	}
	return c.JSON(http.StatusOK, h)
}

func (s *Server) getStats(c echo.Context) error {
	st, err := s.Status.Stats(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, st)
}

// readBody reads the request body up to the configured limit.
func (s *Server) readBody(c echo.Context) ([]byte, error) {
	r := c.Request()
	r.Body = http.MaxBytesReader(c.Response(), r.Body, s.cfg.MaxBodyBytes)
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, &engram.Error{Code: engram.ETOOLARGE, Field: "body",
				Message: fmt.Sprintf("request body is over the limit of %d bytes", s.cfg.MaxBodyBytes)}
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			c.Response().Header().Set("Connection", "close")
			return nil, &engram.Error{Code: engram.ETIMEOUT, Field: "body",
				Message: fmt.Sprintf("the request body did not arrive within %s", s.cfg.ReadTimeout)}
		}
		return nil, engram.FieldError("body", "reading the request body failed: %v", err)
	}
	return body, nil
}

// postReembed starts a re-embed into {"model": "..."} ("" = the configured
// model) and answers 202 at once; /v1/health reports its progress.
func (s *Server) postReembed(c echo.Context) error {
	return serve(c, http.StatusAccepted, s.Reembed, "re-embedding is not available on this server", fromBody(s, func(body []byte) (string, error) {
		var model string
		err := decodeBody(body, bodyShape{like: `{"model": "ollama:bge-m3"}`, optional: true, fields: []field{
			{"model", &model, "a string"},
		}})
		return model, err
	}), engram.ReembedService.StartReembed)
}

// noJobs is the error of the job routes without a JobService.
const noJobs = "scheduled jobs are not available on this server"

// getJobs lists the scheduled jobs with their last run, last success, next
// run, lag and last error.
func (s *Server) getJobs(c echo.Context) error {
	return serve(c, http.StatusOK, s.Jobs, noJobs, noQuery, func(js engram.JobService, ctx context.Context, _ struct{}) (map[string]any, error) {
		return map[string]any{"jobs": js.Jobs(ctx)}, nil
	})
}

// postJobRun runs one job now and answers with its status after the run.
func (s *Server) postJobRun(c echo.Context) error {
	return serve(c, http.StatusOK, s.Jobs, noJobs, func(c echo.Context) (string, error) { return c.Param("name"), nil },
		engram.JobService.RunJob)
}
