package engram

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Pieces finds what a text made of words can keep of a redacted span once
// the span whole is gone: a scene's title is a list of terms ("Grimblethorp"
// of "Grimblethorp-11", the bigram 偃月 of 青龙偃月刀), and a summary
// clipped to its length can end inside a span ("the code is Grimble…").
// Spans finds none of these; a redaction must leave none of them either.
//
// A word here is a run of letters and digits; a run of CJK characters is
// read as its character pairs, as the keyword indexes and the scene job
// read it. Words of the marker are never pieces, so that replacing twice
// changes nothing.
type Pieces struct {
	words map[string]bool // the spans' words, lower-cased
	pairs map[string]bool // the character pairs of the spans' CJK runs
	spans []string        // the spans lower-cased, for a clipped tail
	skip  map[string]bool // the marker's words
}

// clipMark ends a text cut short (a scene's title or summary).
const clipMark = "…"

// NewPieces returns the pieces of spans; marker is what replaces them.
func NewPieces(spans []string, marker string) *Pieces {
	p := &Pieces{words: map[string]bool{}, pairs: map[string]bool{}, skip: map[string]bool{}}
	eachWord(strings.ToLower(marker), func(w string, _ int, cjk bool) {
		if !cjk {
			p.skip[w] = true
		}
	})
	for _, sp := range spans {
		sp = strings.ToLower(sp)
		if sp == "" {
			continue
		}
		p.spans = append(p.spans, sp)
		eachWord(sp, func(w string, _ int, cjk bool) {
			if !cjk {
				p.words[w] = true
				return
			}
			rs := []rune(w)
			for i := 0; i+1 < len(rs); i++ {
				p.pairs[string(rs[i:i+2])] = true
			}
		})
	}
	return p
}

// Holds reports whether s holds a piece of a span.
func (p *Pieces) Holds(s string) bool { return p.Replace(s, "\x00") != s }

// Replace returns s with marker in place of every word of a span, every
// run of CJK characters whose pairs are all a span's, and a clipped tail
// that begins a span.
func (p *Pieces) Replace(s, marker string) string {
	if len(p.spans) == 0 {
		return s
	}
	s = p.clippedTail(s, marker)
	lower := strings.ToLower(s)
	if len(lower) != len(s) {
		lower = "" // a case change moved the bytes: compare word by word
	}
	var b strings.Builder
	done := 0
	eachWord(s, func(w string, at int, cjk bool) {
		lw := strings.ToLower(w)
		if lower != "" {
			lw = lower[at : at+len(w)]
		}
		if !cjk {
			if p.words[lw] && !p.skip[lw] {
				b.WriteString(s[done:at])
				b.WriteString(marker)
				done = at + len(w)
			}
			return
		}
		// The longest stretches of CJK whose every pair is a span's.
		rs := []rune(w)
		off := at
		for i := 0; i < len(rs); {
			j := i
			for j+1 < len(rs) && p.pairs[string(rs[j:j+2])] {
				j++
			}
			n := len(string(rs[i : j+1]))
			if j > i {
				b.WriteString(s[done:off])
				b.WriteString(marker)
				done = off + n
			}
			off += n
			i = j + 1
		}
	})
	if done == 0 {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
}

// clippedTail replaces the end of a text cut short within a span: the
// longest tail before the clip mark that begins a span, starting a word
// (or anywhere, for a span that starts with CJK).
func (p *Pieces) clippedTail(s, marker string) string {
	body, ok := strings.CutSuffix(s, clipMark)
	if !ok {
		return s
	}
	lower := strings.ToLower(body)
	if len(lower) != len(body) {
		return s
	}
	best := -1
	for _, sp := range p.spans {
		first, _ := utf8.DecodeRuneInString(sp)
		for k := len(sp) - 1; k > 0; k-- {
			if !utf8.RuneStart(sp[k]) || !strings.HasSuffix(lower, sp[:k]) {
				continue
			}
			at := len(lower) - k
			prev, _ := utf8.DecodeLastRuneInString(lower[:at])
			if at == 0 || isCJK(first) || !isWordRune(prev) || !isWordRune(first) {
				best = max(best, k)
				break
			}
		}
	}
	if best <= 0 {
		return s
	}
	return body[:len(body)-best] + marker + clipMark
}

// eachWord calls fn with every run of letters and digits in s, a run of
// CJK characters apart from the others, and where it starts.
func eachWord(s string, fn func(w string, at int, cjk bool)) {
	start, kind := 0, 0 // kind: 0 none, 1 word, 2 CJK
	for i, r := range s {
		k := 0
		switch {
		case isCJK(r):
			k = 2
		case isWordRune(r):
			k = 1
		}
		if k != kind {
			if kind != 0 {
				fn(s[start:i], start, kind == 2)
			}
			start, kind = i, k
		}
	}
	if kind != 0 {
		fn(s[start:], start, kind == 2)
	}
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

func isCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}
