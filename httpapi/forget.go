package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/engram-dev/engram"
)

// noForget is the error of the forget routes without a ForgetService.
const noForget = "forgetting turns is not available on this server"

// deleteTurn answers DELETE /v1/turns/{id}?reason=...&dry_run=true: the
// turn is forgotten (see engram.ForgetService).
func (s *Server) deleteTurn(c echo.Context) error {
	return serve(c, http.StatusOK, s.Forget, noForget, fromQuery(s, func(p *params) (engram.ForgetRequest, error) {
		return engram.ForgetRequest{IDs: []string{c.Param("id")}, Reason: p.v.Get("reason"), DryRun: p.bool("dry_run")}, nil
	}), s.forget)
}

// deleteTurns answers DELETE /v1/turns?namespace=N[&session=S]: every turn
// of the session, or of the namespace, is forgotten. namespace is required
// without a session, so that no request forgets "default" by omission.
func (s *Server) deleteTurns(c echo.Context) error {
	return serve(c, http.StatusOK, s.Forget, noForget, fromQuery(s, func(p *params) (engram.ForgetRequest, error) {
		req := engram.ForgetRequest{Namespace: p.name("namespace"), Session: p.name("session"),
			Reason: p.v.Get("reason"), DryRun: p.bool("dry_run")}
		if req.Namespace == "" && req.Session == "" {
			return req, engram.FieldError("namespace", "name what to forget: namespace, or session (of namespace, default \"default\"); one turn is DELETE /v1/turns/{id}")
		}
		return req, nil
	}), s.forget)
}

// postForget answers POST /v1/forget {"ids":[...]} or {"session","namespace"}
// or {"namespace"}, with "reason" and "dry_run".
func (s *Server) postForget(c echo.Context) error {
	return serve(c, http.StatusOK, s.Forget, noForget, fromBody(s, func(body []byte) (engram.ForgetRequest, error) {
		var req engram.ForgetRequest
		err := decodeBody(body, bodyShape{like: `{"ids": ["01KB..."], "reason": "asked to"}`, fields: []field{
			{"ids", &req.IDs, "an array of strings"},
			{"session", &req.Session, "a string"},
			{"namespace", &req.Namespace, "a string"},
			{"reason", &req.Reason, "a string"},
			{"dry_run", &req.DryRun, "true or false"},
		}})
		return req, err
	}), s.forget)
}

// forget checks req, then forgets through fs (the shape of a method
// expression, as serve calls it).
func (s *Server) forget(fs engram.ForgetService, ctx context.Context, req engram.ForgetRequest) (engram.ForgetReport, error) {
	if err := req.Validate(); err != nil {
		return engram.ForgetReport{}, err
	}
	for i, id := range req.IDs {
		if len(id) > s.cfg.Limits.MaxFieldBytes {
			return engram.ForgetReport{}, &engram.Error{Code: engram.ETOOLARGE, Field: "ids[" + strconv.Itoa(i) + "]",
				Message: fmt.Sprintf("%d bytes, over the limit of %d", len(id), s.cfg.Limits.MaxFieldBytes)}
		}
	}
	return fs.Forget(ctx, req)
}

// Forget forgets turns through the server (POST /v1/forget).
func (c *Client) Forget(ctx context.Context, req engram.ForgetRequest) (engram.ForgetReport, error) {
	return call[engram.ForgetReport](ctx, c, http.MethodPost, "/v1/forget", req)
}
