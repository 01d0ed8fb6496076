package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/engram-dev/engram"
)

func (s *Server) forgetter() (engram.ForgetService, error) {
	if s.Forget == nil {
		return nil, engram.Errorf(engram.EUNSUPPORTED, "forgetting turns is not available on this server")
	}
	return s.Forget, nil
}

// deleteTurn answers DELETE /v1/turns/{id}?reason=...&dry_run=true: the
// turn is forgotten (see engram.ForgetService).
func (s *Server) deleteTurn(c echo.Context) error {
	fs, err := s.forgetter()
	if err != nil {
		return err
	}
	p, err := s.queryParams(c, "reason", "dry_run")
	if err != nil {
		return err
	}
	req := engram.ForgetRequest{IDs: []string{c.Param("id")}, Reason: p.v.Get("reason"), DryRun: p.bool("dry_run")}
	if p.err != nil {
		return p.err
	}
	return s.forget(c, fs, req)
}

// deleteTurns answers DELETE /v1/turns?namespace=N[&session=S]: every turn
// of the session, or of the namespace, is forgotten. namespace is required
// without a session, so that no request forgets "default" by omission.
func (s *Server) deleteTurns(c echo.Context) error {
	fs, err := s.forgetter()
	if err != nil {
		return err
	}
	p, err := s.queryParams(c, "namespace", "session", "reason", "dry_run")
	if err != nil {
		return err
	}
	req := engram.ForgetRequest{Namespace: p.name("namespace"), Session: p.name("session"),
		Reason: p.v.Get("reason"), DryRun: p.bool("dry_run")}
	if p.err != nil {
		return p.err
	}
	if req.Namespace == "" && req.Session == "" {
		return engram.FieldError("namespace", "name what to forget: namespace, or session (of namespace, default \"default\"); one turn is DELETE /v1/turns/{id}")
	}
	return s.forget(c, fs, req)
}

// postForget answers POST /v1/forget {"ids":[...]} or {"session","namespace"}
// or {"namespace"}, with "reason" and "dry_run".
func (s *Server) postForget(c echo.Context) error {
	fs, err := s.forgetter()
	if err != nil {
		return err
	}
	body, err := s.readBody(c)
	if err != nil {
		return err
	}
	var req engram.ForgetRequest
	if err := decodeBody(body, bodyShape{like: `{"ids": ["01KB..."], "reason": "asked to"}`, fields: []field{
		{"ids", &req.IDs, "an array of strings"},
		{"session", &req.Session, "a string"},
		{"namespace", &req.Namespace, "a string"},
		{"reason", &req.Reason, "a string"},
		{"dry_run", &req.DryRun, "true or false"},
	}}); err != nil {
		return err
	}
	return s.forget(c, fs, req)
}

func (s *Server) forget(c echo.Context, fs engram.ForgetService, req engram.ForgetRequest) error {
	if err := req.Validate(); err != nil {
		return err
	}
	for i, id := range req.IDs {
		if len(id) > s.cfg.Limits.MaxFieldBytes {
			return &engram.Error{Code: engram.ETOOLARGE, Field: "ids[" + strconv.Itoa(i) + "]",
				Message: fmt.Sprintf("%d bytes, over the limit of %d", len(id), s.cfg.Limits.MaxFieldBytes)}
		}
	}
	rep, err := fs.Forget(c.Request().Context(), req)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, rep)
}

// Forget forgets turns through the server (POST /v1/forget).
func (c *Client) Forget(ctx context.Context, req engram.ForgetRequest) (engram.ForgetReport, error) {
	var rep engram.ForgetReport
	err := c.Do(ctx, http.MethodPost, "/v1/forget", req, &rep)
	return rep, err
}
