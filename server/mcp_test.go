package server_test

import (
	"io"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engram-dev/engram/server"
)

// TestServeMCPIO: the MCP tools on a pair of streams, as `engram mcp`
// serves them on stdio, reach the home opened here, or the running server
// when one answers; the serving ends cleanly when the client closes.
func TestServeMCPIO(t *testing.T) {
	ctx := t.Context()
	for _, served := range []bool{false, true} {
		cfg := servedOrNot(t, served, nil)
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		done := make(chan error, 1)
		go func() {
			done <- server.ServeMCPIO(ctx, cfg, quiet(), inR, outW)
			outW.Close()
		}()
		client := sdk.NewClient(&sdk.Implementation{Name: "engram-test", Version: "v0"}, nil)
		cs, err := client.Connect(ctx, &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "recall", Arguments: map[string]any{"query": "which database did we choose"}})
		if err != nil || res.IsError || len(res.Content) == 0 {
			t.Fatalf("served %v: recall: %+v, %v", served, res, err)
		}
		if text := res.Content[0].(*sdk.TextContent).Text; !strings.Contains(text, "PostgreSQL") {
			t.Errorf("served %v: recall found no PostgreSQL:\n%s", served, text)
		}
		if err := cs.Close(); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Errorf("served %v: ServeMCPIO: %v", served, err)
		}
	}
}
