package extract

// The entities and the knowledge-graph relation of an analysed clause:
// patterns over its tags and words, with the object helpers of the rules
// extractor (rules_relations.go) for cutting objects.

import (
	"regexp"
	"slices"
	"strings"

	"github.com/engram-dev/engram"
)

// compText is the complement as written, from word a on.
func (c *clause) compText(a int) string {
	if a >= c.compB {
		return ""
	}
	return c.s[c.ws[a].start:c.ws[c.compB-1].end]
}

// entities are the clause's proper-noun runs (the tagger's NNP and NNPS),
// numbers of two or more digits, identifiers and quoted terms; not the
// pronoun I.
func (c *clause) entities() []string {
	ws := c.ws
	var out []string
	add := func(e string) {
		e = strings.Trim(e, " ,.;:!?'\"")
		if e == "" || e == "I" || len(out) >= maxEntities || containsFold(out, e) {
			return
		}
		out = append(out, e)
	}
	from := c.subjA
	if c.kind == subjLet || c.kind == subjSelf {
		from = c.vg.a
	}
	for k := from; k < c.compB; k++ {
		w := ws[k]
		switch {
		case w.tag == "NNP" || w.tag == "NNPS":
			j := k
			for j+1 < c.compB && (ws[j+1].tag == "NNP" || ws[j+1].tag == "NNPS") && ws[j+1].start == ws[j].end+1 {
				j++
			}
			if r := ws[k].text[0]; r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || !strings.EqualFold(ws[k].text, ws[k].low) {
				add(c.s[ws[k].start:ws[j].end])
			}
			k = j
		case w.tag == "CD" && digitsRe.MatchString(w.text), len(w.text) > 1 && isIdent(w.text):
			add(w.text)
		}
	}
	// Capitalised words the tagger took for common nouns ("Postgres"),
	// quoted terms, identifiers.
	if from < c.compB {
		for _, e := range entities(c.s[ws[from].start:ws[c.compB-1].end]) {
			add(e)
		}
	}
	return out
}

// verbText is the clause from its main verb on, as written.
func (c *clause) verbText() string {
	if c.vg.main < 0 {
		return c.compText(c.compA)
	}
	return c.s[c.ws[c.vg.main].start:c.ws[c.compB-1].end]
}

// relation returns the clause's triple about the speaker, or nil.
func (c *clause) relation(sp speakers) *engram.Relation {
	S := sp.self
	g := c.vg
	comp := object(S, c.compText(c.compA))
	switch c.kind {
	case subjMine:
		return c.mineRelation(S)
	case subjSelf:
	case subjGroup, subjLet, subjOther:
		if c.typ != engram.MemoryDecision {
			return nil
		}
	default:
		return nil
	}
	switch c.typ {
	case engram.MemoryDecision:
		return c.decisionRelation(S)
	case engram.MemoryPreference:
		if g.copula() {
			// "passionate about X", "into X", "a fan of X".
			if k := c.preferenceObject(); k >= 0 {
				pred := "likes"
				if g.neg {
					pred = "dislikes" // "I wasn't a fan of the zombies"
				}
				return objectRel(S, pred, object(S, c.objectText(k)))
			}
			return nil
		}
		pred := preferenceVerbs[g.stem]
		if g.neg {
			if pred != "likes" || verbIs(g.stem, "love") {
				return nil // not loving X is no dislike
			}
			pred = "dislikes"
		}
		return objectRel(S, pred, object(S, c.objectText(c.compA)))
	}
	if g.neg {
		return nil
	}
	switch {
	case verbIs(g.stem, "live") && !g.past && hasPrefixFold(comp, "in "):
		return newRel(S, "lives_in", home(comp[3:]))
	case (verbIs(g.stem, "move") || verbIs(g.stem, "relocate")) && (g.past || g.perfect) && hasPrefixFold(comp, "to "):
		return placeRel(S, "lives_in", comp[3:], placeCuts)
	case g.copula() && hasPrefixFold(comp, "from "):
		return placeRel(S, "is_from", comp[5:], liveCuts)
	case g.copula() && !g.past && c.kind == subjSelf && c.nameComplement():
		// "I'm Kate": a self-introduction. The name becomes an alias of the
		// speaker in the graph, so "what did Kate cook" finds the turns of
		// a speaker whose messages are signed otherwise.
		return newRel(S, "name", comp)
	case g.copula() && !g.past && (hasPrefixFold(comp, "a ") || hasPrefixFold(comp, "an ")):
		return identityRel(S, comp)
	case g.pass && g.main >= 0 && c.ws[g.main].low == "born" && hasPrefixFold(comp, "in "):
		return placeRel(S, "born_in", comp[3:], placeCuts)
	case verbIs(g.stem, "work") && !g.past && !g.perfect:
		if prep, x, ok := strings.Cut(comp, " "); ok && strings.EqualFold(prep, "on") {
			return projectRel(S, x)
		} else if ok {
			return workRel(S, prep, x)
		}
	case (projectVerbs[g.stem] || verbIs(g.stem, "get") || verbIs(g.stem, "land")) && (g.past || g.perfect || g.progressive) && jobAt.MatchString(comp):
		// "I started a new job at Globex", "I got a job at Acme".
		return workRel(S, "at", jobAt.FindStringSubmatch(comp)[1])
	case projectVerbs[g.stem] && (g.past || g.perfect || g.progressive) && c.nounObject():
		return projectRel(S, comp)
	case c.habitual() && !g.past && g.main >= 0 && !g.future:
		period := ""
		if c.prefixA < c.subjA {
			if pre := strings.TrimRight(c.s[c.ws[c.prefixA].start:c.ws[c.subjA-1].end], " ,"); everyPeriod.MatchString(pre) {
				period = strings.ToLower(pre)
			}
		}
		return habitRel(S, c.ws[g.main].low, comp, period)
	case verbIs(g.stem, "have") && !g.past && c.compA < c.compB:
		// "I have a dog named Max".
		f := strings.Fields(comp)
		if len(f) >= 4 && (f[0] == "a" || f[0] == "an") && (f[2] == "named" || f[2] == "called") {
			if k, ok := enKin[strings.ToLower(f[1])]; ok {
				return nameRel(S, k.pred, strings.Join(f[3:], " "), true)
			}
		}
	}
	return c.actionRelation(S)
}

