package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/engram-dev/engram"
)

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
	var req engram.ReindexRequest
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
