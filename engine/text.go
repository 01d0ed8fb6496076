package engine

import (
	"strings"
	"time"
)

// noun returns one or many by n.
func noun(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// oneLine folds white space and cuts s to at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

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
