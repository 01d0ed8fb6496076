// Package qnorm is the one normalisation the query readers share (the
// trigger phrases of package trigger, the time expressions of package
// timeexpr): NFKC, lower case, white space folded, each rune knowing the
// bytes of the original it came from; and the cut of a span found in the
// normalised form out of the original, tidied at the seam.
package qnorm

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/engram-dev/engram/internal/textutil"
)

// Text is a query normalised for matching phrases and expressions, each
// rune knowing the byte span of the original it came from, so that a match
// found in the normalised form cuts the original.
type Text struct {
	R      []rune // NFKC, lower case, white space runs as one ' '
	Upper  []bool // the rune was upper case before lowering
	Lo, Hi []int  // byte span of the original that produced R[i]
}

// Normalize normalises s: NFKC, lower case, white space runs folded into one
// space and dropped between two CJK characters (which are not spaced), and
// format characters (zero-width spaces) removed. dropApos also removes
// apostrophes, so that "don't" and "dont" compare equal.
func Normalize(s string, dropApos bool) *Text {
	n := utf8.RuneCountInString(s)
	t := &Text{R: make([]rune, 0, n), Upper: make([]bool, 0, n), Lo: make([]int, 0, n), Hi: make([]int, 0, n)}
	var it norm.Iter
	it.InitString(norm.NFKC, s)
	for !it.Done() {
		start := it.Pos()
		seg := it.Next()
		end := it.Pos()
		for len(seg) > 0 {
			r, n := utf8.DecodeRune(seg)
			seg = seg[n:]
			switch {
			case unicode.IsSpace(r):
				if k := len(t.R) - 1; k >= 0 && t.R[k] == ' ' {
					t.Hi[k] = end
					continue
				}
				r = ' '
			case r == '\'' || r == '’' || r == '‘' || r == 'ʼ':
				if dropApos {
					continue
				}
				r = '\''
			case unicode.Is(unicode.Cf, r):
				continue
			}
			t.R = append(t.R, unicode.ToLower(r))
			t.Upper = append(t.Upper, unicode.IsUpper(r))
			t.Lo = append(t.Lo, start)
			t.Hi = append(t.Hi, end)
		}
	}
	// Drop spaces between CJK characters: "认真 回忆" is "认真回忆".
	w := 0
	for i, r := range t.R {
		if r == ' ' && i > 0 && i+1 < len(t.R) && IsCJK(t.R[i-1]) && IsCJK(t.R[i+1]) {
			continue
		}
		t.R[w], t.Upper[w], t.Lo[w], t.Hi[w] = r, t.Upper[i], t.Lo[i], t.Hi[i]
		w++
	}
	t.R, t.Upper, t.Lo, t.Hi = t.R[:w], t.Upper[:w], t.Lo[:w], t.Hi[:w]
	return t
}

// TrimSpace drops the spaces at both ends of r.
func TrimSpace(r []rune) []rune {
	for len(r) > 0 && r[0] == ' ' {
		r = r[1:]
	}
	for len(r) > 0 && r[len(r)-1] == ' ' {
		r = r[:len(r)-1]
	}
	return r
}

// IsCJK reports whether r is Chinese or Japanese (or Korean) script,
// which is matched without word boundaries.
func IsCJK(r rune) bool { return textutil.IsCJK(r) }

// IsSpacedWord reports whether r is part of a word in a script that
// separates words with spaces, so that a phrase must not start or end next
// to it.
func IsSpacedWord(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_'
	}
	return (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || r == '_') && !IsCJK(r)
}

// Cut returns s without s[lo:hi], tidied at the seam: white space
// around the cut folds into one space (none next to CJK), a comma-like mark
// that tied the removed words to the sentence goes with them, and text that
// is left starting with punctuation loses it. "What port did we choose, do
// you remember?" loses "do you remember" and becomes "What port did we
// choose?".
func Cut(s string, lo, hi int) string {
	left := strings.TrimRightFunc(s[:lo], unicode.IsSpace)
	right := strings.TrimLeftFunc(s[hi:], unicode.IsSpace)
	right = strings.TrimLeftFunc(strings.TrimLeftFunc(right, isJoiner), unicode.IsSpace)
	if right == "" || startsWithRune(right, isTerminal) {
		left = strings.TrimRightFunc(left, func(r rune) bool { return isJoiner(r) || unicode.IsSpace(r) })
	}
	// Brackets or quotes that held only the removed words go too.
	if l, n := utf8.DecodeLastRuneInString(left); n > 0 {
		inner := strings.TrimLeftFunc(right, isTerminal) // "(do you remember?)"
		if r, m := utf8.DecodeRuneInString(inner); m > 0 && closingOf[l] == r {
			left = strings.TrimRightFunc(left[:len(left)-n], unicode.IsSpace)
			right = strings.TrimLeftFunc(inner[m:], unicode.IsSpace)
		}
	}
	if left == "" {
		return strings.TrimLeftFunc(right, func(r rune) bool { return isJoiner(r) || isTerminal(r) || unicode.IsSpace(r) })
	}
	if right == "" {
		return left
	}
	l, _ := utf8.DecodeLastRuneInString(left)
	r, _ := utf8.DecodeRuneInString(right)
	if IsCJK(l) || IsCJK(r) || isCJKPunct(l) || isCJKPunct(r) || isTerminal(r) || isJoiner(r) {
		return left + right
	}
	return left + " " + right
}

// closingOf maps an opening bracket or quote to its closing one.
var closingOf = map[rune]rune{'(': ')', '[': ']', '{': '}', '"': '"', '“': '”', '‘': '’', '「': '」', '『': '』', '【': '】', '（': '）', '《': '》'}

// isJoiner reports whether r ties a clause to the next: a comma, colon,
// semicolon or dash.
func isJoiner(r rune) bool {
	switch r {
	case ',', ';', ':', '-', '–', '—', '、', '，', '；', '：', '､':
		return true
	}
	return false
}

// isTerminal reports whether r ends a sentence.
func isTerminal(r rune) bool {
	switch r {
	case '.', '?', '!', '…', '。', '？', '！', '｡':
		return true
	}
	return false
}

func isCJKPunct(r rune) bool { return r >= 0x3000 && r <= 0x303F || r >= 0xFF00 && r <= 0xFF65 }

func startsWithRune(s string, f func(rune) bool) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return s != "" && f(r)
}
