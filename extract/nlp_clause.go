package extract

// Clauses of a tagged English sentence: where each starts, its subject, its
// verb group and what it says, and the memory text built from them.

import (
	"strings"
	"time"
	"unicode"

	"github.com/jdkato/prose/v2"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/timeexpr"
)

const (
	maxSubjectWords = 6  // "my two younger kids and I"
	maxPrefixWords  = 8  // "Last Friday after work," before the subject
	maxFrontedWords = 12 // "Last Friday at the lake with my cousins" before the subject
	maxMemoryWords  = 40 // a longer clause is cut at a comma
)

// nlpFinding is what a clause yields.
type nlpFinding struct {
	typ, text, rationale string
	entities             []string
	rel                  *engram.Relation
	at                   time.Time // when it happened, if the clause says and it is before the turn
	past                 bool      // the clause tells what happened: a past tense
}

// word is a token of a sentence with its Penn Treebank tag and its place.
type word struct {
	text, low, tag string
	start, end     int // bytes of the sentence
}

func isVerbTag(tag string) bool { return strings.HasPrefix(tag, "VB") }
func isNounTag(tag string) bool { return strings.HasPrefix(tag, "NN") }
func isAdjTag(tag string) bool  { return strings.HasPrefix(tag, "JJ") }

// tagWords tokenizes and tags s. The first word is lowered first unless it
// is "I", a speaker's name or an acronym: chat sentences open with "Wow",
// "Went" and "Lost", which a tagger trained on edited text reads as names.
// It returns the sentence as tagged, lowered first word and all, and its
// words, which index into it: a memory that starts elsewhere carries no
// capital in its middle.
func tagWords(s string, names []string) (string, []word) {
	in := s
	if end := strings.IndexFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' }); end != 0 {
		if end < 0 {
			end = len(s)
		}
		first := s[:end]
		if len(first) > 1 && first[0] >= 'A' && first[0] <= 'Z' && strings.ToLower(first[1:]) == first[1:] && !containsFold(names, first) {
			in = string(first[0]+'a'-'A') + s[1:]
		}
	}
	doc, err := prose.NewDocument(in, prose.UsingModel(taggerModel()), prose.WithSegmentation(false), prose.WithExtraction(false))
	if err != nil {
		return in, nil
	}
	toks := doc.Tokens()
	out := make([]word, 0, len(toks))
	pos := 0
	for _, t := range toks {
		i := strings.Index(in[pos:], t.Text)
		if i < 0 {
			return in, nil // the tokenizer rewrote the text: nothing to map back
		}
		w := word{text: in[pos+i : pos+i+len(t.Text)], tag: t.Tag, start: pos + i, end: pos + i + len(t.Text)}
		w.low = strings.ToLower(w.text)
		if w.text == "I" {
			w.tag = "PRP" // "I've" and the like are tagged NNP
		}
		out = append(out, w)
		pos = w.end
	}
	return in, out
}

// span is a clause: words [a, b). reason marks a "because" clause, the
// rationale of the clause before.
type span struct {
	a, b   int
	reason bool
}

// clauseStarts are the words that open a new clause after a comma or a
// conjunction: subject pronouns, "my"/"our" + noun, "let's".
var clauseStarts = wordSet("i we you he she they it there this that let my our")

func startsClause(ws []word, k int) bool {
	for k < len(ws) && leadAdverbs[ws[k].low] {
		k++
	}
	if k >= len(ws) {
		return false
	}
	w := ws[k]
	switch {
	case w.text == "I", clauseStarts[w.low] && w.low != "i":
		return w.low != "that" && w.low != "this" || k+1 < len(ws) && (isVerbTag(ws[k+1].tag) || ws[k+1].tag == "MD")
	case w.tag == "NNP" && k+1 < len(ws) && (isVerbTag(ws[k+1].tag) || ws[k+1].tag == "MD"):
		return true
	}
	return false
}

