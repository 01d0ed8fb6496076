package openai

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/backoff"
	"github.com/engram-dev/engram/internal/remote"
)

// Defaults for Config's zero values.
const (
	// DefaultBaseURL is OpenAI's API.
	DefaultBaseURL = "https://api.openai.com/v1"
	// DefaultTimeout bounds each attempt of a request.
	DefaultTimeout = 2 * time.Minute
	// DefaultMaxRetries is how many times a request that failed for a
	// transient reason is sent again.
	DefaultMaxRetries = 5
	// DefaultRetryDelay is the wait before the first retry without a
	// Retry-After; it doubles on each further one, up to MaxRetryDelay.
	DefaultRetryDelay = 500 * time.Millisecond
	// MaxRetryDelay caps the doubling wait between two attempts.
	MaxRetryDelay = 30 * time.Second
	// DefaultMaxRetryAfter is the longest Retry-After the client waits for;
	// a server that asks for longer gets an error, and the job that sent
	// the request tries again on its own schedule.
	DefaultMaxRetryAfter = 2 * time.Minute
	// DefaultDialTimeout bounds connecting, so that an address where nothing
	// answers fails fast.
	DefaultDialTimeout = 10 * time.Second
	// maxErrorBody is how much of an error reply is read for its message.
	maxErrorBody = 64 << 10
	// maxReplyBody bounds a successful reply (a batch of vectors).
	maxReplyBody = 256 << 20
)

// Config says which server and model a client uses. Zero fields take the
// defaults above.
type Config struct {
	// BaseURL is the API's base URL up to and including the version, e.g.
	// "https://api.openai.com/v1" or "http://127.0.0.1:11434/v1"; default
	// DefaultBaseURL.
	BaseURL string
	// Model is the model's name on the server: the embedding model of an
	// Embedder, the chat model of an Extractor. Required.
	Model string
	// APIKey, if set, is sent as a bearer token. Servers on one's own
	// machine mostly need none.
	APIKey string
	// KeyEnv names the environment variable the key came from, for the
	// error of a refused key ("set OPENAI_API_KEY"); default OPENAI_API_KEY.
	KeyEnv string
	// Timeout bounds each attempt of a request; default DefaultTimeout.
	Timeout time.Duration
	// MaxRetries is how many times a request is sent again after a
	// transient failure; 0 means DefaultMaxRetries, negative none.
	MaxRetries int
	// RetryDelay is the first wait without a Retry-After; default
	// DefaultRetryDelay.
	RetryDelay time.Duration
	// MaxRetryAfter is the longest Retry-After waited for; default
	// DefaultMaxRetryAfter.
	MaxRetryAfter time.Duration
}

func (c Config) withDefaults() Config {
	c.BaseURL = cmp.Or(c.BaseURL, DefaultBaseURL)
	c.KeyEnv = cmp.Or(c.KeyEnv, "OPENAI_API_KEY")
	c.Timeout = cmp.Or(c.Timeout, DefaultTimeout)
	c.MaxRetries = backoff.Retries(c.MaxRetries, DefaultMaxRetries)
	c.RetryDelay = cmp.Or(c.RetryDelay, DefaultRetryDelay)
	c.MaxRetryAfter = cmp.Or(c.MaxRetryAfter, DefaultMaxRetryAfter)
	return c
}

// Validate reports the first bad field as EINVALID.
func (c Config) Validate() error {
	if _, err := ParseBaseURL(c.BaseURL); err != nil {
		return err
	}
	switch {
	case strings.TrimSpace(c.Model) == "":
		return engram.FieldError("openai.model", "must name a model on the server")
	case c.Timeout < 0:
		return engram.FieldError("openai.timeout", "must not be negative, got %s", c.Timeout)
	case c.RetryDelay < 0:
		return engram.FieldError("openai.retry_delay", "must not be negative, got %s", c.RetryDelay)
	case c.MaxRetryAfter < 0:
		return engram.FieldError("openai.max_retry_after", "must not be negative, got %s", c.MaxRetryAfter)
	case strings.ContainsAny(c.APIKey, "\r\n"):
		return engram.FieldError("openai.api_key", "the key in $%s holds a line break", c.KeyEnv)
	}
	return nil
}

