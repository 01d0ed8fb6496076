package httpapi

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/labstack/echo/v4"

	"github.com/engram-dev/engram"
)

// Defaults.
const (
	DefaultAddr         = "127.0.0.1:30001"
	DefaultMaxBodyBytes = 32 << 20
	// DefaultReadTimeout bounds reading a whole request, body included: a
	// client that sends headers and stalls in its body is answered 408 and
	// cut off instead of holding a connection and a goroutine for ever.
	// 32 MiB (the body limit) arrive within it at 2.2 Mbit/s.
	DefaultReadTimeout = 2 * time.Minute
	// DefaultReadHeaderTimeout bounds reading the headers.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultIdleTimeout closes a kept-alive connection idle that long.
	DefaultIdleTimeout = 2 * time.Minute
)

// Config is the server's configuration.
type Config struct {
	Addr         string
	Token        string // bearer token; required unless Addr is loopback
	MaxBodyBytes int64
	Limits       engram.Limits
	// AllowedHosts are the names (or IPs) a request's Host may give
	// besides the listen address, localhost and the loopback IPs; "*"
	// allows any. AllowedOrigins are the origins (scheme://host[:port])
	// whose pages may call the API besides the server's own.
	AllowedHosts, AllowedOrigins []string
	// ReadTimeout, ReadHeaderTimeout and IdleTimeout are the listening
	// server's (zero: the defaults). A handler runs on after ReadTimeout:
	// it bounds reading the request only.
	ReadTimeout, ReadHeaderTimeout, IdleTimeout time.Duration
}

// Server is engram's HTTP server.
type Server struct {
	cfg     Config
	echo    *echo.Echo
	ln      net.Listener
	logger  *slog.Logger
	done    chan error
	metrics *metrics

	// Ingest and Recall are wrapped by Open (and Handler) to record their
	// metrics, so calls through them from other transports count too.
	Ingest engram.IngestService
	Recall engram.RecallService
	Status engram.StatusService
	// Reembed, if set, serves POST /v1/reembed.
	Reembed engram.ReembedService
	// Jobs, if set, serves GET /v1/jobs and POST /v1/jobs/{name}/run.
	Jobs engram.JobService
	// Layers, if set, serves GET /v1/memories, /v1/scenes, /v1/persona and
	// /v1/kg (501 otherwise).
	Layers engram.LayerService
	// Vaults, if set, serves GET /v1/vaults and POST /v1/vaults/sync (501
	// otherwise).
	Vaults engram.VaultAdmin
	// VaultDocs, if set, serves GET /v1/graph and /v1/docs (501 otherwise).
	VaultDocs engram.VaultService
	// Browse, if set, serves GET /v1/turns and /v1/entities (501 otherwise).
	Browse engram.BrowseService
	// Doctor, if set, serves GET /v1/doctor (501 otherwise).
	Doctor engram.DoctorService
	// Reindex, if set, serves POST and GET /v1/reindex (501 otherwise).
	Reindex engram.ReindexService
	// Backup, if set, serves POST /v1/backup (501 otherwise).
	Backup engram.BackupService
	// Forget, if set, serves DELETE /v1/turns, DELETE /v1/turns/{id} and
	// POST /v1/forget (501 otherwise).
	Forget engram.ForgetService
	// Correct, if set, serves PATCH /v1/memories/{id} and PATCH
	// /v1/kg/facts/{id} (501 otherwise).
	Correct engram.CorrectService
	// Redact, if set, serves POST /v1/redact (501 otherwise).
	Redact engram.RedactService
	// MCP, if set, serves the Model Context Protocol (streamable HTTP) at
	// /mcp, behind the same token check as the API; the route exists only
	// when it is set.
	MCP     http.Handler
	mcpOnce sync.Once
	// UI, if set, serves the web view at /ui/ (and / redirects there). Its
	// files hold no data: they are served without the token.
	UI http.Handler
	// Now is the clock used for turns sent without a timestamp.
	Now func() time.Time
}

