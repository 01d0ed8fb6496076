package textutil_test

import (
	"testing"

	"github.com/engram-dev/engram/internal/textutil"
)

func TestOneLine(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"  a\n\tb  c ", 10, "a b c"},
		{"abcdef", 6, "abcdef"},
		{"abcdefg", 6, "abcde…"},
		{"日本語のテキスト", 4, "日本語…"},
	} {
		if got := textutil.OneLine(tc.in, tc.n); got != tc.want {
			t.Errorf("OneLine(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

func TestPluralNoun(t *testing.T) {
	if got := textutil.Plural(1, "turn") + ", " + textutil.Plural(0, "turn") + ", " + textutil.Plural(2, "vault"); got != "1 turn, 0 turns, 2 vaults" {
		t.Errorf("Plural: %q", got)
	}
	if got := textutil.Noun(1, "line", "lines") + " " + textutil.Noun(3, "line", "lines"); got != "line lines" {
		t.Errorf("Noun: %q", got)
	}
}
