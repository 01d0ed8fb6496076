package ollama

import (
	"cmp"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/backoff"
)

// Defaults for Config's zero values.
const (
	// DefaultHost is the server's address when neither Config.Host nor
	// $OLLAMA_HOST says otherwise: where `ollama serve` listens.
	DefaultHost = "127.0.0.1:11434"
	// DefaultModel is the embedding model when Config.Model is empty.
	DefaultModel = "bge-m3"
	// DefaultBatchSize is the most texts sent in one request.
	DefaultBatchSize = 32
	// DefaultTimeout bounds each request. It is long because the first
	// request loads the model, and a batch of long texts through a large
	// model on a few CPU cores takes seconds.
	DefaultTimeout = 2 * time.Minute
	// DefaultMaxRetries is how many times a request that failed for a
	// transient reason is sent again.
	DefaultMaxRetries = 3
	// DefaultRetryDelay is the wait before the first retry; it doubles on each
	// further retry, up to MaxRetryDelay.
	DefaultRetryDelay = 250 * time.Millisecond
	// MaxRetryDelay caps the wait between two attempts.
	MaxRetryDelay = 5 * time.Second
	// DefaultDialTimeout bounds connecting, so that an address where nothing
	// answers fails fast even when Timeout is long.
	DefaultDialTimeout = 5 * time.Second
)

// defaultPort is the port of a Host given without one (as `ollama` does).
const defaultPort = "11434"

// Config says which server and model an Embedder uses. Zero fields take the
// defaults above.
type Config struct {
	// Host is the server's address: "host:port", "host" (port 11434), or a
	// URL such as "http://host:port" or "https://host" (port 443). Empty means
	// $OLLAMA_HOST, and DefaultHost when that is unset too.
	Host string
	// Model is the embedding model's name on the server; default DefaultModel.
	Model string
	// BatchSize caps the texts per request; default DefaultBatchSize.
	BatchSize int
	// Timeout bounds each request (each attempt); default DefaultTimeout.
	Timeout time.Duration
	// MaxRetries is how many times a request is sent again after a transient
	// failure (connection refused or reset, a timeout, 429 or a 5xx status);
	// 0 means DefaultMaxRetries and a negative value disables retries.
	MaxRetries int
	// RetryDelay is the wait before the first retry, doubled on each further
	// one up to MaxRetryDelay; default DefaultRetryDelay.
	RetryDelay time.Duration
}

func (c Config) withDefaults() Config {
	c.Host = cmp.Or(c.Host, strings.TrimSpace(os.Getenv("OLLAMA_HOST")), DefaultHost)
	c.Model = cmp.Or(c.Model, DefaultModel)
	c.BatchSize = cmp.Or(c.BatchSize, DefaultBatchSize)
	c.Timeout = cmp.Or(c.Timeout, DefaultTimeout)
	c.MaxRetries = backoff.Retries(c.MaxRetries, DefaultMaxRetries)
	c.RetryDelay = cmp.Or(c.RetryDelay, DefaultRetryDelay)
	return c
}

// Validate reports the first bad field as EINVALID. Empty fields are valid:
// they take the defaults.
func (c Config) Validate() error {
	if c.Host != "" {
		if _, err := ParseHost(c.Host); err != nil {
			return err
		}
	}
	switch {
	case c.BatchSize < 0:
		return engram.FieldError("ollama.batch_size", "must not be negative, got %d", c.BatchSize)
	case c.Timeout < 0:
		return engram.FieldError("ollama.timeout", "must not be negative, got %s", c.Timeout)
	case c.RetryDelay < 0:
		return engram.FieldError("ollama.retry_delay", "must not be negative, got %s", c.RetryDelay)
	}
	return nil
}

// ParseHost turns an address as OLLAMA_HOST takes it into the server's base
// URL: "host:port", "host" and "[::1]:port" mean http with port 11434 by
// default; "http://host" and "https://host" default to ports 80 and 443. A
// path after the address is kept (for a server behind a reverse proxy).
//
// Unlike the ollama CLI, which falls back to its default on a bad port, it
// returns EINVALID for anything it cannot read.
func ParseHost(s string) (*url.URL, error) {
	bad := func(why string) error {
		return engram.FieldError("ollama.host", "%q is not an ollama address (%s); want host:port or http(s)://host:port", s, why)
	}
	s = strings.TrimSpace(s)
	scheme, hostport, ok := strings.Cut(s, "://")
	port := defaultPort
	switch {
	case !ok:
		scheme, hostport = "http", s
	case scheme == "http":
		port = "80"
	case scheme == "https":
		port = "443"
	default:
		return nil, bad("scheme must be http or https")
	}
	hostport, path, _ := strings.Cut(hostport, "/")
	host := hostport
	if h, p, err := net.SplitHostPort(hostport); err == nil {
		host, port = h, p
	} else {
		host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	}
	if host == "" {
		return nil, bad("no host")
	}
	if strings.ContainsAny(host, " /?#@[]") {
		return nil, bad("bad host")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return nil, bad("port must be a number from 1 to 65535")
	}
	u := &url.URL{Scheme: scheme, Host: net.JoinHostPort(host, port)}
	if path != "" {
		u.Path = "/" + path
	}
	return u, nil
}