// New returns a server for cfg. Set the services, then call Open.
func New(cfg Config, logger *slog.Logger) (*Server, error) {
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	cfg.MaxBodyBytes = positiveOr(cfg.MaxBodyBytes, DefaultMaxBodyBytes)
	cfg.ReadTimeout = positiveOr(cfg.ReadTimeout, DefaultReadTimeout)
	cfg.ReadHeaderTimeout = positiveOr(cfg.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	cfg.IdleTimeout = positiveOr(cfg.IdleTimeout, DefaultIdleTimeout)
	cfg.Limits = cfg.Limits.WithDefaults()
	if logger == nil {
		logger = slog.Default()
	}
	loop, err := isLoopback(cfg.Addr)
	if err != nil {
		return nil, err
	}
	if !loop && cfg.Token == "" {
		return nil, engram.Errorf(engram.EINVALID,
			"listening on %s (not loopback) requires a token: set token in config.toml or ENGRAM_TOKEN", cfg.Addr)
	}
	if !loop {
		if err := CheckToken(cfg.Token); err != nil {
			return nil, engram.FieldError("token", "listening on %s (not loopback): %v", cfg.Addr, err)
		}
	}
	g, err := newGuard(cfg)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, logger: logger, Now: time.Now, metrics: newMetrics()}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.errorHandler
	e.Use(s.instrument, s.recoverer, g.middleware, s.authenticate, decodeParams, checkQuery)
	// Every GET route answers HEAD too (an uptime checker's probe): the
	// same handler, whose body net/http leaves out.
	get := func(path string, h echo.HandlerFunc) {
		e.GET(path, h)
		e.HEAD(path, h)
	}
	get(MetricsPath, s.metricsHandler())
	get(OpenAPIPath, s.getOpenAPI)
	e.POST("/v1/turns", s.postTurns)
	get("/v1/turns", s.getTurns)
	e.DELETE("/v1/turns", s.deleteTurns)
	e.DELETE("/v1/turns/:id", s.deleteTurn)
	e.POST("/v1/forget", s.postForget)
	e.POST("/v1/redact", s.postRedact)
	get("/v1/entities", s.getEntities)
	get("/v1/docs", s.getDocs)
	e.POST("/v1/recall", s.postRecall)
	get("/v1/health", s.getHealth)
	get("/v1/stats", s.getStats)
	e.POST("/v1/reembed", s.postReembed)
	get("/v1/jobs", s.getJobs)
	e.POST("/v1/jobs/:name/run", s.postJobRun)
	get("/v1/memories", s.getMemories)
	e.PATCH("/v1/memories/:id", s.patchMemory)
	e.PATCH("/v1/kg/facts/:id", s.patchFact)
	get("/v1/scenes", s.getScenes)
	get("/v1/persona", s.getPersona)
	get("/v1/kg", s.getGraph)
	get("/v1/vaults", s.getVaults)
	e.POST("/v1/vaults/sync", s.postVaultsSync)
	get("/v1/graph", s.getDocGraph)
	get("/v1/doctor", s.getDoctor)
	e.POST("/v1/reindex", s.postReindex)
	get("/v1/reindex", s.getReindex)
	e.POST("/v1/backup", s.postBackup)
	s.echo = e
	return s, nil
}

// Handler returns the server's http.Handler (for tests and embedding). Set
// the services first: like Open, it wraps Ingest and Recall to record their
// metrics.
func (s *Server) Handler() http.Handler {
	s.instrumentServices()
	s.mountMCP()
	return s.echo
}

// Open starts listening and serving in the background.
func (s *Server) Open() error {
	if s.Ingest == nil || s.Recall == nil || s.Status == nil {
		return errors.New("httpapi: Ingest, Recall and Status services must be set")
	}
	s.instrumentServices()
	s.mountMCP()
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return engram.Errorf(engram.EUNAVAILABLE, "listen on %s: %v", s.cfg.Addr, err)
	}
	s.ln = ln
	s.echo.Listener = ln
	s.done = make(chan error, 1)
	srv := s.echo.Server
	srv.ReadTimeout = s.cfg.ReadTimeout
	srv.ReadHeaderTimeout = s.cfg.ReadHeaderTimeout
	srv.IdleTimeout = s.cfg.IdleTimeout
	go func() { s.done <- s.echo.Server.Serve(ln) }()
	return nil
}

// Addr returns the address the server listens on (useful with port 0).
func (s *Server) Addr() string {
	if s.ln == nil {
		return s.cfg.Addr
	}
	return s.ln.Addr().String()
}

