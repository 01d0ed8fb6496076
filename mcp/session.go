package mcp

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// Defaults of the sessions of the streamable HTTP transport.
const (
	// DefaultSessionIdle is how long an HTTP session may go without a
	// request before it is closed; its client then gets 404 and starts a
	// new one, as the protocol says it must.
	DefaultSessionIdle = 10 * time.Minute
	// DefaultMaxSessions caps the open HTTP sessions: each holds memory
	// until it is closed, and clients that initialize without ever
	// closing would otherwise hold it for the process's life.
	DefaultMaxSessions = 256
)

// sessionHeader is the streamable HTTP transport's session id header.
const sessionHeader = "Mcp-Session-Id"

// sessions wraps the SDK's streamable HTTP handler to bound its sessions:
// one idle for longer than idle (by now, the server's clock) is closed
// before the next request is served, and a new session beyond max closes
// the one idle longest first (or is refused with 503 when every one is
// busy). A session is closed by a DELETE of its id to the SDK's handler,
// as a client ends it.
type sessions struct {
	next http.Handler
	idle time.Duration
	max  int
	now  func() time.Time

	mu      sync.Mutex
	live    map[string]*session
	pending int // initializes being served, whose session id is not known yet
}

type session struct {
	last time.Time // end of its last request
	busy int       // requests being served
}

func newSessions(next http.Handler, idle time.Duration, max int, now func() time.Time) *sessions {
	return &sessions{next: next, idle: idle, max: max, now: now, live: map[string]*session{}}
}

func (m *sessions) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get(sessionHeader)
	m.mu.Lock()
	expired := m.expired()
	if id == "" && r.Method == http.MethodPost { // may start a session
		if len(m.live)+m.pending >= m.max {
			if old := m.longestIdle(); old != "" {
				delete(m.live, old)
				expired = append(expired, old)
			} else {
				m.mu.Unlock()
				m.closeAll(expired)
				http.Error(w, fmt.Sprintf("too many MCP sessions (at most %d), every one busy: try again later", m.max), http.StatusServiceUnavailable)
				return
			}
		}
		m.pending++
		m.mu.Unlock()
		m.closeAll(expired)
		rec := &sessionWriter{ResponseWriter: w}
		m.next.ServeHTTP(rec, r)
		m.mu.Lock()
		m.pending--
		if rec.id != "" && rec.status < 300 {
			m.live[rec.id] = &session{last: m.now()}
		}
		m.mu.Unlock()
		return
	}
	s := m.live[id]
	if s != nil {
		s.busy++
	}
	m.mu.Unlock()
	m.closeAll(expired)
	rec := &sessionWriter{ResponseWriter: w}
	m.next.ServeHTTP(rec, r)
	if s == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s.busy--
	s.last = m.now()
	if r.Method == http.MethodDelete || rec.status == http.StatusNotFound {
		delete(m.live, id) // ended by its client, or by the SDK's own timer
	}
}

// expired removes the sessions idle for idle or longer from live and
// returns their ids. m.mu is held.
func (m *sessions) expired() []string {
	var out []string
	now := m.now()
	for id, s := range m.live {
		if s.busy == 0 && now.Sub(s.last) >= m.idle {
			delete(m.live, id)
			out = append(out, id)
		}
	}
	return out
}

// longestIdle is the id of the session idle longest, "" when every one is
// busy. m.mu is held.
func (m *sessions) longestIdle() string {
	var id string
	var last time.Time
	for k, s := range m.live {
		if s.busy == 0 && (id == "" || s.last.Before(last)) {
			id, last = k, s.last
		}
	}
	return id
}

// closeAll closes the sessions ids in the SDK's handler. The DELETE
// carries nothing of the request that found them expired (its context
// holds the listener's address, which the SDK's Host check reads).
func (m *sessions) closeAll(ids []string) {
	for _, id := range ids {
		r, err := http.NewRequestWithContext(context.Background(), http.MethodDelete, "/", nil)
		if err != nil {
			continue
		}
		r.Header.Set(sessionHeader, id)
		m.next.ServeHTTP(&discard{h: http.Header{}}, r)
	}
}

// sessionWriter records the status and the session id of an answer.
type sessionWriter struct {
	http.ResponseWriter
	status int
	id     string
}

func (w *sessionWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status, w.id = code, w.Header().Get(sessionHeader)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *sessionWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController flush the SDK's event streams.
func (w *sessionWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush flushes an event stream.
func (w *sessionWriter) Flush() {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	http.NewResponseController(w.ResponseWriter).Flush()
}

// discard is the answer to a DELETE the sessions send themselves.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}