// ParseBaseURL checks a base URL: http or https, a host, no query or
// fragment. The path is kept ("/v1"); a trailing slash is dropped.
func ParseBaseURL(s string) (*url.URL, error) {
	bad := func(why string) error {
		return engram.FieldError("openai.base_url", "%q is not an API base URL (%s); want http(s)://host[:port]/v1", s, why)
	}
	u, err := url.Parse(strings.TrimSpace(s))
	switch {
	case err != nil:
		return nil, bad(err.Error())
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, bad("scheme must be http or https")
	case u.Host == "" || u.Hostname() == "":
		return nil, bad("no host")
	case u.User != nil:
		return nil, bad("credentials in the URL; the key comes from the environment")
	case u.RawQuery != "" || u.Fragment != "":
		return nil, bad("a query or fragment")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, bad("port must be a number from 1 to 65535")
		}
	}
	u.Path = strings.TrimRight(u.Path, "/")
	return u, nil
}

// client is the HTTP side shared by the Embedder and the Extractor.
type client struct {
	cfg       Config
	base      *url.URL
	http      *http.Client
	transport *http.Transport
	// sleep waits d unless ctx ends first; tests record the waits instead.
	sleep func(ctx context.Context, d time.Duration) error
	now   func() time.Time
}

func newClient(cfg Config) (*client, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	base, err := ParseBaseURL(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	transport := remote.NewTransport(DefaultDialTimeout, cfg.Timeout)
	return &client{cfg: cfg, base: base, http: &http.Client{Transport: transport}, transport: transport,
		sleep: backoff.Sleep, now: time.Now}, nil
}

// Host returns the server's base URL.
func (c *client) Host() string { return c.base.String() }

// Close releases idle connections.
func (c *client) Close() error {
	c.transport.CloseIdleConnections()
	return nil
}

// statusError is a reply with a status other than 200, as the server
// described it.
type statusError struct {
	status     int
	message    string // the server's error message, "" if it gave none
	retryAfter time.Duration
	hasAfter   bool
}

func (e *statusError) Error() string {
	msg := e.message
	if msg == "" {
		msg = "no detail"
	}
	return fmt.Sprintf("%d %s: %s", e.status, http.StatusText(e.status), msg)
}

// transient reports whether a request that failed with err may succeed if
// sent again.
func transient(err error) bool {
	var se *statusError
	if errors.As(err, &se) {
		return se.status == http.StatusTooManyRequests || se.status >= 500
	}
	return remote.NoAnswer(err)
}

// post sends body (JSON) to path with retries and decodes the reply into
// out. op names the request in errors ("embeddings", "chat").
func (c *client) post(ctx context.Context, op, path string, body, out any) error {
	payload, err := json.Marshal(body)
	if err != nil {
		return engram.Errorf(engram.EINTERNAL, "openai %s: encode the request: %v", op, err)
	}
	delay := backoff.Backoff{Base: c.cfg.RetryDelay, Max: MaxRetryDelay}
	for attempt := 1; ; attempt++ {
		err := c.send(ctx, http.MethodPost, path, payload, out)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("openai %s: %w", op, ctx.Err())
		}
		if !transient(err) || attempt > c.cfg.MaxRetries {
			return c.describe(op, err, attempt)
		}
		var wait time.Duration
		var se *statusError
		switch {
		case errors.As(err, &se) && se.hasAfter && se.retryAfter > c.cfg.MaxRetryAfter:
			return c.describe(op, err, attempt)
		case errors.As(err, &se) && se.hasAfter:
			wait = se.retryAfter // the server's word, not the backoff's
		default:
			wait = delay.Next()
		}
		if err := c.sleep(ctx, wait); err != nil {
			return fmt.Errorf("openai %s: %w", op, err)
		}
	}
}

// send sends one attempt within Timeout, with payload (JSON) as its body
// unless it is nil, checks the reply's status and decodes its JSON into out
// (nil: checked, then dropped).
func (c *client) send(ctx context.Context, method, path string, payload []byte, out any) error {
	actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(actx, method, c.base.String()+path, body)
	if err != nil {
		return err
	}
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return c.readError(resp)
	}
	if out == nil {
		var v json.RawMessage
		out = &v
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxReplyBody)).Decode(out); err != nil {
		return &replyError{err: err}
	}
	return nil
}

