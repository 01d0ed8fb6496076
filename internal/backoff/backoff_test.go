package backoff_test

import (
	"context"
	"errors"
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

func TestRetries(t *testing.T) {
	for _, tc := range []struct{ n, want int }{{0, 3}, {-1, 0}, {-7, 0}, {1, 1}, {10, 10}} {
		if got := backoff.Retries(tc.n, 3); got != tc.want {
			t.Errorf("Retries(%d, 3) = %d, want %d", tc.n, got, tc.want)
		}
	}
}

func TestSleep(t *testing.T) {
	if err := backoff.Sleep(context.Background(), 0); err != nil {
		t.Fatalf("Sleep(0) = %v", err)
	}
	// A canceled context ends an hour's wait at once: untimed, a Sleep that
	// ignored it would hang the test.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := backoff.Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep on a canceled context = %v, want context.Canceled", err)
	}
}