// splitWords cuts a sentence into clauses: at a comma, colon, semicolon,
// dash or coordinating conjunction that a new subject follows ("..., and I
// ...", "... but we ..."), and before "because", whose clause is the
// reason of the one before.
func splitWords(ws []word) []span {
	var out []span
	a := 0
	reason := false
	cut := func(end, next int, r bool) {
		if end > a {
			out = append(out, span{a, end, reason})
		}
		a, reason = next, r
	}
	for k := 0; k < len(ws); k++ {
		w := ws[k]
		switch {
		case w.low == "because" || w.low == "since" && k+1 < len(ws) && (ws[k+1].text == "I" || ws[k+1].low == "we") && reasonSince(ws, k):
			cut(k, k+1, true)
		case w.tag == "," || w.tag == ":" || w.text == ";" || w.text == "-" || w.text == "--":
			j := k + 1
			if j < len(ws) && (ws[j].tag == "CC" || ws[j].low == "so" || ws[j].low == "then") {
				j++
			}
			if startsClause(ws, j) && hasVerb(ws, a, k) {
				// (A comma after a verbless opening, "Last Friday, I went",
				// ends no clause.)
				cut(k, j, false)
				k = j - 1
			}
		case (w.tag == "CC" || w.low == "so") && k > a && startsClause(ws, k+1) && hasVerb(ws, a, k):
			cut(k, k+1, false) // not in a subject: "my kids and I went"
		case w.text == "I" && k > a && interjections[ws[k-1].low] && startsClause(ws, k):
			// Chat ends a sentence with "lol" or "haha" as with a full
			// stop: "it was ok lol I went home early". The interjection
			// belongs to neither.
			cut(k-1, k, false)
		}
	}
	cut(len(ws), len(ws), false)
	return out
}

// hasVerb reports whether words [a, b) hold a verb.
func hasVerb(ws []word, a, b int) bool {
	for k := a; k < b; k++ {
		if isVerbTag(ws[k].tag) || ws[k].tag == "MD" {
			return true
		}
	}
	return false
}

// reasonSince tells "since I was a kid" (a time, kept in its clause) from
// "since we need speed" (a reason): a reason's verb is not in the past.
func reasonSince(ws []word, k int) bool {
	for j := k + 2; j < len(ws) && j < k+5; j++ {
		if isVerbTag(ws[j].tag) || ws[j].tag == "MD" {
			return ws[j].tag != "VBD"
		}
	}
	return false
}

// subject kinds.
const (
	subjNone  = iota
	subjSelf  // I, or a dropped subject
	subjGroup // we, "X and I"
	subjLet   // let's
	subjMine  // my sister, our team
	subjOther // a noun phrase: the team (kept only for decisions)
)

// clause is a clause analysed: who it is about, its verb group and its
// complement.
type clause struct {
	s             string // the sentence
	ws            []word
	kind          int
	subjA, subjB  int    // the subject's words; subjA == subjB for a dropped subject
	subjText      string // the subject as the memory writes it
	plural        bool
	prefixA       int // words [prefixA, subjA) stand before the subject (a time, an adverb)
	vg            verbGroup
	compA, compB  int // the complement's words
	mineHead      string
	inclusive     bool   // "we" names the session's speakers
	implicitParts bool   // the subject was dropped: the text gets one
	typ           string // the memory type, once classified
}

// verbGroup is a clause's auxiliaries and main verb.
type verbGroup struct {
	a, b                             int // its words
	main                             int // the main verb, -1 for a bare copula
	be, have                         int // the first be and have, -1 if none
	neg, future, weak, duty, intent  bool
	past, perfect, progressive, pass bool
	habit                            bool
	attempt                          bool   // the intent is "try to": once past, it was done
	tentative                        bool   // "might", "may": a plan not yet sure
	stem                             string // the main verb's stem (verbStem)
}

func (vg verbGroup) copula() bool { return vg.main < 0 && vg.be >= 0 }

// parseSentence returns what the clauses of one sentence state.
func parseSentence(s string, ts time.Time, sp speakers) []nlpFinding {
	s, ws := tagWords(s, sp.session)
	if len(ws) < 2 {
		return nil
	}
	var out []nlpFinding
	spans := splitWords(ws)
	cond := false // the span before is a condition: "if I don't, I'll ..."
	said := false // the clause before a reason made a memory
	for i, sn := range spans {
		if sn.reason && (said || i == 0) {
			said = false
			continue // the reason of a statement is its rationale
		}
		said = false
		after := cond
		cond, sn.b = conditionAt(ws, sn.a, sn.b)
		if after {
			continue // the consequence of a condition is no fact
		}
		c, ok := analyse(ws, sn.a, sn.b, sp)
		if !ok {
			continue
		}
		c.s = s
		if h, ok := hedgedPlan(c, sn.b, sp); ok {
			c = h
		}
		why := ""
		if i+1 < len(spans) && spans[i+1].reason {
			r := spans[i+1]
			why = resolveSpan(ws, r.a, r.b, sp, c.inclusive, s)
		}
		if f, ok := c.finding(s, ts, sp, why); ok {
			out = append(out, f)
			said = true
		} else if f, ok := c.presence(ts, sp); ok {
			out = append(out, f)
		}
	}
	return out
}

