package extract

// Pronouns that point back to the speaker's own people and things: "My
// kids loved the zoo. They fed the goats" says that the speaker's kids fed
// the goats. A "they", "them", "he", "him" or "she" is read as the noun
// phrase it points to when that phrase is the speaker's ("my kids", "our
// dog", a bare "Mom") and is the only one that agrees with the pronoun in
// number (and, for "he" and "she", in gender) in the nearest place that
// holds any: the words of the sentence before the pronoun, else the
// sentence before. Anything else (two candidates, a name, whose gender the
// words do not give, a phrase that is not the speaker's) leaves the
// pronoun as it was: the clause then says nothing of the speaker's and is
// dropped, as before.

import (
	"strings"
)

// Nouns by what a pronoun that points to them must be.
var (
	maleNouns = wordSet("brother son dad father husband boyfriend uncle grandpa grandfather nephew grandson " +
		"stepdad stepson stepbrother")
	femaleNouns = wordSet("sister daughter mom mum mother wife girlfriend aunt grandma grandmother niece " +
		"granddaughter stepmom stepdaughter stepsister")
	// collectiveNouns name a group, which English points to with "they".
	collectiveNouns = wordSet("family fam team group band class crew staff gang club")
	// bareKin are the nouns of kin that name the speaker's own without a
	// determiner: "Mom called", "Family comes first".
	bareKin = wordSet("family fam mom mum dad grandma grandpa")
)

// referent is a noun phrase a pronoun may point to.
type referent struct {
	text                  string // as the speaker would say it: "my kids"
	head                  string // its noun, lower-cased
	plural, male, female  bool
	mine                  bool // the speaker's: "my", "our", a bare kin noun
	person, unknownGender bool // a name: a person of either gender
}

// agrees reports whether the pronoun p may point to r.
func (r referent) agrees(p string) bool {
	switch p {
	case "they", "them":
		return r.plural
	case "he", "him":
		return !r.plural && (r.male || r.unknownGender)
	case "she":
		return !r.plural && (r.female || r.unknownGender)
	}
	return false
}

// backPronouns are the pronouns resolved: subjects and objects. ("her" may
// be a possessive, "it" is as often the situation as a thing: both stay.)
var backPronouns = wordSet("they them he him she")

// referBack rewrites the pronouns of sentence s that point to the speaker's
// noun phrases, as the speaker would have said them ("they enjoyed it" ->
// "my family enjoyed it"). prev is the sentence before in the same turn
// ("" for none), as rewritten, and was what its resolved pronouns became:
// those stay the speaker's wherever they stand. Sentences with no such
// pronoun are returned untouched and untagged. is is what this sentence's
// resolved pronouns became.
func referBack(s, prev string, was []referent, names []string) (out string, is []referent) {
	if !hasBackPronoun(s) {
		return s, nil
	}
	lowered, ws := tagWords(s, names)
	var before []referent
	if prev != "" {
		pl, pws := tagWords(prev, names)
		before = nounPhrases(pl, pws, len(pws), nil)
		for i, r := range before {
			for _, w := range was {
				if strings.EqualFold(r.text, w.text) {
					before[i] = w
				}
			}
		}
	}
	var b strings.Builder
	last := 0
	resolved := map[int]referent{}
	for k, w := range ws {
		if !backPronouns[w.low] || w.tag != "PRP" {
			continue
		}
		cands := nounPhrases(lowered, ws, k, resolved)
		if !anyAgrees(cands, w.low) {
			cands = before
		}
		r, ok := onlyAgreeing(cands, w.low)
		if !ok || !r.mine {
			continue
		}
		resolved[k] = r
		is = append(is, r)
		text := r.text
		if k == 0 {
			text = capFirst(text)
		}
		b.WriteString(s[last:w.start])
		b.WriteString(text)
		last = w.end
	}
	if last == 0 {
		return s, nil
	}
	b.WriteString(s[last:])
	return b.String(), is
}

func hasBackPronoun(s string) bool {
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !(r >= 'a' && r <= 'z') }) {
		if backPronouns[w] {
			return true
		}
	}
	return false
}

func anyAgrees(rs []referent, p string) bool {
	for _, r := range rs {
		if r.agrees(p) {
			return true
		}
	}
	return false
}

