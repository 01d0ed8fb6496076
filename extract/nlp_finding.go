package extract

// From an analysed clause to a memory: its type, whether it says anything,
// its text with the pronouns resolved and its times as dates.

import (
	"regexp"
	"strings"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/timeexpr"
)

// classify returns the memory type of the clause, or "" when it states
// nothing worth remembering.
func (c *clause) classify() string {
	ws, g := c.ws, c.vg
	mainLow := ""
	if g.main >= 0 {
		mainLow = ws[g.main].low
	}
	next := ""
	if c.compA < c.compB {
		next = ws[c.compA].low
	}
	switch {
	case c.kind == subjLet:
		if choiceVerbs[g.stem] || verbIs(g.stem, "go") && next == "with" && !c.withKin() {
			return engram.MemoryDecision
		}
		if g.neg {
			return ""
		}
		return engram.MemoryPlan
	case decisionVerbs[g.stem] && !g.future && !g.weak && !g.intent && !g.duty && !g.progressive && decides(g.stem, next),
		verbIs(g.stem, "go") && next == "with" && g.past && !c.withKin():
		return engram.MemoryDecision
	case c.kind == subjOther:
		return "" // someone else's doings, but for decisions
	case (g.future || g.intent || g.duty) && (choiceVerbs[g.stem] || verbIs(g.stem, "go") && next == "with" && !c.withKin()) && !g.past:
		return engram.MemoryDecision
	case g.tentative && !g.intent && !g.perfect && !g.neg && g.main >= 0 && !mentalVerbs[g.stem] && !presentMentalVerbs[g.stem] && c.kind != subjMine:
		return engram.MemoryPlan // "I might visit my aunt": a plan not yet sure, said as one
	case g.weak && !g.intent:
		return "" // "I could", "I would", "I might have"
	case g.attempt && (g.past || g.perfect) && !g.neg,
		verbIs(g.stem, "try") && (g.past || g.perfect) && !g.neg && c.compA < c.compB && ws[c.compA].tag == "VBG":
		return engram.MemoryEvent // "I tried to call them", "I tried calling them": an attempt is something done
	case g.intent && g.past:
		return "" // "I wanted to": what was meant, not what is
	case g.duty && g.past:
		if g.neg {
			return ""
		}
		return engram.MemoryEvent // "I had to shut down my account": it happened
	case g.future || g.intent || g.duty:
		if g.neg || mentalVerbs[g.stem] || verbIs(g.stem, "wait") {
			return "" // "I won't give up", "I'll never forget", "I can't wait"
		}
		return engram.MemoryPlan
	case mentalVerbs[g.stem] || presentMentalVerbs[g.stem] && !g.past && !g.perfect:
		return ""
	case intentVerbs[g.stem] && g.main >= 0 && !c.nounObject():
		return "" // "I want them to experience it": a wish about others
	case reportVerbs[g.stem] && c.embedsClause():
		return "" // "my manager told me we decided ...": someone else's statement
	case verbIs(g.stem, "wait") || verbIs(g.stem, "thank"):
		return ""
	}
	if pred, ok := preferenceVerbs[g.stem]; ok && !g.past && !g.progressive && !g.perfect {
		if next == "your" || next == "you" || relVague[next] || next == "that" || next == "it" || pred == "" {
			return "" // a compliment or a judgement: "I love your necklace", "I love how you ..."
		}
		return engram.MemoryPreference
	}
	if g.be >= 0 && g.main >= 0 && affectAdjectives[mainLow] || linkingVerbs[g.stem] && c.affectNext() {
		return "" // "I was scared", "I stay motivated", "I feel great"
	}
	if c.kind == subjMine && g.copula() && (strings.HasPrefix(c.mineHead, "favo") || c.mineHead == "fave") {
		return engram.MemoryPreference // "my favourite editor is Neovim"
	}
	if g.copula() {
		adj := skipIntensifiers(ws, c.compA, c.compB)
		if c.preferenceObject() >= 0 {
			return engram.MemoryPreference
		}
		if adj < c.compB {
			a := ws[adj]
			if a.low == "busy" && adj+1 < c.compB && c.ws[adj+1].tag == "VBG" && !g.neg {
				return engram.MemoryEvent // "we have been busy planning the launch": the doing
			}
			if affectAdjectives[a.low] && !c.unwell() || a.low == "going" {
				return ""
			}
		}
		if g.neg || c.kind == subjGroup && !g.past {
			return "" // "we are all in this together": people in general
		}
		if g.past && !g.perfect || g.perfect && next == "to" { // "I was in Rome", "I have been to Paris"
			return engram.MemoryEvent
		}
		return engram.MemoryFact
	}
	switch {
	case g.neg && (g.past || g.perfect):
		return "" // what did not happen
	case g.perfect && g.progressive, g.pass && mainLow == "born":
		return engram.MemoryFact // a state: "I have been living in Toronto", "I was born in Kyoto"
	case g.past || g.perfect || g.pass:
		return engram.MemoryEvent
	case g.progressive:
		return engram.MemoryEvent // an activity going on: "I'm starting a dance studio"
	case mainLow == "", c.kind == subjGroup && !c.habitual():
		return "" // no verb, or "we" doing something in general
	}
	return engram.MemoryFact
}