// conditionAt reports whether the clause [a, b) ends in a condition whose
// consequence follows: it opens with "if" or "unless" (after discourse
// words and adverbs: "Maybe if"), or it holds an "if" clause between two
// commas ("I need sleep, if I don't, I'll ..."). end is where the clause's
// own statement ends: b, or the comma before that "if".
func conditionAt(ws []word, a, b int) (cond bool, end int) {
	for k := a; k < b; k++ {
		if ws[k].low == "if" || ws[k].low == "unless" {
			return true, b
		}
		if !(ws[k].tag == "UH" || ws[k].tag == "," || ws[k].tag == "CC" || ws[k].tag == "RB" || discourseWords[ws[k].low] && ws[k].text != "I") {
			break
		}
	}
	if b >= len(ws) || ws[b].tag != "," {
		return false, b
	}
	for k := b - 1; k > a+1 && ws[k].tag != ","; k-- {
		if (ws[k].low == "if" || ws[k].low == "unless") && ws[k-1].tag == "," {
			return true, k - 1
		}
	}
	return false, b
}

// hedgeVerbs put a hedge before a statement: "I think", "I guess".
var hedgeVerbs = stemSet("think guess suppose", false)

// hedgedPlan reads "I think I'm going to sell it" as the plan it hedges:
// a hedge of the speaker's, in the present, whose clause is a plan of the
// speaker's own. What else a hedge embeds is an opinion and stays out.
func hedgedPlan(c clause, b int, sp speakers) (clause, bool) {
	g := c.vg
	if c.kind != subjSelf || c.implicitParts || !hedgeVerbs[g.stem] || g.past || g.perfect || g.neg || g.future || g.weak || g.intent || g.duty {
		return c, false
	}
	k := c.compA
	if k < b && c.ws[k].low == "that" {
		k++
	}
	if k >= b || c.ws[k].text != "I" {
		return c, false
	}
	h, ok := analyse(c.ws, k, b, sp)
	if !ok || h.kind != subjSelf {
		return c, false
	}
	h.s = c.s
	if h.classify() != engram.MemoryPlan {
		return c, false
	}
	return h, true
}

// analyse finds the subject and the verb group of the clause [a, b).
func analyse(ws []word, a, b int, sp speakers) (clause, bool) {
	c := clause{ws: ws, compB: b}
	i := a
	for i < b {
		w := ws[i]
		switch {
		case w.tag == "UH", w.tag == ",", w.tag == ":", w.tag == ".", w.tag == "CC", w.text == "-", w.text == "--",
			discourseWords[w.low] && w.text != "I":
			i++
			continue
		case w.tag == "NNP" && containsFold(sp.session, w.text) && i+1 < b && (ws[i+1].tag == "," || ws[i+1].tag == "."):
			i += 2 // a vocative: "Jon, I ..."
			continue
		}
		break
	}
	i = afterSeems(ws, i, b)
	c.prefixA = i
	for j := i; j < b && j-i < maxFrontedWords; j++ {
		if c.subject(j, b, sp) {
			if j-i >= maxPrefixWords {
				if _, ok := frontedPlace(ws, i, j); !ok {
					return c, false // a long opening is a place, or it is a clause of its own
				}
			}
			if j > i && !adverbial(ws, i, j) {
				return c, false // "Glad I ...", "... remind me why I ...": not the clause's own statement
			}
			break
		}
		if isVerbTag(ws[j].tag) && ws[j].tag != "VBG" && ws[j].tag != "VBN" || ws[j].tag == "MD" {
			break // a participle may open a phrase before the subject: "Speaking of rain, I ..."
		}
	}
	if c.kind == subjNone {
		// A dropped subject: "Lost my job yesterday", "Just got back".
		k := i
		for k < b && leadAdverbs[ws[k].low] {
			k++
		}
		if k >= b || !droppedSubjectVerb(ws, k, b) {
			return c, false
		}
		c.kind, c.subjA, c.subjB, c.subjText, c.implicitParts = subjSelf, k, k, sp.self, true
		if !isVerbTag(ws[k].tag) {
			ws[k].tag = forcedVerbTag(ws[k]) // "Ate/NN dinner early": a past form read as a noun
		}
		c.prefixA = k
	}
	if c.kind == subjLet || c.kind == subjSelf && !c.implicitParts {
		// The word after "let's", and a "like" right after "I", are verbs
		// whatever the tagger made of them ("let/NN 's/POS use/NN").
		n := c.subjB
		for n < b && (ws[n].low == "not" || ws[n].low == "never" || ws[n].tag == "RB") {
			n++
		}
		if n < b && (c.kind == subjLet && ws[n].tag != "DT" && ws[n].tag != "PRP" && isWordText(ws[n].low) || ws[n].low == "like" && ws[n].tag == "IN") {
			ws[n].tag = forcedVerbTag(ws[n])
		}
	}
	c.vg = verbGroupAt(ws, c.subjB, b)
	if c.vg.main < 0 && c.vg.be < 0 && c.vg.have < 0 {
		return c, false
	}
	c.compA = c.vg.b
	// A vocative at the end is no part of the statement: "..., Mel".
	for c.compB-2 >= c.compA && ws[c.compB-2].tag == "," && containsFold(sp.session, ws[c.compB-1].text) {
		c.compB -= 2
	}
	return c, true
}

