package kwindex

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// An index ranks exactly as its FTS5 table does, so it cuts text into the
// tokens SQLite's FTS5 makes of it with
// tokenize = 'porter unicode61 remove_diacritics 2': unicode61 splits the
// text at every character that is not a letter, a number or a private-use
// character (a combining diacritic inside a word is part of it), folds case
// and strips diacritics; porter then stems each token of 3 to 64 bytes with
// the Porter algorithm as fts5_tokenize.c implements it. The palace's
// TestFTSTokens compares both on thousands of words.

// Tokens calls emit with each token of s, in order, as FTS5 indexes s.
func Tokens(s string, emit func(tok string)) {
	TokenBytes(s, func(tok []byte) { emit(string(tok)) })
}

// TokenBytes is Tokens without a string a token: tok is valid until
// emit returns.
func TokenBytes(s string, emit func(tok []byte)) {
	buf := make([]byte, 0, 64)
	in := false
	flush := func() {
		if in && len(buf) > 0 {
			if cap(buf) == len(buf) {
				buf = append(buf, 0)[:len(buf)]
			}
			emit(porterStem(buf))
		}
		buf, in = buf[:0], false
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
				buf, in = append(buf, c), true
			case 'A' <= c && c <= 'Z':
				buf, in = append(buf, c+'a'-'A'), true
			default:
				flush()
			}
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch {
		case isTokenRune(r):
			buf, in = appendFolded(buf, r), true
		case in && isDiacritic(r):
			// part of the token, folded away
		default:
			flush()
		}
	}
	flush()
}

// isTokenRune reports whether unicode61 (categories L*, N*, Co) counts r
// as a token character.
func isTokenRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r)
}

// isDiacritic reports whether r is a combining diacritical mark, which
// continues a token and is dropped from it.
func isDiacritic(r rune) bool { return 0x300 <= r && r <= 0x36f }

// appendFolded appends r lower-cased and without its diacritics (the base
// letter of its canonical decomposition, when that is a Latin letter
// followed by combining marks only).
func appendFolded(buf []byte, r rune) []byte {
	r = unicode.ToLower(r)
	if r >= 0xc0 && r < 0x2000 {
		var tmp [utf8.UTFMax]byte
		d := norm.NFD.Bytes(tmp[:utf8.EncodeRune(tmp[:], r)])
		if len(d) > 1 && d[0] < utf8.RuneSelf {
			rest := d[1:]
			marks := true
			for len(rest) > 0 {
				m, n := utf8.DecodeRune(rest)
				if !unicode.Is(unicode.Mn, m) {
					marks = false
					break
				}
				rest = rest[n:]
			}
			if marks {
				return append(buf, d[0])
			}
		}
	}
	return utf8.AppendRune(buf, r)
}