// decides reports whether a decision verb is followed by what was decided:
// "agree" alone is assent, "agree to" a decision.
func decides(stem, next string) bool {
	switch {
	case verbIs(stem, "agree"):
		return next == "to" || next == "on" || next == "that"
	case verbIs(stem, "decide"):
		return next == "to" || next == "on" || next == "that" || next == "not" || next == "against"
	}
	return next != "" && next != "it" && next != "that" && next != "this"
}

// intensifiers stand between a copula and its adjective.
var intensifiers = wordSet("so really very super totally pretty quite too also always still just truly definitely " +
	"absolutely extremely incredibly kinda even")

// skipIntensifiers returns the first word from k on, up to b, that is no
// intensifier ("so", "a bit", "kind of").
func skipIntensifiers(ws []word, k, b int) int {
	for k < b {
		switch {
		case intensifiers[ws[k].low]:
			k++
		case k+1 < b && (ws[k].low == "a" && (ws[k+1].low == "bit" || ws[k+1].low == "little") ||
			(ws[k].low == "kind" || ws[k].low == "sort") && ws[k+1].low == "of"):
			k += 2
		default:
			return k
		}
	}
	return k
}

// linkingVerbs take an adjective: "I feel great", "I stay motivated".
var linkingVerbs = stemSet("feel stay seem look sound become get keep remain grow", false)

// affectNext reports whether the complement opens with a word of feeling.
func (c *clause) affectNext() bool {
	k := skipIntensifiers(c.ws, c.compA, c.compB)
	if k >= c.compB || !affectAdjectives[c.ws[k].low] || c.unwell() {
		return false
	}
	// A particle before a preposition moves, it does not feel: "I got
	// back from the dentist", "we got in to the city".
	if t := c.ws[k].tag; (t == "RB" || t == "RP" || t == "IN") && k+1 < c.compB && (c.ws[k+1].tag == "IN" || c.ws[k+1].tag == "TO") {
		return false
	}
	return true
}

// unwell reports whether the speaker's clause has a complement that opens
// with a state of being unwell (healthStates, after intensifiers): "I am
// sick", "I got really ill"; not "sick of it". A feeling is not kept ("I'm
// tired"); being ill is.
func (c *clause) unwell() bool {
	if c.kind != subjSelf {
		return false // the speaker's own health: what the persona keeps
	}
	k := skipIntensifiers(c.ws, c.compA, c.compB)
	return k < c.compB && healthStates[c.ws[k].low] && (k+1 >= c.compB || c.ws[k+1].low != "of")
}