// seemVerbs hedge the clause after them: "it seems my phone died",
// "looks like we are moving".
var seemVerbs = stemSet("seem look sound appear", false)

// afterSeems returns where the clause after a hedge of appearance opening
// [i, b) starts ("it seems (that)", "(it) looks like", "it sounds like"),
// when a subject and its verb follow; else i.
func afterSeems(ws []word, i, b int) int {
	k := i
	if k < b && ws[k].low == "it" {
		k++
	}
	if k >= b || !isVerbTag(ws[k].tag) && ws[k].tag != "NNS" || !seemVerbs[verbStem(ws[k].low)] {
		return i
	}
	k++
	if k < b && (ws[k].low == "like" || ws[k].low == "that") {
		k++
	}
	if k+1 >= b || !startsClause(ws, k) {
		return i
	}
	return k
}

// adverbial reports whether words [a, b), before a subject, are adverbs or
// a time ("Actually,", "Last Friday,"): anything else puts the subject in
// a subordinate or reported clause.
func adverbial(ws []word, a, b int) bool {
	plain := true
	for k := a; k < b; k++ {
		if t := ws[k].tag; !(strings.HasPrefix(t, "RB") || t == "," || t == ":") {
			plain = false
		}
	}
	if plain {
		return true
	}
	pre := ws[a].text
	for k := a + 1; k < b; k++ {
		pre += " " + ws[k].text
	}
	pre = strings.TrimRight(pre, " ,:")
	if ws[b-1].tag == "," && !finiteVerb(ws, a, b) {
		// A phrase without a finite verb set off by a comma is fronted, not
		// a clause of its own: a topic ("As for me,", "Me,"), a participle
		// ("Speaking of rain,", "Done with work,") or a preposition's phrase.
		return true
	}
	if _, ok := timeexpr.Suffix(pre, timeSuffixDay); ok || planPeriod.MatchString(pre) || everyPeriod.MatchString(pre) {
		return true
	}
	if timePhrase(ws, a, b) {
		return true
	}
	if _, ok := frontedPlace(ws, a, b); ok {
		return true
	}
	// A prepositional phrase: "In the end,", "After a long call".
	if ws[a].tag != "IN" || ws[a].low == "that" || ws[a].low == "if" || ws[a].low == "because" {
		return false
	}
	for k := a + 1; k < b; k++ {
		if t := ws[k].tag; !(t == "DT" || isAdjTag(t) || isNounTag(t) || t == "CD" || t == "," || t == "PRP$" || strings.HasPrefix(t, "RB")) {
			return false
		}
	}
	return true
}

// timePhrase reports whether words [a, b) are a noun phrase of time used
// as an adverb, as English does without a preposition: "The other day",
// "A couple of weeks earlier", "That night". Such a phrase is determined
// (an article, a demonstrative, a number); "Good morning" greets.
func timePhrase(ws []word, a, b int) bool {
	when, det := false, false
	for k := a; k < b; k++ {
		switch t := ws[k].tag; {
		case timeWords[ws[k].low] && isNounTag(t):
			when = true
		case t == "DT" || t == "CD":
			det = true
		case isAdjTag(t) || t == "NN" || t == "NNS" || t == "RB" || t == "RBR" || t == ",", ws[k].low == "of":
		default:
			return false
		}
	}
	return when && det
}