// porterStem is fts5_tokenize.c's Porter stemmer, in place: b needs room
// for one byte more. Tokens shorter than 3 or longer than 64 bytes are kept
// as they are.
func porterStem(b []byte) []byte {
	if len(b) < 3 || len(b) > 64 {
		return b
	}

	b = porterStep1A(b)
	var cut bool
	if b, cut = porterStep1B(b); cut {
		if nb, ok := porterStep1B2(b); ok {
			b = nb
		} else {
			c := b[len(b)-1]
			switch {
			case len(b) >= 2 && !isVowel(c, false) && c != 'l' && c != 's' && c != 'z' && c == b[len(b)-2]:
				b = b[:len(b)-1]
			case porterMEq1(b) && porterOStar(b):
				b = append(b, 'e')
			}
		}
	}
	// Step 1C.
	if len(b) > 0 && b[len(b)-1] == 'y' && porterHasVowel(b[:len(b)-1]) {
		b[len(b)-1] = 'i'
	}
	b = porterRules(b, porterStep2, porterMGt0)
	b = porterRules(b, porterStep3, porterMGt0)
	b = porterRules(b, porterStep4, porterMGt1)
	// Step 5a.
	if len(b) > 0 && b[len(b)-1] == 'e' {
		stem := b[:len(b)-1]
		if porterMGt1(stem) || (porterMEq1(stem) && !porterOStar(stem)) {
			b = stem
		}
	}
	// Step 5b.
	if len(b) > 1 && b[len(b)-1] == 'l' && b[len(b)-2] == 'l' && porterMGt1(b[:len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func isVowel(c byte, yIsVowel bool) bool {
	return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' || (yIsVowel && c == 'y')
}

// porterGobbleVC returns the length of the first vowels-then-consonants
// run of stem (1 + the index of the first consonant after a vowel), 0 if
// there is none.
func porterGobbleVC(stem []byte, prevCons bool) int {
	cons := prevCons
	i := 0
	for ; i < len(stem); i++ {
		cons = !isVowel(stem[i], cons)
		if !cons {
			break
		}
	}
	for i++; i < len(stem); i++ {
		cons = !isVowel(stem[i], cons)
		if cons {
			return i + 1
		}
	}
	return 0
}

// porterMGt0 is the condition m > 0.
func porterMGt0(stem []byte) bool { return porterGobbleVC(stem, false) != 0 }

// porterMGt1 is m > 1.
func porterMGt1(stem []byte) bool {
	n := porterGobbleVC(stem, false)
	return n != 0 && porterGobbleVC(stem[n:], true) != 0
}

// porterMEq1 is m = 1.
func porterMEq1(stem []byte) bool {
	n := porterGobbleVC(stem, false)
	return n != 0 && porterGobbleVC(stem[n:], true) == 0
}

// porterOStar is *o: the stem ends consonant-vowel-consonant, the last not
// w, x or y.
func porterOStar(stem []byte) bool {
	if len(stem) == 0 {
		return false
	}
	switch stem[len(stem)-1] {
	case 'w', 'x', 'y':
		return false
	}
	mask, cons := 0, false
	for _, c := range stem {
		cons = !isVowel(c, cons)
		mask <<= 1
		if cons {
			mask++
		}
	}
	return mask&7 == 5
}

// porterHasVowel is *v*.
func porterHasVowel(stem []byte) bool {
	for i, c := range stem {
		if isVowel(c, i > 0) {
			return true
		}
	}
	return false
}

func porterStep1A(b []byte) []byte {
	n := len(b)
	if b[n-1] != 's' {
		return b
	}
	switch {
	case n >= 2 && b[n-2] == 'e':
		if (n > 4 && b[n-4] == 's' && b[n-3] == 's') || (n > 3 && b[n-3] == 'i') {
			return b[:n-2]
		}
		return b[:n-1]
	case n >= 2 && b[n-2] == 's':
		return b
	}
	return b[:n-1]
}

// porterStep1B removes eed (to ee, m > 0), ed and ing (*v*); it reports
// whether ed or ing went.
func porterStep1B(b []byte) ([]byte, bool) {
	n := len(b)
	switch {
	case hasSuffix(b, "eed"):
		if porterMGt0(b[:n-3]) {
			return b[:n-1], false
		}
	case hasSuffix(b, "ed"):
		if porterHasVowel(b[:n-2]) {
			return b[:n-2], true
		}
	case hasSuffix(b, "ing"):
		if porterHasVowel(b[:n-3]) {
			return b[:n-3], true
		}
	}
	return b, false
}

// porterStep1B2 turns at, bl and iz into ate, ble and ize.
func porterStep1B2(b []byte) ([]byte, bool) {
	for _, s := range []string{"at", "bl", "iz"} {
		if hasSuffix(b, s) {
			return append(b, 'e'), true
		}
	}
	return b, false
}

// hasSuffix reports whether b ends with s and is longer than it, as the
// rules of fts5_tokenize.c ask (nBuf > len).
func hasSuffix(b []byte, s string) bool {
	return len(b) > len(s) && string(b[len(b)-len(s):]) == s
}

type porterRule struct{ suffix, repl string }

// The rules of steps 2 to 4, grouped as fts5_tokenize.c switches on the
// next-to-last letter: within a group the first suffix that matches
// decides, whether its condition holds or not.
var (
	porterStep2 = porterGroups([]porterRule{
		{"ational", "ate"}, {"tional", "tion"},
		{"enci", "ence"}, {"anci", "ance"},
		{"izer", "ize"},
		{"logi", "log"},
		{"bli", "ble"}, {"alli", "al"}, {"entli", "ent"}, {"eli", "e"}, {"ousli", "ous"},
		{"ization", "ize"}, {"ation", "ate"}, {"ator", "ate"},
		{"alism", "al"}, {"iveness", "ive"}, {"fulness", "ful"}, {"ousness", "ous"},
		{"aliti", "al"}, {"iviti", "ive"}, {"biliti", "ble"},
	})
	porterStep3 = porterGroups([]porterRule{
		{"icate", "ic"}, {"ative", ""}, {"alize", "al"}, {"iciti", "ic"},
		{"ical", "ic"}, {"ful", ""}, {"ness", ""},
	})
	porterStep4 = porterGroups([]porterRule{
		{"al", ""}, {"ance", ""}, {"ence", ""}, {"er", ""}, {"ic", ""},
		{"able", ""}, {"ible", ""}, {"ant", ""}, {"ement", ""}, {"ment", ""}, {"ent", ""},
		{"ion", ""}, {"ou", ""}, {"ism", ""}, {"ate", ""}, {"iti", ""}, {"ous", ""},
		{"ive", ""}, {"ize", ""},
	})
)

// porterGroups indexes rules by their suffix's next-to-last letter, in
// order.
func porterGroups(rules []porterRule) map[byte][]porterRule {
	m := make(map[byte][]porterRule)
	for _, r := range rules {
		c := r.suffix[len(r.suffix)-2]
		m[c] = append(m[c], r)
	}
	return m
}

// porterRules applies the first rule of groups whose suffix b ends with,
// if cond holds for the stem before it ("ion" asks m > 1 and a stem ending
// in s or t).
func porterRules(b []byte, groups map[byte][]porterRule, cond func([]byte) bool) []byte {
	if len(b) < 2 {
		return b
	}
	for _, r := range groups[b[len(b)-2]] {
		if !hasSuffix(b, r.suffix) {
			continue
		}
		stem := b[:len(b)-len(r.suffix)]
		ok := cond(stem)
		if r.suffix == "ion" {
			last := stem[len(stem)-1]
			ok = (last == 's' || last == 't') && porterMGt1(stem)
		}
		if ok {
			return append(stem, r.repl...)
		}
		return b
	}
	return b
}

// QueryTokens is the token of each of a query's words, ok false when a
// word is not one token (a phrase, which needs positions that no index
// keeps: FTS5 answers it).
func QueryTokens(words []string) (toks []string, ok bool) {
	toks = make([]string, len(words))
	for i, w := range words {
		n := 0
		TokenBytes(w, func(tok []byte) {
			toks[i] = string(tok)
			n++
		})
		if n != 1 {
			return nil, false
		}
	}
	return toks, true
}
