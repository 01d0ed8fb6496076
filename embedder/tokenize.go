package embedder

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/engram-dev/engram/internal/textutil"
)

// tokenKind says how a token is turned into features.
type tokenKind uint8

const (
	// tokWord is a run of letters and digits of a script that separates
	// words with spaces (or of one that writes no spaces at all, such as
	// Thai, whose runs are then matched by their character n-grams).
	tokWord tokenKind = iota + 1
	// tokCJK is a run of Chinese, Japanese or Korean characters, which have
	// no reliable word boundaries in plain text: matched by characters and
	// character bigrams.
	tokCJK
	// tokSymbol is one symbol character, an emoji say.
	tokSymbol
)

// token is a token of the normalised text.
type token struct {
	b          []byte // the token's bytes, in NFKC and lower case
	start, end int    // where b lies in scratch.text while tokenizing
	kind       tokenKind
	afterApos  bool // a word that follows word + apostrophe ("s" in "ana's")
}

// rune classes.
const (
	clSep = iota
	clWord
	clCJK
	clSymbol
	clMark // a combining mark: belongs to the run before it
	clApos // an apostrophe: joins English clitics to their word
)

// classify returns the class of r, already in lower case.
func classify(r rune) int {
	if r < utf8.RuneSelf {
		switch {
		case 'a' <= r && r <= 'z', '0' <= r && r <= '9':
			return clWord
		case r == '\'':
			return clApos
		}
		return clSep
	}
	switch {
	case r == '\u2019': // right single quotation mark, the usual typed apostrophe
		return clApos
	case textutil.IsCJK(r):
		return clCJK
	case unicode.IsLetter(r), unicode.IsNumber(r):
		return clWord
	case unicode.In(r, unicode.Mn, unicode.Mc, unicode.Me):
		return clMark
	case unicode.Is(unicode.So, r):
		return clSymbol
	}
	return clSep
}

// tokenize splits text, after NFKC normalisation and lower-casing, into
// s.toks, whose bytes live in s.text.
func (s *scratch) tokenize(text string) {
	text = norm.NFKC.String(text) // no copy when text is already in NFKC
	s.text, s.toks = s.text[:0], s.toks[:0]
	open := clSep // the class of the open token, clSep if none
	apos := false // the last rune was an apostrophe right after a word
	closeTok := func() {
		if open != clSep {
			s.toks[len(s.toks)-1].end = len(s.text)
			open = clSep
		}
	}
	for _, r := range text {
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		} else if r >= utf8.RuneSelf {
			r = unicode.ToLower(r)
		}
		c := classify(r)
		if c == clMark {
			if open == clWord || open == clCJK {
				s.text = utf8.AppendRune(s.text, r)
				continue
			}
			c = clSep
		}
		if c != open || c == clSymbol {
			closeTok()
		}
		switch c {
		case clWord, clCJK, clSymbol:
			if open == clSep {
				s.toks = append(s.toks, token{start: len(s.text), kind: tokenKind(c), afterApos: apos && c == clWord})
				open = c
			}
			s.text = utf8.AppendRune(s.text, r)
			apos = false
		case clApos:
			apos = len(s.toks) > 0 && s.toks[len(s.toks)-1].kind == tokWord &&
				s.toks[len(s.toks)-1].end == len(s.text) && !apos
		default:
			apos = false
		}
	}
	closeTok()
	for i := range s.toks {
		t := &s.toks[i]
		t.b = s.text[t.start:t.end:t.end]
	}
	s.clitics()
}

// Replacement words for English contractions.
var (
	wordNot   = []byte("not")
	wordCan   = []byte("can")
	wordWill  = []byte("will")
	wordShall = []byte("shall")
)

// clitics folds English contractions into the words they stand for, so that
// "don't" matches "do not" and "Ana's" matches "Ana": the suffixes 's, 'm,
// 're, 've, 'll and 'd are dropped, and n't becomes "not". Other apostrophes
// separate words ("o'neill", "l'homme").
func (s *scratch) clitics() {
	out := s.toks[:0]
	for i := range s.toks {
		t := s.toks[i]
		if t.afterApos && len(out) > 0 && out[len(out)-1].kind == tokWord {
			prev := &out[len(out)-1]
			switch string(t.b) {
			case "s", "m", "re", "ve", "ll", "d":
				continue
			case "t":
				if n := len(prev.b); n > 1 && prev.b[n-1] == 'n' {
					prev.b = prev.b[:n-1]
					switch string(prev.b) {
					case "ca":
						prev.b = wordCan
					case "wo":
						prev.b = wordWill
					case "sha":
						prev.b = wordShall
					}
					t.b = wordNot
				}
			}
		}
		out = append(out, t)
	}
	s.toks = out
}
