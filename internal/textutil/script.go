package textutil

import (
	"unicode"
	"unicode/utf8"
)

// Script is the writing system of a character, as far as cutting text into
// words cares: the scripts written without spaces between words (Han, kana)
// or whose words engram cuts into character bigrams (Hangul), and the rest.
type Script uint8

// Scripts.
const (
	ScriptOther    Script = iota // Latin, digits, punctuation, every other script
	ScriptHan                    // Chinese characters, kanji
	ScriptHiragana               // Japanese hiragana
	ScriptKatakana               // Japanese katakana, with the prolonged sound mark ー
	ScriptHangul                 // Korean
)

// ScriptOf returns the script of r. The prolonged sound mark ー is Common in
// Unicode, not Katakana, but it only ever lengthens a katakana word.
func ScriptOf(r rune) Script {
	if r < 0x1100 { // below the first Hangul jamo: none of the four
		return ScriptOther
	}
	switch {
	case unicode.Is(unicode.Han, r):
		return ScriptHan
	case unicode.Is(unicode.Hiragana, r):
		return ScriptHiragana
	case unicode.Is(unicode.Katakana, r), r == 'ー':
		return ScriptKatakana
	case unicode.Is(unicode.Hangul, r):
		return ScriptHangul
	}
	return ScriptOther
}

// IsCJK reports whether r is Chinese, Japanese or Korean script.
func IsCJK(r rune) bool { return ScriptOf(r) != ScriptOther }

// CutBytes returns the longest prefix of s of at most n bytes that ends on
// a character boundary.
func CutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
