package querytext

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/textutil"
)

// DefaultTriggers returns the phrases that make an auto recall run deep, in
// English, Chinese and Japanese. They are requests to try harder ("think
// carefully", "认真回忆") or questions about a shared past ("do you
// remember", "覚えていますか"), chosen so that ordinary statements about
// remembering ("I remember the meeting", "我记得", "覚えてる。") do not
// fire: a trigger costs a slower search and takes its words out of the
// search text, so a false one hurts more than a missed one.
//
// Japanese phrases that end in a verb ending must end the clause (see
// TriggerMatcher); the plain "覚えてる" is listed as "覚えてる?" because
// without the question mark it is usually the statement "I remember".
//
// Imperatives such as "think carefully" or "dig up" still fire inside a
// statement ("we should think carefully about it"): a phrase list cannot
// tell the two apart, and these are too useful as requests to drop.
//
// A fresh slice is returned on each call, so callers may extend it.
func DefaultTriggers() []string {
	return []string{
		// English.
		"recall carefully", "think carefully", "think hard", "think back",
		"do you remember", "do you remember when", "don't you remember",
		"do you recall", "can you remember", "can you recall",
		"try to remember", "try to recall", "remember when",
		"what did we decide", "what did we agree", "what did we agree on",
		"what did we settle on", "what was decided",
		"deep search", "search deeply", "search thoroughly",
		"search your memory", "dig up", "dig deep",
		// Chinese, simplified then traditional.
		"认真回忆", "仔细回忆", "好好回忆", "回忆一下",
		"深度检索", "深度搜索", "深入检索", "深入搜索",
		"还记得吗", "你还记得", "你还记得吗", "记不记得", "记得吗",
		"我们决定了什么", "我们当时决定了什么", "我们约定了什么", "我们商定了什么",
		"認真回憶", "仔細回憶", "深度檢索", "還記得嗎", "你還記得", "記不記得", "我們決定了什麼",
		// Japanese.
		"覚えてる?", "覚えてるか", "覚えてるかな", "覚えてますか", "覚えていますか", "覚えていませんか",
		"覚えてない?", "思い出して", "思い出せる?", "思い出せますか",
		"詳しく調べて", "深く検索", "何を決めたっけ", "何を決めましたっけ",
	}
}

// TriggerMatcher finds the trigger phrase in a query. Phrases and queries
// are compared after NFKC normalisation (full-width letters, half-width
// kana), lower-casing, folding runs of white space into one and dropping
// apostrophes ("don't", "don’t" and "dont" are one phrase).
//
// A phrase in a script that separates words with spaces matches whole words
// only: "do you remember" is not found in "undo you remembering". Chinese
// and Japanese have no spaces, so their phrases match as substrings, with
// one guard: a phrase ending in hiragana (an inflected ending such as
// "思い出して") must end the clause, alone or followed by a sentence-final
// particle or request ("か", "ね", "ください"), so that "思い出していた"
// ("I was remembering") does not fire. The particle is removed with the
// phrase.
//
// A TriggerMatcher is immutable and safe for concurrent use.
type TriggerMatcher struct {
	triggers []triggerPhrase
	byFirst  map[rune][]int // first normalised rune -> indexes into triggers
}

// triggerPhrase is one configured phrase, normalised.
type triggerPhrase struct {
	phrase     string // as configured, reported back to the caller
	key        []rune
	wordStart  bool // the key starts with a letter of a spaced script: needs a word boundary before
	wordEnd    bool // the same at its end
	kanaEnding bool // the key ends in hiragana: must end a clause
}

// NewTriggerMatcher compiles phrases. Errors are EINVALID, naming the
// offending phrase's index as field "triggers[i]", for a phrase with no
// letter or digit in it (blank or punctuation only), which would match
// everywhere or nowhere. Later duplicates of a phrase are ignored.
func NewTriggerMatcher(phrases []string) (*TriggerMatcher, error) {
	m := &TriggerMatcher{byFirst: make(map[rune][]int)}
	seen := make(map[string]bool, len(phrases))
	for i, p := range phrases {
		key := trimSpaceRunes(normQuery(p, true).r)
		if !slices.ContainsFunc(key, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
			return nil, engram.FieldError(fmt.Sprintf("triggers[%d]", i), "trigger phrase %q has no letter or digit", p)
		}
		if seen[string(key)] {
			continue
		}
		seen[string(key)] = true
		first, last := key[0], key[len(key)-1]
		m.byFirst[first] = append(m.byFirst[first], len(m.triggers))
		m.triggers = append(m.triggers, triggerPhrase{
			phrase:     p,
			key:        key,
			wordStart:  isSpacedWord(first),
			wordEnd:    isSpacedWord(last),
			kanaEnding: textutil.ScriptOf(last) == textutil.ScriptHiragana,
		})
	}
	return m, nil
}