// actionPreps join a verb to its object in an action's triple: "went to
// Paris", "applied to adoption agencies".
var actionPreps = wordSet("to at in into for with on from about")

// maxActionWords bounds an action's object: a longer one is a description.
const maxActionWords = 5

// actionRelation is the triple of something the speaker did, does or plans
// that no pattern above reads: (S, the verb as said [_preposition], the object's
// noun phrase), a plan's verb prefixed "plans_to_": "I applied to two
// adoption agencies" is (S, applied_to, two adoption agencies), "I'm going
// to make tomato soup" (S, plans_to_make, tomato soup). The object must
// hold a noun that names something ("had a great time" holds none), and a
// thinking verb makes no action, nor does a habit given up ("I used to
// play tennis" says nothing of now).
func (c *clause) actionRelation(S string) *engram.Relation {
	g, ws := c.vg, c.ws
	if c.kind != subjSelf || g.main < 0 || g.neg || g.attempt || g.habit && g.past || mentalVerbs[g.stem] || presentMentalVerbs[g.stem] ||
		c.typ != engram.MemoryEvent && c.typ != engram.MemoryPlan && c.typ != engram.MemoryFact {
		return nil
	}
	verb := ws[g.main].low
	if !isWordText(verb) {
		return nil
	}
	k := c.compA
	if k < c.compB && ws[k].tag == "RP" { // a particle: "picked up", "signed up for"
		verb += "_" + ws[k].low
		k++
	}
	if k < c.compB && actionPreps[ws[k].low] {
		verb += "_" + ws[k].low
		k++
	}
	e, ok := c.thingPhrase(k)
	if !ok || e <= k {
		return nil
	}
	if c.typ == engram.MemoryPlan {
		if ws[g.main].tag == "VBG" {
			return nil // "planning on buying": the predicate would need the base form, which a suffix does not give
		}
		verb = "plans_to_" + verb
	}
	x := stripArticle(object(S, c.s[ws[k].start:ws[e-1].end]))
	if rest, ok := cutPrefixFold(x, S+"'s "); ok {
		x = rest
	}
	if len(strings.Fields(x)) > maxActionWords {
		return nil
	}
	return newRel(S, verb, x)
}