// frontedPlace reads words [a, b), before a subject, as an optional time
// and then prepositional phrases of place or company ("Last Friday at the
// lake with my cousins"), and returns where the phrases start. A
// subordinator ("if", "because", "like") opens a clause, not a phrase.
func frontedPlace(ws []word, a, b int) (int, bool) {
	for p := a; p < b; p++ {
		if ws[p].tag != "IN" {
			continue
		}
		if p > a && !fronted(ws, a, p) {
			return 0, false
		}
		return p, placePreps[ws[p].low] && prepPhrases(ws, p, b)
	}
	return 0, false
}

// placePreps open a phrase of place, time or company; "for", "by", "of"
// and "as" open a purpose, a means or an aside ("For example,", "By the
// way,").
var placePreps = wordSet("at in on during after before within inside near around across through with from outside over under")

// fronted reports whether words [a, b) are a time that may open a
// sentence: "Last Friday", "The other day", "Yesterday".
func fronted(ws []word, a, b int) bool {
	pre := strings.TrimRight(ws[a].text, ",")
	for k := a + 1; k < b; k++ {
		pre += " " + ws[k].text
	}
	pre = strings.TrimRight(pre, " ,")
	if e, ok := timeexpr.Suffix(pre, timeSuffixDay); ok && strings.EqualFold(e, pre) {
		return true
	}
	return timePhrase(ws, a, b) || planPeriod.MatchString(pre)
}

// prepPhrases reports whether words [a, b) are prepositional phrases, each
// a preposition and a noun phrase that ends in a noun: "at dance practice
// with a few friends".
func prepPhrases(ws []word, a, b int) bool {
	for b > a && ws[b-1].tag == "," {
		b--
	}
	if b-a < 2 || !isNounTag(ws[b-1].tag) || lightNoun(ws[b-1].low) || abstractNouns[ws[b-1].low] {
		return false // "In the end,", "In any case,": no place
	}
	for k := a; k < b; k++ {
		switch w := ws[k]; {
		case w.tag == "IN":
			if subordinators[w.low] || k > a && !isNounTag(ws[k-1].tag) {
				return false // a preposition follows its phrase's noun: "at the lake with"
			}
		case w.tag == "DT" || w.tag == "PRP$" || w.tag == "CD" || w.tag == "POS" || isAdjTag(w.tag) || isNounTag(w.tag):
		case w.tag == "VBG" && k+1 < b && isNounTag(ws[k+1].tag): // "the climbing wall"
		default:
			return false
		}
	}
	return true
}

// subordinators open a clause where a preposition opens a phrase.
var subordinators = wordSet("that if because like as while when since than so though although unless whether")

// finiteVerb reports whether words [a, b) hold a verb with a tense or a
// modal, or a subject pronoun: a clause of their own.
func finiteVerb(ws []word, a, b int) bool {
	for k := a; k < b; k++ {
		switch t := ws[k].tag; {
		case t == "VBD" || t == "VBZ" || t == "VBP" || t == "MD" || t == "VB":
			return true
		case subjectPronouns[ws[k].low] && ws[k].tag == "PRP":
			return true
		}
	}
	return false
}

// subjectPronouns are the pronouns of a subject, which a clause has and a
// phrase has not.
var subjectPronouns = wordSet("i we you he she they it")

// isWordText reports whether s is a word of letters.
func isWordText(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool { return !unicode.IsLetter(r) }) < 0
}

// forcedVerbTag is the verb tag of a word the tagger took for something
// else: its past form if it has one, else the base form.
func forcedVerbTag(w word) string {
	if isVerbTag(w.tag) {
		return w.tag
	}
	if base, ok := irregularPast[w.low]; ok && base != w.low || strings.HasSuffix(w.low, "ed") {
		return "VBD"
	}
	if strings.HasSuffix(w.low, "ing") {
		return "VBG"
	}
	return "VB"
}