// onlyAgreeing returns the one referent of rs that agrees with p; the same
// phrase said twice is one.
func onlyAgreeing(rs []referent, p string) (referent, bool) {
	var found referent
	n := 0
	for _, r := range rs {
		if !r.agrees(p) {
			continue
		}
		if n > 0 && strings.EqualFold(r.text, found.text) {
			continue
		}
		found = r
		n++
	}
	return found, n == 1
}

// nounPhrases returns the noun phrases of words [0, end) that a pronoun may
// point to: a determiner, adjectives and nouns ending in a noun that names
// someone or something (not a light noun, a time or an abstraction), two
// joined by "and", a name, and the pronouns "they", "he" and "she"
// themselves (whose referent is unknown unless resolved holds it, by word:
// they make a later pronoun ambiguous). What a copula says of its subject ("they're great kids") is
// no referent of its own. Only a subject or an object may be the speaker's:
// a phrase after a preposition competes but is never taken.
func nounPhrases(s string, ws []word, end int, resolved map[int]referent) []referent {
	var out []referent
	for k := 0; k < end; {
		w := ws[k]
		if r, ok := resolved[k]; ok {
			out = append(out, r)
			k++
			continue
		}
		if w.tag == "PRP" && backPronouns[w.low] {
			out = append(out, referent{text: w.low, plural: w.low == "they" || w.low == "them", person: true, unknownGender: true})
			k++
			continue
		}
		if !(w.tag == "DT" || w.tag == "PRP$" || w.tag == "CD" || isAdjTag(w.tag) || isNounTag(w.tag)) {
			k++
			continue
		}
		a := k
		for k < end && (ws[k].tag == "DT" || ws[k].tag == "PRP$" || ws[k].tag == "CD" || isAdjTag(ws[k].tag) || isNounTag(ws[k].tag)) {
			if k > a && isNounTag(ws[k-1].tag) && (ws[k].tag == "DT" || ws[k].tag == "PRP$") {
				break // "my family a lot": a new phrase
			}
			k++
		}
		head := k - 1
		for head >= a && !isNounTag(ws[head].tag) {
			head--
		}
		if head < a || head != k-1 {
			continue
		}
		h := ws[head]
		if lightNoun(h.low) || timeWords[h.low] || abstractNouns[h.low] || predicative(ws, a) {
			continue
		}
		r := referent{text: strings.TrimSpace(s[ws[a].start:h.end]), head: h.low}
		det := ws[a].low
		switch {
		case h.tag == "NNP" || h.tag == "NNPS":
			r.person, r.unknownGender = true, h.tag == "NNP"
			r.plural = h.tag == "NNPS"
		default:
			r.plural = h.tag == "NNS" || collectiveNouns[h.low]
			r.male, r.female = maleNouns[h.low], femaleNouns[h.low]
		}
		switch {
		case a > 0 && (ws[a-1].tag == "IN" || ws[a-1].tag == "TO"):
			// The object of a preposition competes but is never taken:
			// "a weight off my shoulders, they ..." is an idiom as often
			// as a thing.
		case det == "my" || det == "our":
			r.mine = true
		case a == head && bareKin[h.low]:
			r.mine, r.text = true, "my "+h.low
		}
		// "my sister and her kids": two joined by "and" are a plural.
		if k+1 < end && ws[k].low == "and" && (ws[k+1].tag == "DT" || ws[k+1].tag == "PRP$" || isNounTag(ws[k+1].tag)) {
			j := k + 1
			for j < end && (ws[j].tag == "DT" || ws[j].tag == "PRP$" || ws[j].tag == "CD" || isAdjTag(ws[j].tag) || isNounTag(ws[j].tag)) {
				j++
			}
			if isNounTag(ws[j-1].tag) {
				r = referent{text: strings.TrimSpace(s[ws[a].start:ws[j-1].end]), head: ws[j-1].low, plural: true, mine: r.mine}
				k = j
			}
		}
		out = append(out, r)
	}
	return out
}

// predicative reports whether the phrase at a is what a copula says of its
// subject: "they're tough kids", "it was a big change".
func predicative(ws []word, a int) bool {
	k := a - 1
	for k >= 0 && (ws[k].tag == "RB" || intensifiers[ws[k].low]) {
		k--
	}
	if k > 0 && (ws[k-1].tag == "WRB" || ws[k-1].tag == "WP") {
		return false // "where is the course": its subject
	}
	return k >= 0 && (beForms[ws[k].low] || ws[k].low == "'re" || ws[k].low == "'s" && ws[k].tag == "VBZ" || ws[k].low == "'m")
}
