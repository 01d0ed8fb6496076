package trigger

import (
	"fmt"
	"slices"
	"unicode"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/qnorm"
	"github.com/engram-dev/engram/internal/textutil"
)

// Defaults returns the phrases that make an auto recall run deep, in
// English, Chinese and Japanese. They are requests to try harder ("think
// carefully", "认真回忆") or questions about a shared past ("do you
// remember", "覚えていますか"), chosen so that ordinary statements about
// remembering ("I remember the meeting", "我记得", "覚えてる。") do not
// fire: a trigger costs a slower search and takes its words out of the
// search text, so a false one hurts more than a missed one.
//
// Japanese phrases that end in a verb ending must end the clause (see
// Matcher); the plain "覚えてる" is listed as "覚えてる?" because
// without the question mark it is usually the statement "I remember".
//
// Imperatives such as "think carefully" or "dig up" still fire inside a
// statement ("we should think carefully about it"): a phrase list cannot
// tell the two apart, and these are too useful as requests to drop.
//
// A fresh slice is returned on each call, so callers may extend it.
func Defaults() []string {
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

// Matcher finds the trigger phrase in a query. Phrases and queries
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
// A Matcher is immutable and safe for concurrent use.
type Matcher struct {
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

// NewMatcher compiles phrases. Errors are EINVALID, naming the
// offending phrase's index as field "triggers[i]", for a phrase with no
// letter or digit in it (blank or punctuation only), which would match
// everywhere or nowhere. Later duplicates of a phrase are ignored.
func NewMatcher(phrases []string) (*Matcher, error) {
	m := &Matcher{byFirst: make(map[rune][]int)}
	seen := make(map[string]bool, len(phrases))
	for i, p := range phrases {
		key := qnorm.TrimSpace(qnorm.Normalize(p, true).R)
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
			wordStart:  qnorm.IsSpacedWord(first),
			wordEnd:    qnorm.IsSpacedWord(last),
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
func (m *Matcher) Match(query string) (phrase, rest string, ok bool) {
	t := qnorm.Normalize(query, true)
	best, bestLen, lo, hi := -1, 0, 0, 0
	for i, r := range t.R {
		for _, k := range m.byFirst[r] {
			tr := &m.triggers[k]
			if len(tr.key) <= bestLen {
				continue
			}
			j := i + len(tr.key)
			if j > len(t.R) || !slices.Equal(t.R[i:j], tr.key) {
				continue
			}
			if tr.wordStart && i > 0 && qnorm.IsSpacedWord(t.R[i-1]) || tr.wordEnd && j < len(t.R) && qnorm.IsSpacedWord(t.R[j]) {
				continue
			}
			if tr.kanaEnding {
				if j, ok = clauseEnd(t.R, j); !ok {
					continue
				}
			}
			best, bestLen, lo, hi = k, len(tr.key), t.Lo[i], t.Hi[j-1]
		}
	}
	if best < 0 {
		return "", query, false
	}
	return m.triggers[best].phrase, qnorm.Cut(query, lo, hi), true
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
	if j == len(r) || !qnorm.IsCJK(r[j]) {
		return j, true
	}
	for _, tail := range kanaTails {
		if e := j + len(tail); e <= len(r) && slices.Equal(r[j:e], tail) && (e == len(r) || !qnorm.IsCJK(r[e])) {
			return e, true
		}
	}
	return 0, false
}