// contentful reports whether the complement holds something to remember: a
// noun that is neither light nor a time ("did it yesterday" holds
// nothing), a name, or a verb of its own right after the verb group ("I
// started dancing").
func (c *clause) contentful() bool {
	ws := c.ws
	first := skipIntensifiers(ws, c.compA, c.compB)
	for k := c.compA; k < c.compB; k++ {
		w := ws[k]
		switch {
		case w.tag == "NNP" || w.tag == "NNPS" || isNounTag(w.tag):
			if !lightNoun(w.low) && !timeWords[w.low] && !affectAdjectives[w.low] && !abstractNouns[w.low] {
				return true
			}
		case w.tag == "VBG" && k == first && !lightVerbs[verbStem(w.low)] && !mentalVerbs[verbStem(w.low)] && !continuingVerbs[c.vg.stem]:
			return true // "I started dancing"; not "I will keep pushing"
		case w.tag == "VB" && k == first+1 && ws[first].low == "to" && c.typ == engram.MemoryPreference && !lightVerbs[verbStem(w.low)]:
			return true // "I prefer to work remotely"
		case isAdjTag(w.tag) && c.vg.copula() && !affectAdjectives[w.low] && k == first:
			return true // "Jon is vegan", "my sister is very tall"
		case k == first && c.unwell():
			return true // "I got sick", "I have been ill all week"
		case w.tag == "VB" && k > first && ws[k-1].low == "to" && !c.vg.copula() && !lightVerbs[verbStem(w.low)] &&
			!mentalVerbs[verbStem(w.low)] && !presentMentalVerbs[verbStem(w.low)] && !pronounBetween(ws, c.compA, k):
			return true // a purpose: "I'm taking this weekend to relax"; not "I did it to help"
		case w.tag == "VBG" && k > first && adjunctGerund[ws[k-1].low] && !lightVerbs[verbStem(w.low)] && !mentalVerbs[verbStem(w.low)]:
			return true // the doing it happened in: "I fell asleep while driving", "I hurt my back after lifting"
		}
	}
	if c.vg.main >= 0 && !lightVerbs[c.vg.stem] && !mentalVerbs[c.vg.stem] && c.habitual() {
		return true // "I usually run", "I swim every weekend"
	}
	// A subject of the speaker's ("my son") with a verb of its own, and
	// something after it or done: "my team won", "my dog has died".
	return c.kind == subjMine && c.vg.main >= 0 && !lightVerbs[c.vg.stem] &&
		(c.compB > c.compA || (c.vg.past || c.vg.perfect) && !c.vg.neg)
}

// adjunctGerund are the words that put a gerund's doing around a clause's
// own: "while driving", "after lifting".
var adjunctGerund = wordSet("while after before when since")

// pronounBetween reports whether words [a, b) hold a personal pronoun.
func pronounBetween(ws []word, a, b int) bool {
	for k := a; k < b; k++ {
		if ws[k].tag == "PRP" {
			return true
		}
	}
	return false
}

// habitual reports whether the clause says how often: an adverb of
// frequency ("usually") or "every" + a period.
func (c *clause) habitual() bool {
	if c.vg.habit {
		return true
	}
	if c.prefixA < c.subjA && everyPeriod.MatchString(c.s[c.ws[c.prefixA].start:c.ws[c.subjA-1].end]) {
		return true
	}
	for k := c.compA; k+1 < c.compB; k++ {
		if c.ws[k].low == "every" && timeWords[c.ws[k+1].low] {
			return true
		}
	}
	return false
}

// withKin reports whether the complement opens with "with" and one of the
// speaker's relatives: "I went with my mom" is company, not a choice.
func (c *clause) withKin() bool {
	k := c.compA + 1
	if k+1 >= c.compB || c.ws[k].low != "my" && c.ws[k].low != "our" {
		return false
	}
	_, ok := enKin[c.ws[k+1].low]
	return ok
}

// everyPeriod is a habit's period before the subject: "Every morning, I
// run".
var everyPeriod = regexp.MustCompile(`(?i)^every (?:` + strings.TrimSuffix(strings.TrimPrefix(habitPeriods, "(?:"), ")") + `)s?\s*,?$`)

