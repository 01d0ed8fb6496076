package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/labstack/echo/v4"

	"github.com/engram-dev/engram"
)

// MaxLayerLimit is the largest limit the layer routes accept.
const MaxLayerLimit = 1000

// noLayers is the error of the layer routes without a LayerService.
const noLayers = "the derived layers are not available on this server"

// getMemories lists L1 memories: newest first, or best first with q.
func (s *Server) getMemories(c echo.Context) error {
	return serve(c, http.StatusOK, s.Layers, noLayers, fromQuery(s, func(p *params) (engram.MemoryQuery, error) {
		q := engram.MemoryQuery{
			Namespace:  p.namespace(true),
			Type:       p.memoryType("type"),
			Subject:    p.name("subject"),
			Text:       p.text("q"),
			Superseded: p.bool("superseded"),
			Limit:      p.limit(),
		}
		q.From, q.To = p.span()
		return q, nil
	}), list("memories", engram.LayerService.Memories))
}

// memoryValues is the query string of GET /v1/memories for q, as Client
// sends it and getMemories reads it.
func memoryValues(q engram.MemoryQuery) url.Values {
	v := url.Values{}
	v.Set("namespace", orDefault(q.Namespace, engram.AllNamespaces))
	setParam(v, "type", q.Type)
	setParam(v, "subject", q.Subject)
	setParam(v, "q", q.Text)
	setFlag(v, "superseded", q.Superseded)
	setSpan(v, q.From, q.To)
	setLimit(v, q.Limit)
	return v
}

// getScenes lists L2 scenes: newest first, or best first with q.
func (s *Server) getScenes(c echo.Context) error {
	return serve(c, http.StatusOK, s.Layers, noLayers, fromQuery(s, func(p *params) (engram.SceneQuery, error) {
		q := engram.SceneQuery{Namespace: p.namespace(true), Session: p.name("session"), Text: p.text("q"), Limit: p.limit()}
		q.From, q.To = p.span()
		return q, nil
	}), list("scenes", engram.LayerService.Scenes))
}

// sceneValues is the query string of GET /v1/scenes for q.
func sceneValues(q engram.SceneQuery) url.Values {
	v := url.Values{}
	v.Set("namespace", orDefault(q.Namespace, engram.AllNamespaces))
	setParam(v, "session", q.Session)
	setParam(v, "q", q.Text)
	setSpan(v, q.From, q.To)
	setLimit(v, q.Limit)
	return v
}

// personaQuery is what GET /v1/persona asks: a namespace, and a speaker or
// "" for every speaker.
type personaQuery struct{ namespace, speaker string }

// getPersona returns the L3 profile of a speaker, or of every speaker of the
// namespace.
func (s *Server) getPersona(c echo.Context) error {
	return serve(c, http.StatusOK, s.Layers, noLayers, fromQuery(s, func(p *params) (personaQuery, error) {
		return personaQuery{p.namespace(false), p.name("speaker")}, nil
	}), list("personas", func(ls engram.LayerService, ctx context.Context, q personaQuery) ([]engram.Persona, error) {
		return ls.Persona(ctx, q.namespace, q.speaker)
	}))
}

// personaValues is the query string of GET /v1/persona.
func personaValues(namespace, speaker string) url.Values {
	v := url.Values{}
	setParam(v, "namespace", namespace)
	setParam(v, "speaker", speaker)
	return v
}

// getGraph answers a knowledge-graph query about an entity: its triples
// valid now or as_of a moment, or its whole timeline. 404 when the graph
// does not know the entity.
func (s *Server) getGraph(c echo.Context) error {
	return serve(c, http.StatusOK, s.Layers, noLayers, fromQuery(s, func(p *params) (engram.GraphQuery, error) {
		q := engram.GraphQuery{
			Entity:    p.name("entity"),
			Namespace: p.namespace(false),
			AsOf:      p.time("as_of"),
			Timeline:  p.bool("timeline"),
			Limit:     p.limit(),
		}
		switch {
		case q.Entity == "":
			return q, engram.FieldError("entity", "entity is required (for example ?entity=Alice)")
		case q.Timeline && !q.AsOf.IsZero():
			return q, engram.FieldError("as_of", "as_of and timeline=true do not go together: a timeline holds every triple")
		}
		return q, nil
	}), func(ls engram.LayerService, ctx context.Context, q engram.GraphQuery) (engram.GraphResult, error) {
		res, err := ls.Graph(ctx, q)
		res.Triples = nonNil(res.Triples)
		return res, err
	})
}

// graphValues is the query string of GET /v1/kg for q.
func graphValues(q engram.GraphQuery) url.Values {
	v := url.Values{}
	v.Set("entity", q.Entity)
	setParam(v, "namespace", q.Namespace)
	if !q.AsOf.IsZero() {
		v.Set("as_of", q.AsOf.Format(time.RFC3339Nano))
	}
	setFlag(v, "timeline", q.Timeline)
	setLimit(v, q.Limit)
	return v
}

// params reads a route's query string (checkQuery refused a parameter
// that is unknown or given twice), and every value is checked.
// The getters record the first bad value in err (an EINVALID naming the
// parameter) and return the zero value, so a handler reads all its
// parameters and checks err once.
type params struct {
	v        url.Values
	maxField int // the server's field-length limit
	err      error
}

