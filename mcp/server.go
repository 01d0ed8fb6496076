package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/lockedio"
)

// Name is the implementation name the server reports to clients.
const Name = "engram"

// instructions tell the client's model when to use the tools.
const instructions = `engram is long-term memory. Call recall before answering anything that may depend on earlier ` +
	`conversations (names, preferences, decisions, plans, what happened when); cite the sources it returns. ` +
	`Call remember to store what should outlive this conversation. Use kg or timeline for what is known about one ` +
	`person or thing and how it changed, memories to browse extracted facts and decisions, status when results look stale.`

// Server is engram's MCP server. Set the services, then call ServeStdio or
// Handler; Layers may stay nil, in which case kg, timeline and memories
// report that the layers are not available.
type Server struct {
	Ingest engram.IngestService
	Recall engram.RecallService
	Status engram.StatusService
	Layers engram.LayerService
	// Forget, if set, serves the forget tool (which fails unsupported
	// otherwise).
	Forget engram.ForgetService
	// Correct, if set, serves the correct tool.
	Correct engram.CorrectService
	// Redact, if set, serves the redact tool.
	Redact engram.RedactService
	// Docs, if set, serves the doc_graph tool.
	Docs DocGraphService

	// Version is reported to clients in the initialize handshake.
	Version string
	// Limits bound what remember accepts (zero: the defaults).
	Limits engram.Limits
	// Now is the server's clock: for turns remembered without a timestamp,
	// and for how long an HTTP session has been idle.
	Now func() time.Time
	// SessionIdle closes an HTTP session (Handler) that long without a
	// request; MaxSessions caps the open ones, a new session beyond it
	// closing the one idle longest. Zero: DefaultSessionIdle,
	// DefaultMaxSessions.
	SessionIdle time.Duration
	MaxSessions int
	// Logger receives internal errors, which clients see only as
	// "internal error".
	Logger *slog.Logger
	// HostChecked says that whoever mounts Handler checks the Host and
	// Origin of every request (the HTTP API's guard does, honouring
	// allowed_hosts), so the SDK's own DNS-rebinding check, which allows
	// only localhost names, is off.
	HostChecked bool

	once sync.Once
	srv  *sdk.Server
	err  error
}

// NewServer returns a server over the given services; all three are
// required.
func NewServer(ingest engram.IngestService, recall engram.RecallService, status engram.StatusService) *Server {
	return &Server{Ingest: ingest, Recall: recall, Status: status, Now: time.Now, Logger: slog.Default()}
}

// Services is everything the tools can be served by: a home's engine, or a
// client of the server that owns the home.
type Services interface {
	engram.IngestService
	engram.RecallService
	engram.StatusService
	engram.LayerService
	engram.ForgetService
	engram.CorrectService
	engram.RedactService
	DocGraphService
}

// NewServerFor returns a server whose every tool is served by svc.
func NewServerFor(svc Services) *Server {
	s := NewServer(svc, svc, svc)
	s.Layers, s.Forget, s.Correct, s.Redact, s.Docs = svc, svc, svc, svc, svc
	return s
}

// MCP returns the SDK server with engram's tools, built on first use. The
// services must be set by then.
func (s *Server) MCP() (*sdk.Server, error) {
	s.once.Do(func() {
		if s.Ingest == nil || s.Recall == nil || s.Status == nil {
			s.err = errors.New("mcp: Ingest, Recall and Status services must be set")
			return
		}
		if s.Now == nil {
			s.Now = time.Now
		}
		if s.Logger == nil {
			s.Logger = slog.Default()
		}
		version := s.Version
		if version == "" {
			version = "dev"
		}
		srv := sdk.NewServer(&sdk.Implementation{Name: Name, Title: "engram memory", Version: version},
			&sdk.ServerOptions{Instructions: instructions})
		s.err = s.addTools(srv)
		s.srv = srv
	})
	return s.srv, s.err
}

// ServeStdio serves one client over standard input and output until the
// client closes stdin or ctx ends.
func (s *Server) ServeStdio(ctx context.Context) error {
	return s.ServeIO(ctx, os.Stdin, os.Stdout)
}

// ServeIO serves one client over in and out (`engram mcp`: its stdin and
// stdout) until in ends or ctx does. A line of in that is no JSON-RPC
// message is answered with a JSON-RPC error and skipped (lineFilter). It
// never closes out, so that what the process writes after stays possible;
// a file in is closed when ctx ends, which is what unblocks the read then.
func (s *Server) ServeIO(ctx context.Context, in io.Reader, out io.Writer) error {
	rc, ok := in.(io.ReadCloser)
	if !ok {
		rc = io.NopCloser(in)
	}
	w := &lockedWriter{lockedio.New(out)}
	return s.Serve(ctx, &sdk.IOTransport{Reader: newLineFilter(rc, w, 0), Writer: w})
}

// Serve serves one client over t until it disconnects or ctx ends.
func (s *Server) Serve(ctx context.Context, t sdk.Transport) error {
	srv, err := s.MCP()
	if err != nil {
		return err
	}
	err = srv.Run(ctx, t)
	if ctx.Err() != nil {
		return nil // asked to stop: not a failure
	}
	return err
}

// Handler returns the streamable HTTP transport of the server, for /mcp.
// It authenticates nobody: mount it behind the HTTP API's token check and
// guard. Its sessions are bounded by SessionIdle and MaxSessions.
func (s *Server) Handler() (http.Handler, error) {
	srv, err := s.MCP()
	if err != nil {
		return nil, err
	}
	idle := s.SessionIdle
	if idle <= 0 {
		idle = DefaultSessionIdle
	}
	max := s.MaxSessions
	if max <= 0 {
		max = DefaultMaxSessions
	}
	// The SDK's own timer closes an idle session too, so that one is
	// closed even when no further request comes to find it expired.
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv },
		&sdk.StreamableHTTPOptions{Logger: s.Logger.With("component", "mcp-http"), DisableLocalhostProtection: s.HostChecked,
			SessionTimeout: idle})
	return newSessions(h, idle, max, s.Now), nil
}

// toolError is what a client sees of err: the field at fault and the
// message of an application error, "internal error" for anything else
// (logged here in full).
func (s *Server) toolError(tool string, err error) error {
	code := engram.ErrorCode(err)
	if code == engram.EINTERNAL {
		s.Logger.Error("mcp tool failed", "tool", tool, "err", err)
		return errors.New("internal error")
	}
	msg := engram.ErrorMessage(err)
	if f := engram.ErrorField(err); f != "" {
		msg = f + ": " + msg
	}
	return fmt.Errorf("%s (%s)", msg, code)
}

// guard wraps a typed tool handler: an error becomes a tool error (IsError
// with the message) and a panic an internal error, never a crash of the
// server.
func guard[In, Out any](s *Server, tool string, h func(context.Context, In) (Out, error)) sdk.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, _ *sdk.CallToolRequest, in In) (res *sdk.CallToolResult, out Out, err error) {
		defer func() {
			if r := recover(); r != nil {
				var zero Out
				res, out, err = nil, zero, s.toolError(tool, fmt.Errorf("panic: %v", r))
			}
		}()
		out, err = h(ctx, in)
		if err != nil {
			var zero Out
			return nil, zero, s.toolError(tool, err)
		}
		return nil, out, nil
	}
}
