package main

import (
	"context"

	"github.com/engram-dev/engram/server"
)

// runMCP serves the MCP tools over stdio: through the HTTP API of the home's
// running server when there is one (it holds the home's lock), else on the
// home opened in this process. It returns when the client closes stdin or
// on a signal.
func runMCP(ctx context.Context, m *Main, args []string) error {
	fs := m.newFlagSet("mcp", "mcp\n\nServes the Model Context Protocol on stdin and stdout, for an agent such as Claude Code:\n  claude mcp add engram -- engram mcp\nWhile `engram serve` runs on the same home, the tools go through its HTTP API.")
	cfg, err := m.parseConfig(fs, args)
	if err != nil {
		return err
	}
	return server.ServeMCPIO(ctx, cfg, m.logger(cfg), m.Stdin, m.Stdout)
}
