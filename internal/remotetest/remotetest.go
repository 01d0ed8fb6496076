// Package remotetest holds what the tests of the adapters over a model
// server (packages ollama and openai) share: a proxy in front of the real
// server that records the requests and can misbehave, an address where
// nothing listens (chroma's tests use it too), texts to embed and the check
// of an error's code. Only tests import it.
package remotetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync"
	"testing"

	engram "github.com/engram-dev/engram"
)

// Proxy is a real HTTP server in front of the test server that records the
// requests it sees and, through Fault, can misbehave on any of them: it
// stands for a server that limits, fails, hangs or refuses, the process
// edge the retry and error tests need to break. Everything it does not
// answer itself goes to the real server.
type Proxy struct {
	srv *httptest.Server
	rp  *httputil.ReverseProxy

	mu          sync.Mutex
	requests    []Request
	fault       FaultFunc
	rewrite     RewriteFunc
	rewritePath string
}

// Request is what the proxy saw of one request.
type Request struct {
	Method, Path string
	Auth         string         // the Authorization header
	Body         map[string]any // the JSON object sent, nil for none
}

// Strings returns the strings of the list Body[key], such as the texts of
// an embedding request.
func (r Request) Strings(key string) []string {
	list, _ := r.Body[key].([]any)
	out := make([]string, 0, len(list))
	for _, v := range list {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// FaultFunc sees every request first (n counts from 1); when it returns
// true it has answered and the request is not forwarded. It may read the
// request's body: the request forwarded carries the body as sent.
type FaultFunc func(n int, w http.ResponseWriter, r *http.Request) bool

// RewriteFunc may change the server's decoded JSON reply to request n.
type RewriteFunc func(n int, reply map[string]any)

// NewProxy starts a proxy to target on a free loopback port; it stops at
// the end of the test.
func NewProxy(tb testing.TB, target *url.URL) *Proxy {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p := StartProxy(target, l)
	tb.Cleanup(p.Close)
	return p
}

// StartProxy serves a proxy to target on l until Close: a test that brings
// a server up on an address it chose listens there itself.
func StartProxy(target *url.URL, l net.Listener) *Proxy {
	p := &Proxy{rp: httputil.NewSingleHostReverseProxy(target)}
	p.rp.ModifyResponse = p.modify
	p.srv = httptest.NewUnstartedServer(http.HandlerFunc(p.serve))
	p.srv.Listener = l
	p.srv.Start()
	return p
}

// Close stops the proxy.
func (p *Proxy) Close() { p.srv.Close() }

// Host returns the proxy's address, "127.0.0.1:port".
func (p *Proxy) Host() string { return p.srv.Listener.Addr().String() }

// URL returns the proxy's base URL, "http://127.0.0.1:port".
func (p *Proxy) URL() string { return p.srv.URL }

// Fault sets the proxy's fault; nil forwards every request.
func (p *Proxy) Fault(f FaultFunc) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fault = f
}

// Rewrite sets the function that may change each 200 reply to a request
// for path ("" for every path); nil leaves the replies alone.
func (p *Proxy) Rewrite(path string, f RewriteFunc) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rewritePath, p.rewrite = path, f
}

// Requests returns what the proxy has seen so far.
func (p *Proxy) Requests() []Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Request(nil), p.requests...)
}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	seen := Request{Method: r.Method, Path: r.URL.Path, Auth: r.Header.Get("Authorization")}
	_ = json.Unmarshal(body, &seen.Body)
	p.mu.Lock()
	p.requests = append(p.requests, seen)
	n := len(p.requests)
	fault := p.fault
	p.mu.Unlock()
	if fault != nil && fault(n, w, r) {
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.Header.Set("X-Proxy-Request", strconv.Itoa(n))
	p.rp.ServeHTTP(w, r)
}

func (p *Proxy) modify(resp *http.Response) error {
	p.mu.Lock()
	rewrite, path := p.rewrite, p.rewritePath
	p.mu.Unlock()
	if rewrite == nil || path != "" && resp.Request.URL.Path != path || resp.StatusCode != http.StatusOK {
		return nil
	}
	n, _ := strconv.Atoi(resp.Request.Header.Get("X-Proxy-Request"))
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	var reply map[string]any
	if err := json.Unmarshal(body, &reply); err != nil {
		return err
	}
	rewrite(n, reply)
	if body, err = json.Marshal(reply); err != nil {
		return err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	return nil
}

// Hang is a FaultFunc that answers nothing until the client gives up.
func Hang(_ int, _ http.ResponseWriter, r *http.Request) bool {
	<-r.Context().Done()
	return true
}

// ClosedPort returns a loopback address where nothing listens.
func ClosedPort(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		tb.Fatal(err)
	}
	return addr
}

// MustCode fails the test unless err is an *engram.Error with code.
func MustCode(tb testing.TB, err error, code string) {
	tb.Helper()
	if err == nil {
		tb.Fatalf("no error, want %s", code)
	}
	var ee *engram.Error
	if !errors.As(err, &ee) || ee.Code != code {
		tb.Fatalf("error %q has code %q, want %s", err, engram.ErrorCode(err), code)
	}
}

// Texts returns n distinct texts to embed.
func Texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("note %d: the meeting about project number %d moved to room %d", i, i*7, i%13)
	}
	return out
}
