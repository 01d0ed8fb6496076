package httpapi

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/engram-dev/engram"
)

// postRedact answers POST /v1/redact {"texts":[...],"ids":[...]} (or
// "session" and "namespace", or neither: every namespace), with "marker",
// "reason" and "dry_run".
func (s *Server) postRedact(c echo.Context) error {
	if s.Redact == nil {
		return engram.Errorf(engram.EUNSUPPORTED, "redacting turns is not available on this server")
	}
	body, err := s.readBody(c)
	if err != nil {
		return err
	}
	var req engram.RedactRequest
	if err := decodeBody(body, bodyShape{like: `{"texts": ["sk-..."], "ids": ["01KB..."], "marker": "[redacted]"}`, fields: []field{
		{"texts", &req.Texts, "an array of strings"},
		{"ids", &req.IDs, "an array of strings"},
		{"session", &req.Session, "a string"},
		{"namespace", &req.Namespace, "a string"},
		{"marker", &req.Marker, "a string"},
		{"reason", &req.Reason, "a string"},
		{"dry_run", &req.DryRun, "true or false"},
	}}); err != nil {
		return err
	}
	if err := req.Validate(); err != nil {
		return err
	}
	rep, err := s.Redact.Redact(c.Request().Context(), req)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, rep)
}

// Redact replaces spans of turns through the server (POST /v1/redact).
func (c *Client) Redact(ctx context.Context, req engram.RedactRequest) (engram.RedactReport, error) {
	var rep engram.RedactReport
	err := c.Do(ctx, http.MethodPost, "/v1/redact", req, &rep)
	return rep, err
}
