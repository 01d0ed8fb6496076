package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/engram-dev/engram"
)

// patchMemory answers PATCH /v1/memories/{id} {"wrong":true} or
// {"text":"..."} or {"restore":true}, with "reason".
func (s *Server) patchMemory(c echo.Context) error {
	return s.patchCorrection(c, engram.CorrectMemory, `{"text": "Ana lives in Porto", "reason": "she moved"}`)
}

// patchFact answers PATCH /v1/kg/facts/{id} {"wrong":true} or
// {"object":"..."} or {"restore":true}, with "reason".
func (s *Server) patchFact(c echo.Context) error {
	return s.patchCorrection(c, engram.CorrectFact, `{"object": "Porto", "reason": "she moved"}`)
}

func (s *Server) patchCorrection(c echo.Context, target, like string) error {
	return serve(c, http.StatusOK, s.Correct, "correcting memories is not available on this server", fromBody(s, func(body []byte) (engram.CorrectionRequest, error) {
		req := engram.CorrectionRequest{Target: target, ID: c.Param("id")}
		fields := []field{
			{"wrong", &req.Wrong, "true or false"},
			{"restore", &req.Restore, "true or false"},
			{"reason", &req.Reason, "a string"},
		}
		if target == engram.CorrectMemory {
			fields = append(fields, field{"text", &req.Text, "a string"})
		} else {
			fields = append(fields, field{"object", &req.Object, "a string"})
		}
		if err := decodeBody(body, bodyShape{like: like, fields: fields}); err != nil {
			return req, err
		}
		if len(req.ID) > s.cfg.Limits.MaxFieldBytes {
			return req, &engram.Error{Code: engram.ETOOLARGE, Field: "id",
				Message: fmt.Sprintf("%d bytes, over the limit of %d", len(req.ID), s.cfg.Limits.MaxFieldBytes)}
		}
		return req, req.Validate()
	}), engram.CorrectService.Correct)
}

// Correct corrects a memory or a graph fact through the server (PATCH
// /v1/memories/{id}, PATCH /v1/kg/facts/{id}).
func (c *Client) Correct(ctx context.Context, req engram.CorrectionRequest) (engram.Correction, error) {
	if err := req.Validate(); err != nil {
		return engram.Correction{}, err
	}
	path := "/v1/memories/" + url.PathEscape(req.ID)
	body := map[string]any{}
	if req.Target == engram.CorrectFact {
		path = "/v1/kg/facts/" + url.PathEscape(req.ID)
		if req.Object != "" {
			body["object"] = req.Object
		}
	} else if req.Text != "" {
		body["text"] = req.Text
	}
	if req.Wrong {
		body["wrong"] = true
	}
	if req.Restore {
		body["restore"] = true
	}
	if req.Reason != "" {
		body["reason"] = req.Reason
	}
	return call[engram.Correction](ctx, c, http.MethodPatch, path, body)
}
