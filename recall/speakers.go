package recall

import (
	"slices"
	"strings"
	"unicode"
)

// Who said it. A question about a named person ("What are Kate's hobbies?",
// "When did elise go skiing?") is mostly answered by that person's own
// turns, and people do not say their own name: the name in the question
// matches the other speaker's greetings by keyword, not the answer. The
// deep path therefore gives a candidate whose speaker the query names a
// signal of its own.
//
// Real chats name people loosely: lower case ("elise"), a possessive
// ("Kate's"), a first name of a full one ("Fahim" for "Fahim Khan") and
// spellings that vary ("Muhammad", "Mohamed" and "Muhhamed" are one
// person). A query word names a speaker when it equals a word of the
// speaker's name ignoring case, or, when the query writes it with a capital
// (as a name, so "else" never stands for "Elise") and both words have four
// letters or more and start alike, when the two differ by one edit or share
// their consonant skeleton (the first letter, then the consonants with
// doubles collapsed). The skeleton is loose on purpose ("Mahmoud" and
// "Muhammad" share one): it only chooses among the speakers of the
// candidates, and a wrong choice costs a weight, never a filter.
// Names in scripts written without spaces (Chinese, Japanese) are matched
// as a substring of the query.

// minFuzzyName is the shortest word matched by spelling variant: shorter
// words ("Jon", "Emi") are too close to common words to be matched loosely.
const minFuzzyName = 4

// namedSpeakers returns the speakers (lower case, as speakerOf names them)
// of cands that the query names, or that also holds (the lower-case names
// of people the query names otherwise: by an alias the graph knows). It is
// empty when the query names none of them or names every one (then the
// signal tells nothing apart).
func namedSpeakers(query string, cands []*candidate, also ...string) map[string]bool {
	qwords := words(query)
	lower := strings.ToLower(query)
	seen := map[string]bool{}
	named := map[string]bool{}
	for _, c := range cands {
		who := speakerOf(c.turn)
		if seen[who] {
			continue
		}
		seen[who] = true
		if namesSpeaker(qwords, lower, who) || slices.Contains(also, who) {
			named[who] = true
		}
	}
	if len(named) == len(seen) {
		return nil
	}
	return named
}

// namesSpeaker reports whether the query (its words and its lower-case
// text) names the speaker who.
func namesSpeaker(qwords []string, lowerQuery, who string) bool {
	if who == "" {
		return false
	}
	if unspaced(who) {
		return strings.Contains(lowerQuery, who)
	}
	for _, n := range words(who) {
		for _, q := range qwords {
			if sameName(q, strings.ToLower(n)) {
				return true
			}
		}
	}
	return false
}

// words splits s into words of letters and digits; an apostrophe ends a
// word, so "Kate's" gives "Kate" and "s".
func words(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// unspaced reports whether s is written in a script without spaces
// between words.
func unspaced(s string) bool {
	for _, r := range s {
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul, unicode.Thai) {
			return true
		}
	}
	return false
}

// sameName reports whether the query word q names the lower-case name word
// n.
func sameName(q, n string) bool {
	lq := strings.ToLower(q)
	if lq == n {
		return true
	}
	ra, rb := []rune(lq), []rune(n)
	if !unicode.IsUpper([]rune(q)[0]) || len(ra) < minFuzzyName || len(rb) < minFuzzyName || ra[0] != rb[0] {
		return false
	}
	if sa := skeleton(ra); len(sa) >= 3 && sa == skeleton(rb) {
		return true
	}
	return oneEdit(ra, rb)
}

// skeleton is a word's first letter followed by its other consonants, a run
// of one letter counted once.
func skeleton(w []rune) string {
	var b strings.Builder
	var last rune
	for i, r := range w {
		switch {
		case i > 0 && isVowel(r):
		case i > 0 && r == last:
			continue
		default:
			b.WriteRune(r)
		}
		last = r
	}
	return b.String()
}

func isVowel(r rune) bool { return strings.ContainsRune("aeiouy", r) }

// oneEdit reports whether a and b differ by exactly one insertion, deletion,
// substitution or swap of adjacent letters.
func oneEdit(a, b []rune) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	switch len(b) - len(a) {
	case 0:
		var diff []int
		for i := range a {
			if a[i] != b[i] {
				diff = append(diff, i)
				if len(diff) > 2 {
					return false
				}
			}
		}
		switch len(diff) {
		case 1:
			return true
		case 2:
			i, j := diff[0], diff[1]
			return j == i+1 && a[i] == b[j] && a[j] == b[i]
		}
		return false
	case 1:
		i := 0
		for i < len(a) && a[i] == b[i] {
			i++
		}
		return string(a[i:]) == string(b[i+1:])
	}
	return false
}

// nonNameWords returns the words of the query that name no speaker of the
// candidates, and whether any word was left out.
func nonNameWords(query string, cands []*candidate, also ...string) ([]string, bool) {
	seen := map[string]bool{}
	var names []string
	for _, a := range also {
		names = append(names, words(a)...)
	}
	for _, c := range cands {
		who := speakerOf(c.turn)
		if !seen[who] && who != "" && !unspaced(who) {
			seen[who] = true
			names = append(names, words(who)...)
		}
	}
	var rest []string
	cut := false
	for _, q := range words(query) {
		name := false
		for _, n := range names {
			if sameName(q, strings.ToLower(n)) {
				name = true
				break
			}
		}
		if name {
			cut = true
		} else {
			rest = append(rest, q)
		}
	}
	return rest, cut
}