// queryParams reads the query string checkQuery let through: only the
// route's parameters, each once.
func (s *Server) queryParams(c echo.Context) (*params, error) {
	v, err := url.ParseQuery(c.Request().URL.RawQuery)
	if err != nil {
		return nil, engram.FieldError("query", "the query string does not parse: %v", err)
	}
	return &params{v: v, maxField: s.cfg.Limits.MaxFieldBytes}, nil
}

func (p *params) fail(err *engram.Error) {
	if p.err == nil {
		p.err = err
	}
}

// name returns a name-like value (namespace, subject, session, speaker,
// entity): at most the field-length limit. Empty means absent.
func (p *params) name(k string) string {
	s := p.v.Get(k)
	if len(s) > p.maxField {
		p.fail(&engram.Error{Code: engram.ETOOLARGE, Field: k,
			Message: fmt.Sprintf("%s is %d bytes, over the limit of %d", k, len(s), p.maxField)})
		return ""
	}
	if controlChar(k, s, p) {
		return ""
	}
	return s
}

// controlChar fails p, naming k, when s holds a control character (a NUL
// byte, a newline): no id, namespace, session, speaker or name holds one
// (ingest refuses them), so such a filter can match nothing, and a
// database may refuse it outright.
func controlChar(k, s string, p *params) bool {
	if i := strings.IndexFunc(s, unicode.IsControl); i >= 0 {
		p.fail(engram.FieldError(k, "%s holds a control character at byte %d, which no id or name holds", k, i))
		return true
	}
	return false
}

// namespace returns the namespace to read: "default" when absent, "" (all
// namespaces) for "*" where all is allowed.
func (p *params) namespace(all bool) string {
	ns := p.name("namespace")
	switch {
	case ns == "":
		return engram.DefaultNamespace
	case ns == engram.AllNamespaces && all:
		return ""
	case ns == engram.AllNamespaces:
		p.fail(engram.FieldError("namespace", "namespace "+engram.AllNamespacesRefused))
		return ""
	}
	return ns
}

// text returns a keyword query, at most engram.MaxQueryBytes.
func (p *params) text(k string) string {
	s := p.v.Get(k)
	if err := engram.CheckQueryText(k, s); err != nil {
		p.fail(err.(*engram.Error))
		return ""
	}
	return s
}

// memoryType returns a memory type, or "" when absent.
func (p *params) memoryType(k string) string {
	s := p.v.Get(k)
	if s != "" && !engram.ValidMemoryType(s) {
		p.fail(engram.UnknownMemoryType(k, s))
		return ""
	}
	return s
}

// bool returns a flag: true or false (1 or 0); false when absent. Any other
// value, the empty one included, is refused rather than guessed.
func (p *params) bool(k string) bool {
	if !p.v.Has(k) {
		return false
	}
	switch s := p.v.Get(k); s {
	case "true", "1":
		return true
	case "false", "0":
		return false
	default:
		p.fail(engram.FieldError(k, "%s must be true or false, got %q", k, s))
		return false
	}
}

// time returns an RFC 3339 time in UTC; zero when absent.
func (p *params) time(k string) time.Time {
	if !p.v.Has(k) {
		return time.Time{}
	}
	s := p.v.Get(k)
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		p.fail(engram.FieldError(k, "%s %q is not RFC 3339 (for example 2026-05-01T14:03:00Z)", k, s))
		return time.Time{}
	}
	if !engram.InTimeRange(t) {
		p.fail(engram.OutOfRange(k, k))
		return time.Time{}
	}
	return t.UTC()
}

// span returns from and to, to after from when both are set.
func (p *params) span() (from, to time.Time) {
	from, to = p.time("from"), p.time("to")
	if !from.IsZero() && !to.IsZero() && !to.After(from) {
		p.fail(engram.FieldError("to", "to (%s) must be after from (%s)", to.Format(time.RFC3339), from.Format(time.RFC3339)))
	}
	return from, to
}

// limit returns the limit, 1 to MaxLayerLimit; 0 (the service's default)
// when absent.
func (p *params) limit() int {
	if !p.v.Has("limit") {
		return 0
	}
	s := p.v.Get("limit")
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > MaxLayerLimit {
		p.fail(engram.FieldError("limit", "limit must be an integer from 1 to %d, got %q", MaxLayerLimit, s))
		return 0
	}
	return n
}

// nonNil makes a nil slice empty, so that JSON has [] and never null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// orDefault returns s, or def when s is "".
func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func setParam(v url.Values, k, s string) {
	if s != "" {
		v.Set(k, s)
	}
}

func setFlag(v url.Values, k string, b bool) {
	if b {
		v.Set(k, "true")
	}
}

func setSpan(v url.Values, from, to time.Time) {
	if !from.IsZero() {
		v.Set("from", from.Format(time.RFC3339Nano))
	}
	if !to.IsZero() {
		v.Set("to", to.Format(time.RFC3339Nano))
	}
}

func setLimit(v url.Values, n int) {
	if n > 0 {
		v.Set("limit", strconv.Itoa(n))
	}
}