// replyError is a 200 reply that is not the JSON the API describes.
type replyError struct{ err error }

func (e *replyError) Error() string { return "the reply is not the API's JSON: " + e.err.Error() }
func (e *replyError) Unwrap() error { return e.err }

// readError reads an error reply: OpenAI's {"error":{"message":...}}, a
// bare {"error":"..."} or text, and a Retry-After header.
func (c *client) readError(resp *http.Response) error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	se := &statusError{status: resp.StatusCode}
	var obj struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &obj) == nil && len(obj.Error) > 0 {
		var detail struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(obj.Error, &detail) == nil && detail.Message != "":
			se.message = detail.Message
		case json.Unmarshal(obj.Error, &s) == nil:
			se.message = s
		}
	}
	if se.message == "" {
		se.message = strings.TrimSpace(string(raw))
	}
	se.message = redact(oneLine(se.message, 300), c.cfg.APIKey)
	if v := strings.TrimSpace(resp.Header.Get("Retry-After")); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 {
			se.retryAfter, se.hasAfter = time.Duration(n)*time.Second, true
		} else if t, err := http.ParseTime(v); err == nil {
			se.retryAfter, se.hasAfter = max(0, t.Sub(c.now())), true
		}
	}
	return se
}

// describe turns the last error of a request into an EUNAVAILABLE error
// that says what to do about it. The key never appears in it.
func (c *client) describe(op string, err error, attempts int) error {
	tries := ""
	if attempts > 1 {
		tries = fmt.Sprintf(" after %d attempts", attempts)
	}
	base, model := c.base.String(), c.cfg.Model
	var se *statusError
	var mm *missingModel
	var re *replyError
	var msg string
	switch {
	case errors.As(err, &se) && (se.status == http.StatusUnauthorized || se.status == http.StatusForbidden):
		hint := fmt.Sprintf("set the API key in $%s", c.cfg.KeyEnv)
		if c.cfg.APIKey != "" {
			hint = fmt.Sprintf("the key in $%s was sent and refused: check it and its access to model %q", c.cfg.KeyEnv, model)
		}
		msg = fmt.Sprintf("the server at %s refused the %s request (%s); %s", base, op, se, hint)
	case errors.As(err, &mm):
		listed := strings.Join(mm.listed, ", ")
		if len(mm.listed) > 12 {
			listed = strings.Join(mm.listed[:12], ", ") + fmt.Sprintf(" and %d more", len(mm.listed)-12)
		}
		if listed == "" {
			listed = "none"
		}
		msg = fmt.Sprintf("model %q is not among the models of %s (it lists %s); check the model name, or pull it on a local server", model, base, listed)
	case errors.As(err, &se) && se.status == http.StatusNotFound:
		msg = fmt.Sprintf("model %q is not available at %s (%s); check the model name, or pull it on a local server", model, base, se)
	case errors.As(err, &se) && se.hasAfter && se.retryAfter > c.cfg.MaxRetryAfter:
		msg = fmt.Sprintf("the server at %s is limiting requests (%s) and asks to wait %s, longer than %s; the job retries later",
			base, se, se.retryAfter.Round(time.Second), c.cfg.MaxRetryAfter)
	case errors.As(err, &se):
		msg = fmt.Sprintf("the server at %s answered the %s request for model %q with %s%s", base, op, model, se, tries)
	case errors.As(err, &re):
		msg = fmt.Sprintf("the server at %s answered the %s request for model %q, but %v", base, op, model, re)
	case errors.Is(err, context.DeadlineExceeded):
		msg = fmt.Sprintf("the server at %s did not answer the %s request within %s%s", base, op, c.cfg.Timeout, tries)
	case remote.NoAnswer(err):
		msg = fmt.Sprintf("the server at %s is not reachable%s: %v", base, tries, remote.Cause(err))
	default:
		msg = fmt.Sprintf("the %s request to %s failed: %v", op, base, remote.Cause(err))
	}
	return remote.Unavailable(redact(msg, c.cfg.APIKey), err)
}

// redact removes the key from s, should a server echo it back.
func redact(s, key string) string {
	if len(key) < 4 {
		return s
	}
	return strings.ReplaceAll(s, key, "[redacted]")
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "\uFFFD")), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
