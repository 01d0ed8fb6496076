package httpapi

import (
	"context"
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

// noReindex is the error of the reindex routes without a ReindexService.
const noReindex = "reindexing is not available on this server"

// postReindex starts a reindex of the vectors, {"reembed": true} to embed
// everything again, and answers 202 at once; GET /v1/reindex reports it.
func (s *Server) postReindex(c echo.Context) error {
	return serve(c, http.StatusAccepted, s.Reindex, noReindex, fromBody(s, func(body []byte) (engram.ReindexRequest, error) {
		var req engram.ReindexRequest
		err := decodeBody(body, bodyShape{like: `{"reembed": false}`, optional: true, fields: []field{
			{"reembed", &req.Reembed, "true or false"},
		}})
		return req, err
	}), engram.ReindexService.StartReindex)
}

// getReindex reports the running or last reindex.
func (s *Server) getReindex(c echo.Context) error {
	return serve(c, http.StatusOK, s.Reindex, noReindex, noQuery,
		func(r engram.ReindexService, ctx context.Context, _ struct{}) (engram.ReindexStatus, error) {
			return r.ReindexStatus(ctx)
		})
}
