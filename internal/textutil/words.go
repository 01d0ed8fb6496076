package textutil

import (
	"fmt"
	"strings"
)

// OneLine folds white space (newlines included) and cuts s to at most n
// runes, the last one an ellipsis when it was cut: a stored text shown on
// one line of a report.
func OneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// Noun returns one or many by n.
func Noun(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Plural returns n and noun, with an s unless n is 1: "1 turn", "2 turns".
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