// thingPhrase finds the noun phrase at word k (articles, the speaker's
// possessives ("my", not "our", which may hold the listener), numbers and
// adjectives, then nouns, up to a time, and an "of" with a noun phrase of
// its own: "a chapter of a book") and returns where its last noun ends. It
// reports false when the phrase holds no noun that names something (a
// light noun, a time or an abstraction names nothing) or is someone
// else's ("your advice").
func (c *clause) thingPhrase(k int) (int, bool) {
	named, start, end := false, k, k
	for ; k < c.compB; k++ {
		w := c.ws[k]
		switch t := w.tag; {
		case t == "PRP$":
			if w.low != "my" {
				return end, false
			}
		case timeWords[w.low]:
			return end, named // "for the exam yesterday"
		case t == "DT" || t == "CD" || isAdjTag(t) || t == "POS":
		case (t == "VBN" || t == "VBG") && k+1 < c.compB && (isNounTag(c.ws[k+1].tag) || isAdjTag(c.ws[k+1].tag)) && k > start:
			// A participle inside the phrase: "peanut encrusted hot dogs".
		case isNounTag(t):
			if !lightNoun(w.low) && !abstractNouns[w.low] && !affectAdjectives[w.low] {
				named = true
			}
			end = k + 1
		case w.low == "of" && named && k+1 < c.compB && !isVerbTag(c.ws[k+1].tag):
		default:
			return end, named
		}
	}
	return end, named
}

// nameComplement reports whether the complement is a name and nothing
// else: one or two proper nouns, capitalised, up to the end of the clause.
func (c *clause) nameComplement() bool {
	n := 0
	for k := c.compA; k < c.compB; k++ {
		w := c.ws[k]
		switch {
		case w.tag == "." || w.tag == "," || w.tag == ":":
			continue
		case w.tag == "NNP" && w.text[0] >= 'A' && w.text[0] <= 'Z' && w.text[1:] == strings.ToLower(w.text[1:]):
			n++
		default:
			return false
		}
	}
	return n == 1 || n == 2
}

// jobAt is the object of a new job: "a new job at Globex".
var jobAt = regexp.MustCompile(`(?i)^(?:a |an |my |the )?(?:new |first |part-time |full-time |temp |summer )?(?:job|position|role|internship) (?:at|with) (.+)`)

// projectVerbs start or make something: "I started a dance studio", "we
// are building a platform".
var projectVerbs = stemSet("start launch open build create develop", false)

// nounObject reports whether the complement opens with a noun phrase (not
// a verb: "started running" is no project).
func (c *clause) nounObject() bool {
	for k := c.compA; k < c.compB; k++ {
		switch t := c.ws[k].tag; {
		case t == "DT" || t == "PRP$" || isAdjTag(t) || t == "CD":
		case isNounTag(t):
			return true
		default:
			return false
		}
	}
	return false
}

// projectRel is (who, works_on, the thing): its noun phrase, without the
// article and what follows it.
func projectRel(who, x string) *engram.Relation {
	x = stripArticle(cutAt(x, relCuts, toolCuts, liveCuts))
	if rest, ok := cutPrefixFold(x, who+"'s "); ok {
		x = rest
	}
	if len(strings.Fields(x)) > maxToolWords {
		return nil
	}
	return newRel(who, "works_on", x)
}

// decisionRelation is the tool a decision chooses, or what it rules out:
// (S, uses_for_<purpose>, X), (S, uses, X), (S, avoids, X).
func (c *clause) decisionRelation(S string) *engram.Relation {
	vp := object(S, c.verbText())
	if c.kind == subjLet || c.vg.future || c.vg.intent || c.vg.duty {
		if c.vg.neg {
			for _, v := range toolVerbOrder {
				if rest, ok := cutPrefixFold(vp, v+" "); ok && (v == "use" || v == "adopt" || v == "pick" || v == "choose") {
					return nameRel(S, "avoids", decisionObj(S, rest), true)
				}
			}
			return nil
		}
		return toolRel(S, decisionObj(S, vp))
	}
	if c.vg.neg {
		return nil
	}
	verb, rest, _ := strings.Cut(vp, " ")
	v := verbStem(verb)
	after := func(prep string) (string, bool) { return cutPrefixFold(rest, prep+" ") }
	switch {
	case verbIs(v, "decide"):
		if x, ok := after("to"); ok {
			if y, ok := cutPrefixFold(x, "not "); ok {
				if z, ok := cutPrefixFold(y, "use "); ok {
					return nameRel(S, "avoids", decisionObj(S, z), true)
				}
				return nil
			}
			return toolRel(S, decisionObj(S, x))
		}
		if x, ok := after("on"); ok {
			return useRel(S, "decided on", decisionObj(S, x))
		}
	case verbIs(v, "agree"):
		if x, ok := after("to"); ok {
			return toolRel(S, decisionObj(S, x))
		}
	case verbIs(v, "settle"):
		if x, ok := after("on"); ok {
			return useRel(S, "settled on", decisionObj(S, x))
		}
	case verbIs(v, "go"):
		if x, ok := after("with"); ok {
			return useRel(S, "went with", decisionObj(S, x))
		}
	case verbIs(v, "opt"):
		if x, ok := after("for"); ok {
			return useRel(S, "opted for", decisionObj(S, x))
		}
	case verbIs(v, "choose"):
		if x, ok := after("to"); ok {
			return toolRel(S, decisionObj(S, x))
		}
		return useRel(S, "chose", decisionObj(S, rest))
	case verbIs(v, "pick"):
		return useRel(S, "picked", decisionObj(S, rest))
	}
	return toolRel(S, decisionObj(S, vp))
}