// Close stops accepting connections and waits for in-flight requests to
// finish (their writes are acknowledged only after the archive fsync), up to
// ctx's deadline.
func (s *Server) Close(ctx context.Context) error {
	if s.ln == nil {
		return nil
	}
	err := s.echo.Server.Shutdown(ctx)
	if serr := <-s.done; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

// mountMCP routes /mcp to the MCP handler, once, when one is set.
func (s *Server) mountMCP() {
	s.mcpOnce.Do(func() {
		if s.MCP != nil {
			s.echo.Any(MCPPath, echo.WrapHandler(s.MCP))
		}
		if s.UI != nil {
			ui := echo.WrapHandler(s.UI)
			s.echo.GET(UIPath+"*", ui)
			s.echo.HEAD(UIPath+"*", ui)
			toUI := func(c echo.Context) error { return c.Redirect(http.StatusFound, UIPath) }
			for _, p := range []string{strings.TrimSuffix(UIPath, "/"), "/"} {
				s.echo.GET(p, toUI)
				s.echo.HEAD(p, toUI)
			}
		}
	})
}

// UIPath is where the web view is mounted.
const UIPath = "/ui/"

// isUI reports whether path is the web view's (its files, its redirects).
func isUI(path string) bool {
	return path == "/" || path == strings.TrimSuffix(UIPath, "/") || strings.HasPrefix(path, UIPath)
}

// MCPPath is where the MCP handler is mounted.
const MCPPath = "/mcp"

// MinTokenBytes is the shortest token accepted off loopback: anyone on the
// network can try tokens, and a short one is found by trying them all (16
// random letters and digits are beyond that).
const MinTokenBytes = 16

// CheckToken checks a token for a server others on the network can reach:
// at least MinTokenBytes, and no space or control character (which no
// Authorization header carries intact).
func CheckToken(tok string) error {
	if strings.IndexFunc(tok, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return fmt.Errorf("the token holds a space or a control character; use letters, digits and punctuation (for example: openssl rand -hex 24)")
	}
	if len(tok) < MinTokenBytes {
		return fmt.Errorf("the token is %d bytes, under the minimum of %d: a short token can be guessed from the network (for example: openssl rand -hex 24)", len(tok), MinTokenBytes)
	}
	return nil
}

// authenticate checks the bearer token on every route but /v1/health.
func (s *Server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if s.cfg.Token == "" || c.Path() == "/v1/health" || isUI(c.Path()) {
			return next(c)
		}
		if !s.authorized(c.Request()) {
			c.Response().Header().Set("WWW-Authenticate", `Bearer realm="engram"`)
			return engram.Errorf(engram.EUNAUTHORIZED, "missing or wrong bearer token (Authorization: Bearer <token>)")
		}
		return next(c)
	}
}

// authorized reports whether r may see everything: no token is configured,
// or r carries it.
func (s *Server) authorized(r *http.Request) bool {
	if s.cfg.Token == "" {
		return true
	}
	// The scheme is case-insensitive (RFC 9110, section 11.1).
	scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	tok = strings.TrimLeft(tok, " ")
	return strings.EqualFold(scheme, "Bearer") && subtle.ConstantTimeCompare([]byte(tok), []byte(s.cfg.Token)) == 1
}

// decodeParams decodes the path parameters (an id, a job name) exactly
// once. Echo routes on the escaped path when the request's differs from the
// default encoding (an id holding '/', or ':' sent as %3A, as the web view's
// encodeURIComponent does), and then hands the parameters over still
// escaped; otherwise it routes on the decoded path, and a second decode
// would turn an id's own "%41" into "A".
func decodeParams(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Request().URL.RawPath == "" {
			return next(c)
		}
		names, vals := c.ParamNames(), c.ParamValues()
		out := make([]string, len(vals))
		for i, v := range vals {
			d, err := url.PathUnescape(v)
			if err != nil {
				name := "path"
				if i < len(names) {
					name = names[i]
				}
				return engram.FieldError(name, "%s %q is not a valid percent-encoded path segment", name, v)
			}
			out[i] = d
		}
		c.SetParamValues(out...)
		return next(c)
	}
}

// recoverer turns a panic in a handler into a 500 and a log line with the
// stack, instead of killing the process.
func (s *Server) recoverer(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			if r := recover(); r != nil {
				if r == http.ErrAbortHandler {
					panic(r)
				}
				s.logger.Error("panic in handler", "path", c.Path(), "panic", fmt.Sprint(r))
				err = engram.Errorf(engram.EINTERNAL, "internal error")
			}
		}()
		return next(c)
	}
}

func isLoopback(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, engram.Errorf(engram.EINVALID, "bad listen address %q: %v (want host:port, e.g. %s)", addr, err, DefaultAddr)
	}
	if host == "localhost" {
		return true, nil
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback(), nil
}
