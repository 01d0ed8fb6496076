// Package mcp serves engram over the Model Context Protocol, so that an
// agent (Claude Code, Claude Desktop, any MCP client) can remember and
// recall through tools instead of the HTTP API.
//
// A Server is built from the root services (engram.IngestService,
// engram.RecallService, engram.LayerService, engram.StatusService), which
// may be an engine opened in this process or a client of a running `engram
// serve`; it serves one client over stdio (ServeIO, for `engram mcp`)
// or any number over the streamable HTTP transport (Handler, mounted at
// /mcp by `engram serve`).
//
// The tools are remember, recall, kg, timeline, memories and status. Each
// has an input and an output JSON schema inferred from the typed structs in
// tools.go, whose jsonschema tags are the descriptions a model reads.
//
// # Caveats
//
// Every failure of a tool, a bad argument included, comes back as a tool
// result with IsError set and a message naming the field at fault, never as
// a protocol error, so that the model can correct itself. Internal errors
// are logged and reported as "internal error" only, as in the HTTP API.
//
// The HTTP transport keeps its sessions in memory: a restart of the server
// ends them, and clients start a new one.
package mcp
