// Package httpapi serves engram's HTTP API with github.com/labstack/echo/v4.
//
// It owns transport concerns only: routing, body limits, bearer-token auth,
// strict request decoding with errors that name the field, and the single
// place where engram error codes become HTTP statuses (errorHandler). The work
// itself is done by the services it is given (engram.IngestService,
// engram.RecallService, engram.StatusService), so the same services back the
// CLI.
//
// Routes:
//
//	POST /v1/turns    one turn, or {"turns": [...]}; 201 after the archive fsync
//	POST /v1/recall   {"namespace", "query", "k", "mode"}
//	GET  /v1/health   no token needed
//	GET  /v1/stats    counts per namespace and layer
//	POST /v1/reembed  {"model"}: embed every turn with another model, then switch
//	GET  /v1/jobs     the scheduled jobs and their state
//	POST /v1/jobs/{name}/run  run one job now
package httpapi
