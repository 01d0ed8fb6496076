package engine

import (
	"time"

	"github.com/engram-dev/engram/internal/textutil"
)

// Stored text on one line, and counts in words (package textutil).
var (
	noun    = textutil.Noun
	oneLine = textutil.OneLine
)

func orNoReason(s string) string {
	if s == "" {
		return "no reason recorded"
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "no vector model"
	}
	return s
}

func msSince(t time.Time) float64 { return float64(time.Since(t).Microseconds()) / 1000 }

// nonNil makes a nil slice empty, so that JSON has [] and never null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
