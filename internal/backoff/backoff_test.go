package backoff_test

import (
	"testing"
	"time"

	"github.com/engram-dev/engram/internal/backoff"
)

func TestBackoff(t *testing.T) {
	b := backoff.Backoff{Base: time.Second, Max: 5 * time.Second}
	var got []time.Duration
	for range 5 {
		got = append(got, b.Next())
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("delays %v, want %v", got, want)
		}
	}
	if p := b.Peek(); p != 5*time.Second {
		t.Errorf("Peek = %v, want the cap", p)
	}
	b.Reset()
	if p, n := b.Peek(), b.Next(); p != time.Second || n != time.Second {
		t.Errorf("after Reset: Peek %v, Next %v; want Base", p, n)
	}
}