// embedsClause reports whether the complement holds a clause of its own: a
// subject pronoun and a verb.
func (c *clause) embedsClause() bool {
	ws := c.ws
	for k := c.compA; k+1 < c.compB; k++ {
		if (ws[k].text == "I" || ws[k].low == "we" || ws[k].low == "he" || ws[k].low == "she" || ws[k].low == "they") &&
			(isVerbTag(ws[k+1].tag) || ws[k+1].tag == "MD") {
			return true
		}
	}
	return false
}

// continuingVerbs go on with an activity the verb after them names: "keep
// pushing" says no more than "pushing".
var continuingVerbs = stemSet("keep continue", false)

// lightNoun reports whether a noun, singular or plural, is a light one.
func lightNoun(w string) bool {
	return lightNouns[w] || strings.HasSuffix(w, "s") && lightNouns[w[:len(w)-1]]
}

// timeWords name times; a clause about nothing but a time says nothing.
var timeWords = wordSet("yesterday today tomorrow tonight week weeks weekend weekends month months year years " +
	"morning mornings evening evenings night nights afternoon afternoons day days hour hours minute minutes " +
	"monday tuesday wednesday thursday friday saturday sunday january february march april may june july " +
	"august september october november december summer winter spring autumn fall ago while")

// finding builds the memory of a clause, or reports that it has none.
func (c *clause) finding(s string, ts time.Time, sp speakers, why string) (nlpFinding, bool) {
	typ := c.classify()
	c.typ = typ
	if typ == "" || !c.contentful() {
		return nlpFinding{}, false
	}
	if c.kind == subjGroup && (typ == engram.MemoryPlan || typ == engram.MemoryDecision) {
		c.inclusive = true
	}
	group := c.groupName(sp)
	f := nlpFinding{typ: typ, past: c.vg.past && !c.vg.habit}
	text := c.text(s, sp, group)
	if text == "" {
		return nlpFinding{}, false
	}
	if typ == engram.MemoryDecision {
		f.rationale = why
	} else if why != "" {
		text += " because " + why
	}
	text, f.at = resolveTimes(text, ts, typ == engram.MemoryPlan)
	f.text = capFirst(text)
	f.entities = c.entities()
	f.rel = standalone(c.relation(sp))
	return f, true
}

// groupName is who "we" names: the session's speakers when the clause
// includes the listener (a plan, a suggestion, a decision), else the
// speaker and others.
func (c *clause) groupName(sp speakers) string {
	if c.inclusive && len(sp.session) > 1 {
		names := []string{sp.self}
		for _, n := range sp.session {
			if !strings.EqualFold(n, sp.self) {
				names = append(names, n)
			}
		}
		return joinNames(names)
	}
	return sp.self + " and others"
}

