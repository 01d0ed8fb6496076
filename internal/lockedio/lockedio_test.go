package lockedio_test

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/engram-dev/engram/internal/lockedio"
)

// Writes from many goroutines arrive whole (the race detector checks the
// buffer is never written by two at once).
func TestWriterSerialises(t *testing.T) {
	var buf bytes.Buffer
	w := lockedio.New(&buf)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				w.Write([]byte(strings.Repeat(string(rune('a'+i)), 10) + "\n"))
			}
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 800 {
		t.Fatalf("%d lines, want 800", len(lines))
	}
	for _, l := range lines {
		if len(l) != 10 || strings.Count(l, l[:1]) != 10 {
			t.Fatalf("interleaved line %q", l)
		}
	}
}