// Match finds the trigger phrase in query. When several match, the longest
// phrase wins, then the leftmost, so "do you remember when" beats
// "remember when". It returns the phrase as configured and rest, the query
// without the matched span, tidied where it was cut: "Do you remember,
// what port we chose?" gives "what port we chose?". Rest may be empty when
// the query held nothing but the phrase. Without a match, rest is query.
func (m *TriggerMatcher) Match(query string) (phrase, rest string, ok bool) {
	t := normQuery(query, true)
	best, bestLen, lo, hi := -1, 0, 0, 0
	for i, r := range t.r {
		for _, k := range m.byFirst[r] {
			tr := &m.triggers[k]
			if len(tr.key) <= bestLen {
				continue
			}
			j := i + len(tr.key)
			if j > len(t.r) || !slices.Equal(t.r[i:j], tr.key) {
				continue
			}
			if tr.wordStart && i > 0 && isSpacedWord(t.r[i-1]) || tr.wordEnd && j < len(t.r) && isSpacedWord(t.r[j]) {
				continue
			}
			if tr.kanaEnding {
				if j, ok = clauseEnd(t.r, j); !ok {
					continue
				}
			}
			best, bestLen, lo, hi = k, len(tr.key), t.lo[i], t.hi[j-1]
		}
	}
	if best < 0 {
		return "", query, false
	}
	return m.triggers[best].phrase, cutSpan(query, lo, hi), true
}

// kanaTails are what may follow a phrase ending in hiragana and still leave
// it a question or a request: sentence-final particles and the polite
// request forms. Longest first.
var kanaTails = func() [][]rune {
	tails := []string{"みてください", "くれませんか", "ください", "くれない", "くれる", "ほしい",
		"ごらん", "かな", "かい", "のか", "よね", "っけ", "みて", "くれ", "か", "の", "ね"}
	out := make([][]rune, len(tails))
	for i, s := range tails {
		out[i] = []rune(s)
	}
	return out
}()

// clauseEnd reports whether the clause ends at r[j], directly or after one
// of kanaTails, and returns where the match, tail included, ends.
func clauseEnd(r []rune, j int) (int, bool) {
	if j == len(r) || !isCJKRune(r[j]) {
		return j, true
	}
	for _, tail := range kanaTails {
		if e := j + len(tail); e <= len(r) && slices.Equal(r[j:e], tail) && (e == len(r) || !isCJKRune(r[e])) {
			return e, true
		}
	}
	return 0, false
}

// qtext is a query normalised for matching phrases and expressions, each
// rune knowing the byte span of the original it came from, so that a match
// found in the normalised form cuts the original.
type qtext struct {
	r      []rune // NFKC, lower case, white space runs as one ' '
	upper  []bool // the rune was upper case before lowering
	lo, hi []int  // byte span of the original that produced r[i]
	key    [16]byte
}

// normQuery normalises s: NFKC, lower case, white space runs folded into one
// space and dropped between two CJK characters (which are not spaced), and
// format characters (zero-width spaces) removed. dropApos also removes
// apostrophes, so that "don't" and "dont" compare equal.
func normQuery(s string, dropApos bool) *qtext {
	n := utf8.RuneCountInString(s)
	t := &qtext{r: make([]rune, 0, n), upper: make([]bool, 0, n), lo: make([]int, 0, n), hi: make([]int, 0, n)}
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
				if k := len(t.r) - 1; k >= 0 && t.r[k] == ' ' {
					t.hi[k] = end
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
			t.r = append(t.r, unicode.ToLower(r))
			t.upper = append(t.upper, unicode.IsUpper(r))
			t.lo = append(t.lo, start)
			t.hi = append(t.hi, end)
		}
	}
	// Drop spaces between CJK characters: "认真 回忆" is "认真回忆".
	w := 0
	for i, r := range t.r {
		if r == ' ' && i > 0 && i+1 < len(t.r) && isCJKRune(t.r[i-1]) && isCJKRune(t.r[i+1]) {
			continue
		}
		t.r[w], t.upper[w], t.lo[w], t.hi[w] = r, t.upper[i], t.lo[i], t.hi[i]
		w++
	}
	t.r, t.upper, t.lo, t.hi = t.r[:w], t.upper[:w], t.lo[:w], t.hi[:w]
	return t
}

func trimSpaceRunes(r []rune) []rune {
	for len(r) > 0 && r[0] == ' ' {
		r = r[1:]
	}
	for len(r) > 0 && r[len(r)-1] == ' ' {
		r = r[:len(r)-1]
	}
	return r
}

// isCJKRune reports whether r is Chinese or Japanese (or Korean) script,
// which is matched without word boundaries.
func isCJKRune(r rune) bool { return textutil.IsCJK(r) }

// isSpacedWord reports whether r is part of a word in a script that
// separates words with spaces, so that a phrase must not start or end next
// to it.
func isSpacedWord(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_'
	}
	return (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || r == '_') && !isCJKRune(r)
}

// cutSpan returns s without s[lo:hi], tidied at the seam: white space
// around the cut folds into one space (none next to CJK), a comma-like mark
// that tied the removed words to the sentence goes with them, and text that
// is left starting with punctuation loses it. "What port did we choose, do
// you remember?" loses "do you remember" and becomes "What port did we
// choose?".
func cutSpan(s string, lo, hi int) string {
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
	if isCJKRune(l) || isCJKRune(r) || isCJKPunct(l) || isCJKPunct(r) || isTerminal(r) || isJoiner(r) {
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
