package palace

import (
	"database/sql/driver"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
	"modernc.org/sqlite"

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

// hasCJK reports whether s contains a Chinese or Japanese character.
func hasCJK(s string) bool {
	for _, r := range s {
		if r >= 0x2E80 && isCJK(classOf(r)) { // below U+2E80 nothing is CJK
			return true
		}
	}
	return false
}

// indexText returns s as the keyword index stores it: NFKC-normalised, with
// every Chinese and Japanese run split into words separated by spaces, so
// that unicode61 sees one token per word. Han runs are cut by gse in search
// mode, which also emits the dictionary words inside a long word (数据库
// gives 数据, 据库 and 数据库), so that a query for a part finds the whole.
// Text without CJK characters is only normalised, and never loads gse.
func indexText(s string) (string, error) {
	return segmentText(nfkc(s))
}

// nfkc returns s in Unicode normalisation form NFKC: full-width Latin and
// digits become ASCII, half-width katakana full-width, ligatures letters.
func nfkc(s string) string { return norm.NFKC.String(s) }

// nfkcFunc is the SQL function engram_nfkc(text): text in NFKC, as the
// palace indexes it; with which migration 0015 fills the trigram index
// again from the turns.
func nfkcFunc(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	s, ok := args[0].(string)
	if !ok {
		return nil, fmt.Errorf("engram_nfkc: want text, got %T", args[0])
	}
	return nfkc(s), nil
}

func init() {
	if err := sqlite.RegisterDeterministicScalarFunction("engram_nfkc", 1, nfkcFunc); err != nil {
		panic(err) // registered twice: a programming error
	}
}

// segmentText is indexText for text already in NFKC.
func segmentText(s string) (string, error) {
	if !hasCJK(s) {
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

// cjkGrams returns every Chinese or Japanese character of s and every pair
// of adjacent ones within a run, once each, separated by spaces: the tokens
// of turns_cjk. It returns "" for text without such characters.
func cjkGrams(s string) string {
	if !hasCJK(s) {
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

// term is one word of a query.
type term struct {
	text string // lower-cased, NFKC
	cjk  bool   // Chinese or Japanese
	n    int    // length in characters
}

// queryTerms returns the distinct words of a query that are worth searching
// for: NFKC-normalised and lower-cased, Han runs cut by gse in its accurate
// mode, stopwords dropped, and hiragana runs dropped unless there is nothing
// else. It returns at most maxTerms terms.
func queryTerms(q string) ([]term, error) {
	q = norm.NFKC.String(q)
	var out []term
	seen := make(map[string]bool)
	var hiragana []string
	add := func(w string, cjk bool) bool {
		if w == "" || seen[w] || stopwords[w] {
			return len(out) < maxTerms
		}
		seen[w] = true
		out = append(out, term{text: w, cjk: cjk, n: utf8.RuneCountInString(w)})
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

// matchExpr returns an FTS5 query that matches any of the terms. Each term is
// a quoted string, so nothing a user types is read as FTS5 syntax: quotes are
// doubled, and AND, OR, NOT, NEAR, *, ^, :, -, ( and ) inside quotes are text.
// In practice terms hold only letters and digits; the quoting is the guard.
func matchExpr(terms []term) string {
	var b strings.Builder
	for i, t := range terms {
		if i > 0 {
			b.WriteString(" OR ")
		}
		b.WriteByte('"')
		b.WriteString(strings.ReplaceAll(t.text, `"`, `""`))
		b.WriteByte('"')
	}
	return b.String()
}

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