// droppedSubjectVerb reports whether the clause at k opens with a verb
// whose subject a chat leaves out: a past form ("Lost", "Went"), or a
// present participle that no later verb makes a gerund subject ("Finishing
// the choreography", not "Seeing them was great").
func droppedSubjectVerb(ws []word, k, b int) bool {
	w := ws[k]
	if beForms[w.low] || haveForms[w.low] || doForms[w.low] {
		// "Been running longer" is the speaker's; "Been a long road" may
		// be about "it". "Had" with an object of its own is the
		// speaker's doing ("Had pizza for lunch"); before a pronoun or a
		// verb it asks ("Had you seen it?") or helps. ("Did the kids
		// go?" asks as often as "Did the laundry" tells: left out.)
		if w.low == "had" && k+1 < b {
			n := ws[k+1]
			return n.tag == "DT" || n.tag == "PRP$" || n.tag == "CD" || isAdjTag(n.tag) && n.low != "to" ||
				isNounTag(n.tag) && n.tag != "NNP"
		}
		return w.low == "been" && k+1 < b && ws[k+1].tag == "VBG"
	}
	if affectAdjectives[w.low] {
		return false // "Excited for the future!"
	}
	switch w.tag {
	case "VBD", "VBN":
		return true
	case "VBG":
		// A gerund subject: "Seeing them was great", "Biking sounds fun"
		// (the tagger reads "sounds" as a plural noun), "Parenting's hard".
		if k+1 < b {
			if n := ws[k+1]; n.tag == "POS" || n.low == "'s" || n.tag == "NNS" && !strings.HasSuffix(n.low, "ss") {
				return false
			}
		}
		end := b
		if b+1 < len(ws) && ws[b].tag == "CC" && ws[b+1].tag == "NNP" {
			// The clause was cut before "and" and a name, which may end the
			// gerund's own phrase: "Flying from Oslo to Trinidad and Tobago
			// must have been fun".
			end = len(ws)
		}
		for j := k + 1; j < end; j++ {
			if j > b && ws[j].tag == "PRP" {
				break // the next clause's own subject
			}
			if ws[j].tag == "NNS" && strings.HasSuffix(ws[j].low, "s") && linkingVerbs[verbStem(ws[j].low)] {
				return false // "Playing piano sounds fun", "sounds" read as a noun
			}
			if t := ws[j].tag; t == "VBD" || t == "VBZ" || t == "VBP" || t == "MD" || beForms[ws[j].low] ||
				ws[j].low == "'s" && j+1 < b && (ws[j+1].tag == "DT" || isAdjTag(ws[j+1].tag)) {
				return false
			}
		}
		return true
	case "VB", "VBP", "NN", "NNP":
		base, ok := irregularPast[w.low] // "Took the kids to the museum", tagged as a base form
		return ok && base != w.low && !beForms[w.low] && !haveForms[w.low]
	}
	return false
}

// subject reads a subject at j, sets c's subject fields and reports
// whether there is one.
func (c *clause) subject(j, b int, sp speakers) bool {
	ws := c.ws
	w := ws[j]
	switch {
	case w.text == "I":
		// "I and Jon" is rare; "X and I" is read below.
		c.kind, c.subjA, c.subjB, c.subjText = subjSelf, j, j+1, sp.self
		return true
	case w.low == "we":
		c.kind, c.subjA, c.subjB, c.plural = subjGroup, j, j+1, true
		return true
	case w.low == "let" && j+1 < b && (ws[j+1].low == "us" || ws[j+1].low == "'s"):
		c.kind, c.subjA, c.subjB, c.plural, c.inclusive = subjLet, j, j+2, true, true
		return true
	case w.low == "my" || w.low == "our" || w.tag == "NNP" || w.low == "me":
		return c.nounSubject(j, b, sp)
	case w.tag == "DT" && (w.low == "the" || w.low == "our"):
		k := j + 1
		for k < b && (isAdjTag(ws[k].tag) || isNounTag(ws[k].tag)) && k-j <= maxSubjectWords {
			k++
		}
		if k > j+1 && k < b && isNounTag(ws[k-1].tag) && (isVerbTag(ws[k].tag) || ws[k].tag == "MD") {
			c.kind, c.subjA, c.subjB, c.plural = subjOther, j, k, ws[k-1].tag == "NNS"
			return true
		}
	}
	return false
}

