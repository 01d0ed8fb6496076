package kwindex

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/engram-dev/engram/internal/textutil"
)

// Character classes that decide how a run of text is split into words.
const (
	classSep      = iota // separates words (space, punctuation, symbols)
	classWord            // a word character of a script that separates words with spaces (Latin, digits, Hangul, ...)
	classHan             // Chinese characters (kanji): words are found by gse
	classHiragana        // kana runs are kept whole: a katakana run is
	classKatakana        // almost always one loanword, a hiragana run a particle or an ending
)

func classOf(r rune) int {
	switch {
	case r < utf8.RuneSelf:
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' {
			return classWord
		}
		return classSep
	}
	switch textutil.ScriptOf(r) {
	case textutil.ScriptHan:
		return classHan
	case textutil.ScriptHiragana:
		return classHiragana
	case textutil.ScriptKatakana:
		return classKatakana
	}
	switch {
	case unicode.IsLetter(r), unicode.IsNumber(r), unicode.Is(unicode.Co, r):
		// The categories FTS5's unicode61 treats as token characters.
		return classWord
	}
	return classSep
}

func isCJK(class int) bool { return class >= classHan }

// run is a maximal stretch of text of one class.
type run struct {
	text  string
	class int
}

// runs splits s into runs of one class each.
func runs(s string) []run {
	var out []run
	start, cur := 0, -1
	for i, r := range s {
		c := classOf(r)
		if c != cur {
			if cur >= 0 {
				out = append(out, run{s[start:i], cur})
			}
			start, cur = i, c
		}
	}
	if cur >= 0 {
		out = append(out, run{s[start:], cur})
	}
	return out
}

// HasCJK reports whether s contains a Chinese or Japanese character.
func HasCJK(s string) bool {
	for _, r := range s {
		if r >= 0x2E80 && isCJK(classOf(r)) { // below U+2E80 nothing is CJK
			return true
		}
	}
	return false
}

// IndexText returns s as the keyword index stores it: NFKC-normalised, with
// every Chinese and Japanese run split into words separated by spaces, so
// that unicode61 sees one token per word. Han runs are cut by gse in search
// mode, which also emits the dictionary words inside a long word (数据库
// gives 数据, 据库 and 数据库), so that a query for a part finds the whole.
// Text without CJK characters is only normalised, and never loads gse.
func IndexText(s string) (string, error) {
	return SegmentText(NFKC(s))
}

// NFKC returns s in Unicode normalisation form NFKC: full-width Latin and
// digits become ASCII, half-width katakana full-width, ligatures letters.
func NFKC(s string) string { return norm.NFKC.String(s) }

// SegmentText is IndexText for text already in NFKC.
func SegmentText(s string) (string, error) {
	if !HasCJK(s) {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s) + len(s)/2)
	for _, r := range runs(s) {
		switch r.class {
		case classHan:
			words, err := cutIndex(r.text)
			if err != nil {
				return "", err
			}
			b.WriteByte(' ')
			b.WriteString(strings.Join(words, " "))
			b.WriteByte(' ')
		case classHiragana, classKatakana:
			b.WriteByte(' ')
			b.WriteString(r.text)
			b.WriteByte(' ')
		default:
			b.WriteString(r.text)
		}
	}
	return b.String(), nil
}

// CJKGrams returns every Chinese or Japanese character of s and every pair
// of adjacent ones within a run, once each, separated by spaces: the tokens
// of turns_cjk. It returns "" for text without such characters.
func CJKGrams(s string) string {
	if !HasCJK(s) {
		return ""
	}
	var b strings.Builder
	seen := make(map[string]bool)
	emit := func(g string) {
		if !seen[g] {
			seen[g] = true
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(g)
		}
	}
	prev := -1 // byte offset of the previous CJK character, -1 after a break
	for i, r := range s {
		if !isCJK(classOf(r)) {
			prev = -1
			continue
		}
		end := i + utf8.RuneLen(r)
		emit(s[i:end])
		if prev >= 0 {
			emit(s[prev:end])
		}
		prev = i
	}
	return b.String()
}

// maxTerms bounds the terms of one query, and with them its cost.
const maxTerms = 32

// Term is one word of a query.
type Term struct {
	Text string // lower-cased, NFKC
	CJK  bool   // Chinese or Japanese
	N    int    // length in characters
}

// QueryTerms returns the distinct words of a query that are worth searching
// for: NFKC-normalised and lower-cased, Han runs cut by gse in its accurate
// mode, stopwords dropped, and hiragana runs dropped unless there is nothing
// else. It returns at most maxTerms terms.
func QueryTerms(q string) ([]Term, error) {
	q = norm.NFKC.String(q)
	var out []Term
	seen := make(map[string]bool)
	var hiragana []string
	add := func(w string, cjk bool) bool {
		if w == "" || seen[w] || stopwords[w] {
			return len(out) < maxTerms
		}
		seen[w] = true
		out = append(out, Term{Text: w, CJK: cjk, N: utf8.RuneCountInString(w)})
		return len(out) < maxTerms
	}
	for _, r := range runs(q) {
		switch r.class {
		case classWord:
			if !add(strings.ToLower(r.text), false) {
				return out, nil
			}
		case classHan:
			words, err := cutQuery(r.text)
			if err != nil {
				return nil, err
			}
			for _, w := range words {
				if !add(w, true) {
					return out, nil
				}
			}
		case classKatakana:
			if !add(r.text, true) {
				return out, nil
			}
		case classHiragana:
			hiragana = append(hiragana, r.text)
		}
	}
	// In a query with other words, hiragana runs are particles and endings
	// (東京の会議はどこですか: の, は, どこですか), noise to search for. A
	// query of hiragana only is searched as it is.
	if len(out) == 0 {
		for _, w := range hiragana {
			if !add(w, true) {
				break
			}
		}
	}
	return out, nil
}

// IsStopword reports whether QueryTerms drops w (lower-cased, NFKC).
func IsStopword(w string) bool { return stopwords[w] }

// stopwords are dropped from queries: they occur in most turns, so they add
// cost (long posting lists to rank) and no signal. The list is short on
// purpose: words such as "say", "use" or "port" carry meaning in a memory
// store. Chinese and Japanese entries are particles, pronouns and question
// words as gse returns them.
var stopwords = func() map[string]bool {
	m := textutil.StopwordSet(textutil.EnglishStopwords,
		// English beyond the core list: more auxiliaries and conjunctions,
		// the pieces FTS5 cuts contractions into, and the words of a
		// request ("please tell me...").
		`mine done might must ought yet else although though also
		s t d ll m re ve don doesn didn isn aren wasn weren wouldn shouldn couldn
		please tell let`,
		// Chinese.
		`的 了 着 过 是 在 和 与 及 或 而 也 就 都 又 还 很 吗 呢 吧 啊 呀 嘛 么
		我 你 您 他 她 它 我们 你们 他们 她们 咱们 这 那 这个 那个 这些 那些
		什么 怎么 怎样 如何 为什么 哪 哪里 哪个 谁 是否 有没有 关于 对于 一个`,
		// Japanese.
		`は が を に で の と も へ や か ね よ な から まで より
		です ます でした ました ですか ますか だ である した して する いる ある
		これ それ あれ どれ この その あの どの ここ そこ どこ 何 なに いつ 誰 だれ どう について`)
	delete(m, "now") // kept: "what do we use now" asks about the present
	return m
}()
