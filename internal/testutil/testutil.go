// Package testutil holds the helpers that the tests of several packages
// share: waiting for a condition, a settable clock, writers that run
// beside the code under test, a request with raw headers. Only tests
// import it.
package testutil

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// WaitUntil polls cond until it holds, failing the test after a minute.
// The minute is a guard against a hang, not a speed limit: a loaded machine
// only makes the wait longer.
func WaitUntil(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// Clock is a settable wall clock, for a Now field of the code under test.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock that reads t until it is set or advanced.
func NewClock(t time.Time) *Clock { return &Clock{now: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Writers runs write(w, i) in n goroutines (w from 0 to n-1), each with i
// counting 0, 1, ... until write returns false or stop is called. stop
// returns once every goroutine has; the test's cleanup calls it too, so
// that a failed test leaves no writer behind.
func Writers(tb testing.TB, n int, write func(w, i int) bool) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for w := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				if !write(w, i) {
					return
				}
			}
		}()
	}
	var once sync.Once
	stop = func() {
		once.Do(func() { close(done) })
		wg.Wait()
	}
	tb.Cleanup(stop)
	return stop
}

// Request sends a request to url with a body unless it is "" and the
// given headers ("Host" sets the request's Host), and returns the answer,
// whose body the caller closes.
func Request(tb testing.TB, method, url, body string, headers map[string]string) *http.Response {
	tb.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		tb.Fatal(err)
	}
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	return resp
}

// Hostile are texts that drive a terminal: colours (CSI), the window title
// (OSC 0, ended by BEL), the clipboard (OSC 52), a link (OSC 8, ended by
// ST), CSI as one C1 character, a raw C1 byte, a carriage return that
// overwrites the line, NUL and DEL.
var Hostile = []string{
	"\x1b[31mred\x1b[0m",
	"\x1b]0;pwned title\x07",
	"\x1b]52;c;ZWNobyBoaQ==\x07",
	"\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\",
	"\u009b2J",
	"raw \x9b byte",
	"fine\rFAKE",
	"nul\x00del\x7f",
}

// RawControl returns the first control character of s that a terminal
// acts on (not newline or tab), or -1.
func RawControl(s string) rune {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return rune(s[i])
		}
		if (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f) {
			return r
		}
		i += size
	}
	return -1
}

// Servers returns the values of the environment variables need: the real
// Chroma and PostgreSQL URLs and Ollama host and models that `make test`
// (scripts/testenv.sh) starts. Without one the test fails, unless -short
// asked to skip it.
func Servers(tb testing.TB, need ...string) map[string]string {
	tb.Helper()
	env := map[string]string{}
	for _, name := range need {
		v := os.Getenv(name)
		if v == "" {
			if testing.Short() {
				tb.Skipf("%s unset: skipped with -short", name)
			}
			tb.Fatalf("%s is not set: run `make test` (scripts/testenv.sh starts Chroma, Ollama and PostgreSQL), or -short to skip", name)
		}
		env[name] = v
	}
	return env
}

// ReportLatency reports the median and the 99th percentile of lat, in
// milliseconds, as the benchmark's metrics p50-ms and p99-ms. It sorts lat.
func ReportLatency(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))]) / 1e6
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

// GetJSON fetches url and decodes its JSON answer into out, returning the
// status code.
func GetJSON(ctx context.Context, url string, out any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	return resp.StatusCode, json.NewDecoder(resp.Body).Decode(out)
}

// PostJSON posts body as JSON to url and decodes the answer into out (nil:
// read and dropped), returning the status code.
func PostJSON(ctx context.Context, url string, body, out any) (int, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, "POST", url, bytes.NewReader(b))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	rb, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err
	}
	if out != nil {
		if err := json.Unmarshal(rb, out); err != nil {
			return resp.StatusCode, fmt.Errorf("decode %q: %w", rb, err)
		}
	}
	return resp.StatusCode, nil
}

// LongRun marks t a long run (a large equivalence run, a crash or fault
// injection, writes beside concurrent work): -short skips it, and it runs
// in parallel with the package's other long runs, once its fast tests are
// done. Call it first; a long run must not use t.Setenv or process-wide
// test hooks.
func LongRun(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("a long run; make test runs it")
	}
	t.Parallel()
}
