// Package backoff is the retry delay of everything in engram that retries a
// failing dependency (the pipeline's workers, the vector side starting up,
// the requests of the ollama and openai clients): doubled after each
// failure, up to a cap, back to the start after a success.
package backoff

import (
	"context"
	"time"
)

// Backoff is an exponential retry delay from Base, doubled by each Next,
// at most Max. The zero value of its state is "no failure yet".
type Backoff struct {
	Base, Max time.Duration
	cur       time.Duration
}

// Next returns the delay to wait before the next try, and doubles the one
// after it (up to Max).
func (b *Backoff) Next() time.Duration {
	d := b.Peek()
	b.cur = min(2*d, b.Max)
	return d
}

// Peek returns the delay Next would return, without doubling it.
func (b *Backoff) Peek() time.Duration {
	if b.cur == 0 {
		return b.Base
	}
	return b.cur
}

// Reset starts over from Base, after a success.
func (b *Backoff) Reset() { b.cur = 0 }

// Retries is the number of retries a setting asks for: 0 means def, a
// negative number none.
func Retries(n, def int) int {
	switch {
	case n == 0:
		return def
	case n < 0:
		return 0
	}
	return n
}

// Sleep waits d, or until ctx ends, whose error it then returns.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