func joinNames(names []string) string {
	switch len(names) {
	case 1:
		return names[0]
	case 2:
		return names[0] + " and " + names[1]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// text writes the clause from its subject to its end in the third person:
// the subject named, the first verb agreeing with it, the pronouns of the
// rest resolved, a time that stood before the subject moved to the end,
// and at most maxMemoryWords words.
func (c *clause) text(s string, sp speakers, group string) string {
	ws := c.ws
	end := c.compB
	if end-c.subjA > maxMemoryWords {
		end = c.subjA + maxMemoryWords
		for k := end - 1; k > c.compA; k-- {
			if ws[k].tag == "," {
				end = k
				break
			}
		}
	}
	var b strings.Builder
	from := c.subjB
	switch c.kind {
	case subjSelf:
		b.WriteString(sp.self)
		if c.implicitParts {
			switch w := ws[c.vg.a]; {
			case w.tag == "VBG":
				b.WriteString(" is")
			case w.tag == "VBN" && participleOnly[w.low]:
				b.WriteString(" has")
			}
		}
	case subjGroup:
		if c.subjB-c.subjA == 1 { // "we"
			b.WriteString(group)
		} else {
			b.WriteString(resolveWords(ws, c.subjA, c.subjB, s, sp, group))
		}
	case subjLet:
		b.WriteString(group)
		if c.typ == engram.MemoryDecision {
			b.WriteString(" decided")
		} else {
			b.WriteString(" plan")
		}
		if c.vg.neg {
			b.WriteString(" not")
		}
		b.WriteString(" to")
		if from = c.vg.main; from < 0 {
			from = c.vg.b
		}
	default:
		b.WriteString(resolveWords(ws, c.subjA, c.subjB, s, sp, group))
	}
	agreed := c.plural || c.kind == subjLet
	for k := from; k < end; k++ {
		w := ws[k]
		sep := " "
		if k > from {
			sep = gap(s, ws, k)
		}
		txt := w.text
		inGroup := k >= c.vg.a && k < c.vg.b
		switch {
		case inGroup && !agreed && (isVerbTag(w.tag) || w.tag == "MD" || beForms[w.low] || haveForms[w.low] || doForms[w.low]):
			agreed = true
			txt = agree(w)
		case !inGroup:
			if r, ok := resolvePronoun(ws, k, sp, group); ok {
				txt = r
			}
		}
		if txt == "" {
			continue // an emphatic reflexive, left out with the space before it
		}
		b.WriteString(sep)
		b.WriteString(txt)
	}
	out := strings.Join(strings.Fields(b.String()), " ")
	out = strings.TrimRight(out, ",;:-–— ")
	// Phrases of place before the subject ("At the lake, I ...") and a
	// time ("Last Friday, I went ...") go to the end.
	if place, when, ok := c.frontedPlace(sp, group); ok {
		return strings.TrimSpace(out + " " + place + " " + when)
	}
	if c.prefixA < c.subjA {
		pre := strings.TrimRight(strings.TrimSpace(s[ws[c.prefixA].start:ws[c.subjA-1].end]), ",;: ")
		if _, ok := timeexpr.Suffix(pre, timeSuffixDay); ok && pre != "" || everyPeriod.MatchString(pre) || timePhrase(ws, c.prefixA, c.subjA) {
			out += " " + lowerFirst(pre)
		} else if m := planPeriod.FindStringSubmatch(pre); m != nil {
			out += " " + strings.ToLower(m[1])
		}
	}
	return out
}

// frontedPlace returns the phrases of place or company that stand before
// the subject, pronouns resolved, and the time before them, if any.
func (c *clause) frontedPlace(sp speakers, group string) (place, when string, ok bool) {
	if c.prefixA >= c.subjA {
		return "", "", false
	}
	ws := c.ws
	p, ok := frontedPlace(ws, c.prefixA, c.subjA)
	if !ok {
		return "", "", false
	}
	e := c.subjA
	for e > p && ws[e-1].tag == "," {
		e--
	}
	place = resolveWords(ws, p, e, c.s, sp, group)
	if p > c.prefixA {
		when = lowerFirst(strings.TrimRight(strings.TrimSpace(c.s[ws[c.prefixA].start:ws[p-1].end]), ",;: "))
	}
	return place, when, true
}

// presence is what a clause of the speaker's in the past says when it
// says nothing itself but a phrase of place stands before it: "Last Friday
// at the climbing gym with friends I felt it" places the speaker there,
// as any past clause does of its subject.
func (c *clause) presence(ts time.Time, sp speakers) (nlpFinding, bool) {
	g := c.vg
	if c.kind != subjSelf || c.implicitParts || !g.past || g.neg || g.weak || g.future || g.intent || g.duty {
		return nlpFinding{}, false
	}
	place, when, ok := c.frontedPlace(sp, c.groupName(sp))
	if !ok {
		return nlpFinding{}, false
	}
	p, _ := frontedPlace(c.ws, c.prefixA, c.subjA)
	if l := c.ws[p].low; l != "at" && l != "in" && l != "on" {
		return nlpFinding{}, false // company alone ("With my cousins, I ...") is no place
	}
	concrete := false
	for k := p + 1; k < c.subjA; k++ {
		if w := c.ws[k]; isNounTag(w.tag) && !lightNoun(w.low) && !timeWords[w.low] && !abstractNouns[w.low] {
			concrete = true
		}
	}
	if !concrete {
		return nlpFinding{}, false // "In the end, I ..."
	}
	text := strings.TrimSpace(sp.self + " was " + place + " " + when)
	text, at := resolveTimes(text, ts, false)
	return nlpFinding{typ: engram.MemoryEvent, text: capFirst(text), entities: entities(place), at: at}, true
}

// gap is the text between word k-1 and word k.
func gap(s string, ws []word, k int) string { return s[ws[k-1].end:ws[k].start] }

func lowerFirst(s string) string {
	if s != "" && s[0] >= 'A' && s[0] <= 'Z' && (len(s) == 1 || s[1] < 'A' || s[1] > 'Z') {
		return string(s[0]+'a'-'A') + s[1:]
	}
	return s
}

// participleOnly are past participles that are no past tense: a dropped
// subject before them takes "has" ("Been busy").
var participleOnly = wordSet("been gone gotten taken seen given written known chosen flown driven eaten fallen " +
	"spoken ridden grown drawn broken forgotten begun sung done")

// agree returns the form of a verb for a third-person singular subject.
func agree(w word) string {
	if strings.IndexFunc(w.low, func(r rune) bool { return r < 'a' || r > 'z' }) >= 0 {
		return w.text // "do-", a word cut short
	}
	switch w.low {
	case "am", "are":
		return "is"
	case "were":
		return "was"
	case "have":
		return "has"
	case "do":
		return "does"
	}
	if base, ok := irregularPast[w.low]; ok && base != w.low || strings.HasSuffix(w.low, "ed") && !strings.HasSuffix(w.low, "eed") {
		return w.text // "built", "started": tagged VBP at times; "need" and "feed" are no past
	}
	if w.tag == "VBP" || w.tag == "VB" {
		return thirdSingular(w.low)
	}
	return w.text
}

// resolvePronoun returns what the pronoun at k names, in the third person;
// "" for an emphatic reflexive, which is left out.
func resolvePronoun(ws []word, k int, sp speakers, group string) (string, bool) {
	w := ws[k]
	if emphaticReflexive(ws, k) {
		return "", true
	}
	switch w.low {
	case "i", "me", "myself":
		if w.low == "i" && w.text != "I" {
			return "", false
		}
		return sp.self, true
	case "my", "mine":
		return sp.self + "'s", true
	case "we", "us", "ourselves":
		return group, true
	case "our", "ours":
		if strings.HasSuffix(group, " and others") {
			return sp.self + "'s", true
		}
		return group + "'s", true
	case "you", "yourself":
		if sp.other != "" {
			return sp.other, true
		}
	case "your", "yours":
		if sp.other != "" {
			return sp.other + "'s", true
		}
	case "am":
		if k > 0 && ws[k-1].text == "I" {
			return "is", true
		}
	case "have", "do":
		if k > 0 && ws[k-1].text == "I" {
			return agree(w), true
		}
	}
	if k > 0 && ws[k-1].text == "I" && w.tag == "VBP" {
		return thirdSingular(w.low), true // "since I work there"
	}
	return "", false
}

// resolveWords writes words [a, b) with their pronouns resolved.
func resolveWords(ws []word, a, b int, s string, sp speakers, group string) string {
	var out strings.Builder
	for k := a; k < b; k++ {
		r, ok := resolvePronoun(ws, k, sp, group)
		if !ok {
			r = ws[k].text
		} else if r == "" {
			continue // an emphatic reflexive
		}
		if k > a {
			out.WriteString(gap(s, ws, k))
		}
		out.WriteString(r)
	}
	return out.String()
}

// emphaticReflexive reports whether the word at k is a reflexive pronoun
// that only stresses who did it ("I baked it myself", "I myself think"):
// one that follows no verb, whose object it would be ("I hurt myself"),
// and no preposition ("a gift for myself").
func emphaticReflexive(ws []word, k int) bool {
	if !reflexives[ws[k].low] || k == 0 {
		return false
	}
	prev := ws[k-1].tag
	return !isVerbTag(prev) && prev != "IN" && prev != "TO"
}

// reflexives are the reflexive pronouns that can stand emphatic after a
// first- or second-person subject.
var reflexives = wordSet("myself yourself ourselves")

// resolveSpan is the text of a reason clause, pronouns resolved.
func resolveSpan(ws []word, a, b int, sp speakers, inclusive bool, s string) string {
	c := clause{inclusive: inclusive}
	out := resolveWords(ws, a, b, s, sp, c.groupName(sp))
	return strings.TrimRight(strings.TrimSpace(out), ",;:-–— ")
}

// resolveTimes writes each relative time expression of text as the date it
// names, resolved against the turn's time ts: "yesterday" said on 20
// January 2023 is "on 19 January 2023", "last week" "in the week of 9
// January 2023", "next month" "in February 2023". An expression that holds
// a year, or a vague one ("recently"), stays as written, and so does one
// of a plan that names a past period (a month without a year means the
// coming one there). at is the start of the first expression, when it is
// before ts.
func resolveTimes(text string, ts time.Time, plan bool) (string, time.Time) {
	var at time.Time
	if ts.IsZero() {
		return text, at
	}
	for _, r := range timeexpr.Find(text, ts, 3) {
		if plan && !r.To.After(ts) {
			continue // "I plan to run it in September": the parser reads the last September
		}
		if at.IsZero() && r.From.Before(ts) {
			at = r.From
		}
		if hasYear(r.Expr) || vagueTime[strings.ToLower(r.Expr)] {
			continue
		}
		i := strings.Index(text, r.Expr)
		if i < 0 {
			continue
		}
		end := i + len(r.Expr)
		d := dateOf(r)
		if strings.HasPrefix(d, "around ") {
			for _, hedge := range []string{"about ", "around ", "roughly ", "almost ", "nearly "} {
				if strings.HasSuffix(strings.ToLower(text[:i]), hedge) {
					i -= len(hedge)
					break
				}
			}
		}
		text = text[:i] + d + text[end:]
	}
	return text, at
}

var vagueTime = wordSet("recently lately")

func hasYear(s string) bool {
	digits := 0
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			digits++
			if digits == 4 {
				return true
			}
		} else {
			digits = 0
		}
	}
	return false
}