// mineRelation reads a clause about one of the speaker's own: "my sister
// Maria lives in Oslo", "my favourite book is Dune".
func (c *clause) mineRelation(S string) *engram.Relation {
	ws := c.ws
	// The subject's words after "my"/"our".
	a := c.subjA
	for a < c.subjB && (ws[a].low == "my" || ws[a].low == "our") {
		a++
	}
	if a >= c.subjB || c.vg.neg {
		return nil
	}
	np := c.s[ws[a].start:ws[c.subjB-1].end]
	rest := object(S, c.s[ws[c.subjB].start:ws[c.compB-1].end])
	verb, x, _ := strings.Cut(rest, " ")
	if c.mineHead == "favourite" {
		if _, noun, ok := strings.Cut(np, " "); ok && (verb == "is" || verb == "are") {
			return favouriteRel(S, []string{"", "favourite " + noun + " " + verb, x})
		}
		return nil
	}
	if strings.EqualFold(np, "name") && verb == "is" {
		return nameRel(S, "name", x, true) // "my name is Maria Silva"
	}
	// Find the relative: the first noun of the phrase that names one.
	words := strings.Fields(np)
	for i, w := range words {
		lw := strings.ToLower(strings.TrimSuffix(w, "'s"))
		if _, ok := enKin[lw]; !ok {
			continue
		}
		kinWords := strings.Join(words[:i+1], " ")
		after := strings.TrimSpace(strings.Join(words[i+1:], " ") + " " + rest)
		return kinRel(S, []string{"", kinWords, after})
	}
	return nil
}

// preferenceObject returns where the object of a copula preference starts:
// after "into", "a (big) fan of", or an adjective's preposition
// ("passionate about"); -1 if the complement is none of these.
func (c *clause) preferenceObject() int {
	ws := c.ws
	k := skipIntensifiers(ws, c.compA, c.compB)
	switch {
	case k >= c.compB:
	case ws[k].low == "into":
		return k + 1
	case ws[k].low == "a" || ws[k].low == "an":
		for j := k + 1; j < c.compB && j < k+4; j++ {
			if ws[j].low == "fan" && j+1 < c.compB && ws[j+1].low == "of" {
				return j + 2
			}
		}
	default:
		if p, ok := preferenceAdjectives[ws[k].low]; ok && k+1 < c.compB && ws[k+1].low == p {
			return k + 2
		}
	}
	return -1
}

// objectText is the complement from word a up to where its object ends: a
// dash, a semicolon, a parenthesis, a clause ("because", "which", "when"),
// or a comma that does not stand between two adjectives ("a safe, inviting
// place" keeps its comma).
func (c *clause) objectText(a int) string {
	ws := c.ws
	end := a
	for ; end < c.compB; end++ {
		w := ws[end]
		switch {
		case w.text == "-" || w.text == "--" || w.text == ";" || w.text == ":" || w.text == "(":
		case w.tag == "WRB" || w.tag == "WDT" || w.tag == "WP" || w.low == "because" || w.low == "since" || w.low == "while":
		case w.tag == ",":
			if end > a && end+1 < c.compB && isAdjTag(ws[end-1].tag) && isAdjTag(ws[end+1].tag) {
				continue
			}
		default:
			continue
		}
		break
	}
	if end <= a {
		return ""
	}
	return c.s[ws[a].start:ws[end-1].end]
}

// objectRel is tasteRel for an object objectText already cut at its
// clause: a comma left in it stands between adjectives.
func objectRel(subj, pred, x string) *engram.Relation {
	x = cutAt(x, relCutsInObject)
	if pred == "prefers" {
		x, _ = cutPrefixFold(x, "to ")
		x = cutAt(x, prefCuts)
	}
	return newRel(subj, pred, x)
}

// relCutsInObject are relCuts but the comma.
var relCutsInObject = slices.DeleteFunc(slices.Clone(relCuts), func(c string) bool { return c == "," })