// nounSubject reads "my sister", "our team", "my kids and I", "Jon and I",
// "me and Jon": a noun phrase ending right before a verb.
func (c *clause) nounSubject(j, b int, sp speakers) bool {
	ws := c.ws
	k := j
	hasSelf, hasNoun, and := false, false, false
	for k < b && k-j < maxSubjectWords {
		w := ws[k]
		switch {
		case w.text == "I" || w.low == "me":
			hasSelf = true
		case w.low == "and":
			and = true
		case w.low == "my" || w.low == "our" || w.tag == "POS" || w.tag == "CD" || isAdjTag(w.tag):
		case and && (w.tag == "DT" || w.tag == "PRP$" || w.low == "him" || w.low == "her" || w.low == "them"):
			// Chat's "me and some friends", "me and his brother", "me and
			// him": the speaker's company after the "and".
			hasNoun = hasNoun || w.tag == "PRP"
		case isNounTag(w.tag):
			hasNoun = true
		default:
			goto end
		}
		k++
	}
end:
	v := k
	for v < b && leadAdverbs[ws[v].low] {
		v++ // "my kids and I just finished"
	}
	if k == j || v >= b || !(isVerbTag(ws[v].tag) || ws[v].tag == "MD") {
		return false
	}
	if hasSelf && !and || !hasSelf && !hasNoun {
		return false
	}
	if !hasSelf && ws[j].tag == "NNP" {
		return false // someone else: "Jon said ..."
	}
	c.subjA, c.subjB = j, k
	last := ws[k-1]
	switch {
	case hasSelf:
		c.kind, c.plural = subjGroup, true
	default:
		c.kind, c.plural = subjMine, last.tag == "NNS" || and
		for m := j; m < k; m++ {
			if w := ws[m].low; w == "favourite" || w == "favorite" || w == "fave" || w == "fav" {
				c.mineHead = "favourite"
				break
			}
			if isNounTag(ws[m].tag) && ws[m].tag != "NNP" {
				c.mineHead = ws[m].low
			}
		}
	}
	return true
}

// verbGroupAt reads the auxiliaries and the main verb from v.
func verbGroupAt(ws []word, v, b int) verbGroup {
	g := verbGroup{a: v, main: -1, be: -1, have: -1}
	k := v
	next := func(k int) int { // the next word that is not an adverb
		for k < b && ws[k].tag == "RB" && ws[k].low != "not" && ws[k].low != "never" {
			k++
		}
		return k
	}
loop:
	for k < b {
		w := ws[k]
		switch {
		case w.low == "not" || w.low == "never":
			g.neg = true
		case w.tag == "RB" || w.tag == "RBR" || w.low == "all" || w.low == "both":
			// An adverb belongs to the group only before another verb:
			// "I am really into it", not "I am sure".
			n := next(k + 1)
			for n < b && (ws[n].low == "all" || ws[n].low == "both") {
				n = next(n + 1)
			}
			if n >= b || !(isVerbTag(ws[n].tag) || ws[n].tag == "MD" || ws[n].low == "not" || ws[n].low == "never") {
				break loop
			}
			if habitWords[w.low] {
				g.habit = true
			}
		case w.tag == "MD" || w.low == "will" || w.low == "would":
			g.modal(ws, w.low, next(k+1), b)
		case beForms[w.low]:
			if g.be < 0 {
				g.be = k
			}
			if w.low == "was" || w.low == "were" {
				g.past = true
			}
		case haveForms[w.low]:
			var main bool
			if k, main = g.haveAt(ws, k, next(k+1), b); main {
				k++
				break loop
			}
		case doForms[w.low] && next(k+1) < b && (ws[next(k+1)].tag == "VB" || ws[next(k+1)].tag == "VBP" || ws[next(k+1)].low == "not"):
			if w.low == "did" {
				g.past = true
			}
			// The verb after "do not" is the main verb, whatever the tagger
			// made of it ("I do not like/IN olives").
			n := next(k + 1)
			for n < b && (ws[n].low == "not" || ws[n].low == "never") {
				g.neg = true
				n = next(n + 1)
			}
			if n < b && ws[n].tag != "DT" && ws[n].tag != "PRP" && isWordText(ws[n].low) {
				ws[n].tag = forcedVerbTag(ws[n])
			}
		case w.low == "going" && k+2 < b && ws[k+1].low == "to" && (ws[k+2].tag == "VB" || ws[k+2].tag == "VBP" || ws[k+2].tag == "RB"):
			g.future = true
			k++
		case (w.low == "got" || w.low == "get") && k+2 < b && ws[k+1].low == "to" && ws[k+2].tag == "VB":
			if g.have >= 0 || w.low == "get" {
				g.duty = true // "I have got to", "gotta"
			} else {
				g.past = true // "I got to meet them": the chance came
			}
			k++
		case w.low == "used" && k+2 < b && ws[k+1].low == "to" && ws[k+2].tag == "VB":
			g.habit, g.past = true, true
			k++
		case isVerbTag(w.tag) && intentVerbs[verbStem(w.low)] && k+2 < b && ws[k+1].low == "to" && (ws[k+2].tag == "VB" || ws[k+2].tag == "VBP"):
			g.intent = true
			g.attempt = verbIs(verbStem(w.low), "try")
			if (w.tag == "VBD" || w.tag == "VBN" && g.have < 0) && g.be < 0 {
				g.past = true // "I wanted to": a past wish, no plan
			}
			k++
		case (w.low == "like" || w.low == "love") && g.weak && k+2 < b && ws[k+1].low == "to":
			g.intent, g.weak = true, false // "I would like to", "I'd love to"
			k++
		case isVerbTag(w.tag) && verbIs(verbStem(w.low), "plan") && k+2 < b && ws[k+1].low == "on" && ws[k+2].tag == "VBG":
			// "I'm planning on moving": "plan on" takes a gerund where
			// "plan to" takes the base form; the gerund is the main verb.
			g.intent = true
			if (w.tag == "VBD" || w.tag == "VBN" && g.have < 0) && g.be < 0 {
				g.past = true
			}
			k++
		case (w.low == "thinking" || w.low == "dreaming") && k+1 < b && (ws[k+1].low == "of" || ws[k+1].low == "about") && k+2 < b && ws[k+2].tag == "VBG":
			g.intent = true
			k++
		case w.low == "looking" && k+2 < b && ws[k+1].low == "forward" && ws[k+2].low == "to":
			g.intent = true
			k += 2
		case isVerbTag(w.tag):
			g.setMain(k, w)
			k++
			break loop
		default:
			break loop
		}
		k++
	}
	g.b = k
	if g.main < 0 && g.be >= 0 && g.be == k-1 && ws[g.be].low == "been" && g.have >= 0 {
		g.perfect = true
	}
	return g
}

