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
	return serve(c, http.StatusOK, s.Redact, "redacting turns is not available on this server",
		fromBody(s, decodeRedact), engram.RedactService.Redact)
}

func decodeRedact(body []byte) (engram.RedactRequest, error) {
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
		return req, err
	}
	return req, req.Validate()
}

// Redact replaces spans of turns through the server (POST /v1/redact).
func (c *Client) Redact(ctx context.Context, req engram.RedactRequest) (engram.RedactReport, error) {
	return call[engram.RedactReport](ctx, c, http.MethodPost, "/v1/redact", req)
}
