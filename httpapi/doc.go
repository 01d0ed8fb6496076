// Package httpapi serves engram's HTTP API with github.com/labstack/echo/v4.
//
// It owns transport concerns only: routing, body limits, bearer-token auth,
// strict request decoding with errors that name the field, and the single
// place where engram error codes become HTTP statuses (errorHandler). The work
// itself is done by the services it is given (the root package's
// interfaces, all of which package engine's Engine implements), so the same
// services back the CLI.
//
// Routes (docs/api.md has the bodies; GET /v1/openapi.json the schema):
//
//	POST /v1/turns            one turn, or {"turns": [...]}; 201 after the archive fsync
//	POST /v1/recall           {"namespace", "query", "k", "mode", "as_of", "budget_tokens", "kinds"}
//	GET  /v1/health           no token needed
//	GET  /v1/stats            counts per namespace and layer
//	POST /v1/reembed          {"model"}: embed every turn with another model, then switch
//	GET  /v1/jobs             the scheduled jobs and their state
//	POST /v1/jobs/{name}/run  run one job now
//	GET  /v1/memories         L1 memories: ?namespace, type, subject, q, superseded, from, to, limit
//	GET  /v1/scenes           L2 scenes: ?namespace, session, q, from, to, limit
//	GET  /v1/persona          L3 personas: ?namespace, speaker
//	GET  /v1/kg               L4 triples of an entity: ?entity, namespace, as_of, timeline, limit
//	GET  /v1/vaults           the configured vaults and their counts
//	POST /v1/vaults/sync      {"vault"}: sync one vault, or every vault
//	GET  /v1/graph            a vault document's links and backlinks: ?doc, vault, depth
//	GET  /v1/doctor           the doctor's checks
//	POST /v1/reindex          {"reembed"}: rebuild the vector index in the background
//	GET  /v1/reindex          the running or last reindex
//	POST /v1/backup           {"dir", "force"}: a consistent copy of the home on the server's machine
//	GET  /v1/openapi.json     the OpenAPI document of these routes
//	GET  /metrics             Prometheus metrics
//	     /mcp                 the MCP tools (streamable HTTP), when set
//
// Client is the other side: the CLI's path to a running server, and what
// `engram mcp` serves its tools through while one runs.
package httpapi