// modal reads the modal md; n is the next word that is not an adverb.
func (g *verbGroup) modal(ws []word, md string, n, b int) {
	// The word after a modal is a verb, whatever the tagger made of it
	// ("we should book/NN the venue").
	if n < b && !isVerbTag(ws[n].tag) && ws[n].tag != "MD" && ws[n].tag != "DT" && ws[n].tag != "PRP" &&
		ws[n].tag != "IN" && ws[n].low != "not" && ws[n].low != "never" && isWordText(ws[n].low) && ws[n].low == ws[n].text {
		ws[n].tag = "VB"
	}
	switch {
	case futureMD[md]:
		g.future = true
	case dutyMD[md]:
		g.duty = true
	case weakMD[md]:
		g.weak = true
		g.tentative = md == "might" || md == "may"
	}
}

// haveAt reads a form of "have" at k, n being the next word that is not an
// adverb: an auxiliary of the perfect ("have been", "had seen"), a duty
// ("have to go", "have got to"), or else the main verb. It returns where
// the group goes on (the last word it took) and whether it was the main
// verb, which ends the group.
func (g *verbGroup) haveAt(ws []word, k, n, b int) (int, bool) {
	past := ws[k].low == "had"
	switch {
	case n < b && (ws[n].tag == "VBN" || ws[n].low == "been"):
		g.perfect = true
		g.past = g.past || past
		if g.have < 0 {
			g.have = k
		}
		return k, false
	case n+1 < b && ws[n].low == "to" && ws[n+1].tag == "VB":
		g.duty = true
		g.past = g.past || past
		return n, false
	case n+1 < b && ws[n].low == "got" && ws[n+1].low == "to":
		g.duty = true
		return n + 1, false
	}
	g.main, g.stem = k, "have"
	g.past = g.past || past
	return k, true
}

// setMain takes w, at k, as the group's main verb, and its tense and voice
// from its tag and the auxiliaries before it.
func (g *verbGroup) setMain(k int, w word) {
	g.main, g.stem = k, verbStem(w.low)
	if base, ok := irregularPast[w.low]; ok && base != w.low && (w.tag == "VBP" || w.tag == "VB") && g.have < 0 && !g.future && !g.duty && !g.weak && !g.intent && g.be < 0 {
		w.tag = "VBD" // "I built": a past form tagged as a present one
	}
	switch w.tag {
	case "VBD":
		g.past = true
	case "VBN":
		if g.be >= 0 {
			g.pass = true
		} else if g.have < 0 {
			g.past = true // a dropped subject: "Lost my job"
		}
	case "VBG":
		if g.be >= 0 || g.have < 0 {
			g.progressive = true
		}
	}
}
