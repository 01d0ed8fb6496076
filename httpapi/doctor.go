package httpapi

import (
	"net/http"

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
	if err := decodeBody(body, bodyShape{like: `{"reembed": false}`, optional: true, fields: []field{
		{"reembed", &req.Reembed, "true or false"},
	}}); err != nil {
		return err
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