// dateOf writes the period of r as a phrase.
func dateOf(r timeexpr.Range) string {
	const day = "2 January 2006"
	from, to := r.From, r.To
	last := to.AddDate(0, 0, -1)
	since := strings.HasPrefix(strings.ToLower(r.Expr), "since")
	switch {
	case since && from.Month() == 1 && from.Day() == 1:
		return "since " + from.Format("2006")
	case since && from.Day() == 1:
		return "since " + from.Format("January 2006")
	case since:
		return "since " + from.Format(day)
	case to.Equal(from.AddDate(0, 0, 1)):
		return "on " + from.Format(day)
	case from.Day() == 1 && from.Month() == 1 && to.Equal(from.AddDate(1, 0, 0)):
		return "in " + from.Format("2006")
	case from.Day() == 1 && to.Equal(from.AddDate(0, 1, 0)):
		return "in " + from.Format("January 2006")
	case to.Equal(from.AddDate(0, 0, 7)) && from.Weekday() == time.Monday:
		return "in the week of " + from.Format(day)
	case to.Equal(from.AddDate(0, 0, 2)) && from.Weekday() == time.Saturday:
		return "on the weekend of " + from.Format(day)
	case to.Sub(from) <= 10*24*time.Hour: // "a few days ago", "two weeks ago": a window around a day
		return "around " + from.Add(to.Sub(from)/2).Format(day)
	case strings.Contains(strings.ToLower(r.Expr), "ago") && to.Sub(from) <= 62*24*time.Hour:
		return "around " + from.Add(to.Sub(from)/2).Format("January 2006")
	case strings.Contains(strings.ToLower(r.Expr), "ago"):
		return "around " + from.Add(to.Sub(from)/2).Format("2006")
	case from.Year() == last.Year():
		return "between " + from.Format("2 January") + " and " + last.Format(day)
	}
	return "between " + from.Format(day) + " and " + last.Format(day)
}
