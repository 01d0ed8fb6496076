// Package lockedio holds a writer that several goroutines may share: a
// log and progress lines on one stderr, a transport's messages and the
// answers written beside them on one stdout.
package lockedio

import (
	"io"
	"sync"
)

// Writer serialises the writes to the writer it wraps: each Write reaches
// it whole, never interleaved with another.
type Writer struct {
	mu sync.Mutex
	w  io.Writer
}

// New returns a Writer over w.
func New(w io.Writer) *Writer { return &Writer{w: w} }

func (l *Writer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
