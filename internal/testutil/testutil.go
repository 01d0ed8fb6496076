// Package testutil holds the helpers that the tests of several packages
// share: waiting for a condition, a settable clock, writers that run
// beside the code under test, a request with raw headers. Only tests
// import it.
package testutil

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
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
