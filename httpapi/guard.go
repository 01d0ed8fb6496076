package httpapi

import (
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/engram-dev/engram"
)

// guard refuses what a web page the user opens could send to engram: a
// request for another Host (DNS rebinding: the page's own name resolved to
// engram's address), a request from another Origin (a cross-site write),
// and a body that is not JSON (a form or a text/plain fetch needs no
// preflight, so a browser sends it cross-site without asking). Every route
// is guarded, /v1/health and /mcp included: a probe or an agent sends an IP
// or localhost as Host, and no Origin.
type guard struct {
	anyHost  bool            // allowed_hosts holds "*"
	anyIP    bool            // listening on every address: any IP literal is this machine
	hosts    map[string]bool // lower-case names and IPs allowed as Host besides localhost and loopback IPs
	origins  map[string]bool // scheme://host[:port] allowed besides the request's own origin
	hostHint string          // what to configure, for the error
}

// newGuard builds the guard of cfg.
func newGuard(cfg Config) (*guard, error) {
	g := &guard{hosts: map[string]bool{}, origins: map[string]bool{}}
	host, _, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return nil, engram.Errorf(engram.EINVALID, "bad listen address %q: %v (want host:port, e.g. %s)", cfg.Addr, err, DefaultAddr)
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		g.anyIP = true
	} else {
		g.hosts[normalHost(host)] = true
	}
	for i, h := range cfg.AllowedHosts {
		if err := CheckAllowedHost(h); err != nil {
			return nil, engram.FieldError(fmt.Sprintf("allowed_hosts[%d]", i), "%v", err)
		}
		if h == "*" {
			g.anyHost = true
		}
		g.hosts[normalHost(h)] = true
	}
	for i, o := range cfg.AllowedOrigins {
		n, err := NormalOrigin(o)
		if err != nil {
			return nil, engram.FieldError(fmt.Sprintf("allowed_origins[%d]", i), "%v", err)
		}
		g.origins[n] = true
	}
	return g, nil
}

// CheckAllowedHost checks an allowed_hosts entry: a host name or an IP
// address without scheme, port or path, or "*" (any Host).
func CheckAllowedHost(h string) error {
	switch {
	case h == "*":
		return nil
	case h == "" || strings.ContainsAny(h, "/ \t\n[]@?#"):
		return fmt.Errorf("%q is not a host name or an IP address (for example engram.lan or 192.168.1.20)", h)
	case strings.Contains(h, ":") && net.ParseIP(h) == nil:
		return fmt.Errorf("%q: give the host without a port (any port of an allowed host is allowed)", h)
	}
	return nil
}

// NormalOrigin checks an allowed_origins entry, "scheme://host[:port]"
// with scheme http or https, and returns it in the form browsers send
// (lower case, no default port).
func NormalOrigin(o string) (string, error) {
	u, err := url.Parse(o)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.User != nil ||
		u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("%q is not an origin: want scheme://host[:port] with http or https, for example http://localhost:5173", o)
	}
	host := strings.ToLower(u.Host)
	if p := u.Port(); u.Scheme == "http" && p == "80" || u.Scheme == "https" && p == "443" {
		host = strings.ToLower(u.Hostname())
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
	}
	return u.Scheme + "://" + host, nil
}

// normalHost is a Host header's or an allowed host's name, lower case,
// without port, brackets or a final dot.
func normalHost(hostport string) string {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	return strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
}

// hostAllowed reports whether a request's Host names this server: the
// listen address, localhost, a loopback IP (any IP when listening on every
// address), or an allowed host. A request without Host (HTTP/1.0) is no
// browser's.
func (g *guard) hostAllowed(hostport string) bool {
	if hostport == "" || g.anyHost {
		return true
	}
	host := normalHost(hostport)
	if host == "localhost" || g.hosts[host] {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.IsLoopback() || g.anyIP)
}

// originAllowed reports whether origin is the request's own (the page was
// served by engram, as the web UI at /ui/ will be) or an allowed one.
func (g *guard) originAllowed(origin, host string) bool {
	n, err := NormalOrigin(origin)
	if err != nil {
		return false // "null" (a sandboxed frame, a file: page) included
	}
	if g.origins[n] {
		return true
	}
	for _, scheme := range []string{"http", "https"} {
		if own, err := NormalOrigin(scheme + "://" + host); err == nil && own == n {
			return true
		}
	}
	return false
}

// check refuses a request the guard does not let through: 403 for its
// Host or Origin, 415 for a body that is not JSON. The errors name the
// header at fault. ui says the request was routed to the web view's files
// (or its redirects).
func (g *guard) check(r *http.Request, ui bool) error {
	if !g.hostAllowed(r.Host) {
		return &engram.Error{Code: engram.EFORBIDDEN, Field: "Host",
			Message: fmt.Sprintf("Host %q is not this server's: use localhost, a loopback IP or the listen address, or add the name to allowed_hosts in config.toml", r.Host)}
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		if !g.originAllowed(origin, r.Host) {
			return &engram.Error{Code: engram.EFORBIDDEN, Field: "Origin",
				Message: fmt.Sprintf("Origin %q is not allowed: only pages engram serves itself may call it from a browser; add the origin to allowed_origins in config.toml to allow it", origin)}
		}
	} else if site := r.Header.Get("Sec-Fetch-Site"); (site == "cross-site" || site == "same-site") && !uiNavigation(r, ui) {
		return &engram.Error{Code: engram.EFORBIDDEN, Field: "Origin",
			Message: fmt.Sprintf("a %s request from a browser without an allowed Origin is refused", site)}
	}
	if hasBody(r) {
		ct := r.Header.Get("Content-Type")
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return &engram.Error{Code: engram.EMEDIATYPE, Field: "Content-Type",
				Message: fmt.Sprintf("Content-Type %q: a request body must be JSON, sent with Content-Type: application/json", ct)}
		}
	}
	return nil
}

// uiNavigation reports whether r is a top-level GET (or HEAD) navigation
// to the web view's files, as a link from another site makes: they hold no
// data (the page then calls the API from engram's own origin, with the
// token), so a link to them may be followed. Every API route still
// refuses a cross-site request without an allowed Origin.
func uiNavigation(r *http.Request, ui bool) bool {
	return ui && (r.Method == http.MethodGet || r.Method == http.MethodHead) &&
		r.Header.Get("Sec-Fetch-Mode") == "navigate" && !hasBody(r)
}

// hasBody reports whether r carries a body, or says it does.
func hasBody(r *http.Request) bool {
	return r.ContentLength != 0 || r.Header.Get("Content-Type") != "" || len(r.TransferEncoding) > 0
}

// middleware is the guard as Echo middleware.
func (g *guard) middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := g.check(c.Request(), isUI(c.Path())); err != nil {
			return err
		}
		return next(c)
	}
}
