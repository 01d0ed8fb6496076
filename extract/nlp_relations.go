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
					pred = "dislikes" // "I wasn't a fan of the vampires"
				}
				x, rel := c.objectText(k)
				return objectRel(S, pred, object(S, x), object(S, rel))
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
		x, rel := c.objectText(c.compA)
		return objectRel(S, pred, object(S, x), object(S, rel))
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
			if c.compA+2 == c.compB && c.ws[c.compA+1].tag == "NN" && c.ws[c.compA+1].low == c.ws[c.compA+1].text {
				// A singular noun without an article names no thing
				// worked on but a place or a state: "on site", "on call".
				return nil
			}
			return projectRel(S, x)
		} else if ok {
			return workRel(S, prep, x)
		}
	case (projectVerbs[g.stem] || verbIs(g.stem, "get") || verbIs(g.stem, "land")) && (g.past || g.perfect || g.progressive) && !g.intent && !g.attempt && jobAt.MatchString(comp):
		// "I started a new job at Globex", "I got a job at Acme".
		return workRel(S, "at", jobAt.FindStringSubmatch(comp)[1])
	case projectVerbs[g.stem] && (g.past || g.perfect || g.progressive) && !g.intent && !g.attempt && c.nounObject():
		// ("thinking about creating a game", "tried to build a shed":
		// nothing is made yet.)
		if c.ofGerund() {
			return nil // "a habit of going to bed late": the thing is the gerund's phrase, cut
		}
		return projectRel(S, comp)
	case c.habitual() && !g.past && g.main >= 0 && !g.future && !g.duty && !g.intent && !g.pass:
		// A habit is something the speaker does: not a duty ("I have to
		// get up at 6 every day"), a wish ("I always want to"), or what is
		// done to the speaker or felt ("I'm always amazed by it").
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
// play tennis" says nothing of now), nor "keep" or "continue", whose
// activity is the gerund after them ("I'll keep practicing").
func (c *clause) actionRelation(S string) *engram.Relation {
	g, ws := c.vg, c.ws
	if c.kind != subjSelf || g.main < 0 || g.neg || g.attempt || g.habit && g.past || mentalVerbs[g.stem] || presentMentalVerbs[g.stem] || continuingVerbs[g.stem] ||
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
	if !ok || e <= k || c.leftBehind(k, e) {
		return nil
	}
	if _, ok := preferenceVerbs[g.stem]; ok && c.anaphoric(k, e) {
		return nil // "I enjoyed the show"
	}
	if verbIs(g.stem, "find") && e < c.compB && (isAdjTag(ws[e].tag) || strings.HasPrefix(ws[e].tag, "RB") || ws[e].low == "to") {
		return nil // "I found the book boring": a judgement, not a find
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
		case (t == "VBN" || t == "VBG" || t == "VBD" && strings.HasSuffix(w.low, "ed") && isNounTag(c.ws[k-1].tag)) && k+1 < c.compB && (isNounTag(c.ws[k+1].tag) || isAdjTag(c.ws[k+1].tag)) && k > start:
			// A participle inside the phrase: "honey glazed sweet rolls";
			// after a noun, the tagger's past form in -ed is one ("the
			// lemon flavored ice cream"): the clause's verb came before.
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

// leftBehind reports whether the noun phrase [k, e) needs what follows it
// to mean anything: an "of" phrase it could not take ("the handle of it",
// "the edge of the two", "a habit of going"); a verb, which makes
// the phrase the subject of a clause; or, after a definite phrase, a
// relative clause or an infinitive that says which one is meant ("the book
// that ...", "the decision to ..."; "a lobster that was blue" is a lobster
// all the same).
func (c *clause) leftBehind(k, e int) bool {
	if e >= c.compB {
		return false
	}
	switch w := c.ws[e]; {
	case w.low == "of":
		return true
	case w.tag == "VB" || w.tag == "VBZ" || w.tag == "VBP" || w.tag == "MD" || beForms[w.low]:
		// The phrase is the subject of a clause: "I had a friend lose his
		// keys", "I'd say the sequel is better". (A past form may be a
		// chat's next clause with its subject dropped: "lost my keys got
		// wet".)
		return true
	case w.low == "to" && e+1 < c.compB && c.ws[e+1].tag == "VB":
		// "made the decision to move": which decision is the infinitive.
		// (After a preposition it is a purpose: "went to the spa to
		// relax".)
		return c.definiteBefore(k, e) && !actionPreps[c.ws[k-1].low]
	case relativeWords[w.low] && isNounTag(c.ws[e-1].tag), newClauseAt(c.ws, e, c.compB):
		return c.definiteBefore(k, e)
	}
	return false
}

// ofGerund reports whether the noun phrase that opens the complement goes
// on with "of" and a gerund: "a habit of going to bed late".
func (c *clause) ofGerund() bool {
	k := c.compA
	for k < c.compB && (c.ws[k].tag == "DT" || c.ws[k].tag == "PRP$" || c.ws[k].tag == "CD" || isAdjTag(c.ws[k].tag) || isNounTag(c.ws[k].tag)) {
		k++
	}
	return k+1 < c.compB && c.ws[k].low == "of" && c.ws[k+1].tag == "VBG"
}

// standalone returns r when its object means something read alone, else
// nil: an object that holds a pronoun names what the fact does not hold
// ("listening to them", "the taste of it", "a photo of this"), and the
// first person in an object is a clause run into it ("cooking as I
// learned"). A quote the cut left open is taken out: `the film "Heat`.
func standalone(r *engram.Relation) *engram.Relation {
	if r == nil {
		return nil
	}
	if strings.Count(r.Object, `"`)%2 == 1 {
		r.Object = strings.Join(strings.Fields(strings.ReplaceAll(r.Object, `"`, "")), " ")
		if r.Object == "" {
			return nil
		}
	}
	fields := strings.Fields(r.Object)
	for i, f := range fields {
		w := strings.ToLower(strings.Trim(f, `,.!?;:"()`))
		if j := strings.IndexAny(w, "'’"); j > 0 {
			w = w[:j]
		}
		if len(w) > 1 && strings.Trim(f, `,.!?;:"()`) == strings.ToUpper(w) {
			continue // an acronym: "IT", "US"
		}
		if w == "i" || outsidePronouns[w] || i == len(fields)-1 && (w == "one" || w == "that") {
			return nil
		}
	}
	return r
}

// outsidePronouns point to something outside the phrase that holds them.
var outsidePronouns = wordSet("me you your yours he him his she her hers it its they them their theirs this these those ones mine ours")

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
// place" keeps its comma). It returns the object and, apart, a restrictive
// relative clause that stays with it: with no comma before it, "that",
// "which", "who" or "where" after a noun says which one is meant ("movies
// that never end", "the scene where the dog wins"), and the noun alone would
// say more than the speaker did. It returns "" when the object means nothing
// without what follows: a relative clause too long to keep, a verb whose
// object is the clause after it ("learning how bread is made"), or a
// definite noun phrase whose clause follows with no relative word ("the
// message it sends").
func (c *clause) objectText(a int) (string, string) {
	ws := c.ws
	end, rel := a, ""
loop:
	for ; end < c.compB; end++ {
		w := ws[end]
		switch {
		case w.text == "-" || w.text == "--" || w.text == ";" || w.text == ":" || w.text == "(":
		case end > a && isNounTag(ws[end-1].tag) && relativeWords[w.low] && (w.low != "that" || end+1 < c.compB && !isNounTag(ws[end+1].tag)):
			e := end + 1
			for e < c.compB && ws[e].tag != "," && ws[e].tag != ":" && ws[e].tag != "CC" && ws[e].text != "-" && ws[e].text != "(" && ws[e].low != "because" {
				e++
			}
			if e-end-1 > maxRelativeWords || e == end+1 {
				return "", ""
			}
			rel = c.s[ws[end].start:ws[e-1].end]
			break loop
		case w.tag == "WRB" || w.tag == "WDT" || w.tag == "WP" || w.low == "because" || w.low == "since",
			w.low == "cause" && end+1 < c.compB && (ws[end+1].tag == "PRP" || ws[end+1].tag == "PRP$"):
			if end > a && isVerbTag(ws[end-1].tag) && strings.HasPrefix(w.tag, "W") {
				return "", "" // "interested in knowing how it is done"
			}
		case w.low == "while":
			if end > a && ws[end-1].low == "a" {
				// "a fan of jazz for a while": a time, not a clause.
				end--
				if end > a && ws[end-1].tag == "IN" {
					end--
				}
			}
		case end > a && newClauseAt(ws, end, c.compB):
			// Chat runs two clauses together: "I love skating it's my
			// favourite sport". The words that lead into the second ("as",
			// "sometimes", "every time") end neither.
			if n := ws[end+1].low; isVerbTag(ws[end-1].tag) && !beForms[n] && n[0] != '\'' {
				return "", "" // "I like watching you play": the verb's object is the clause
			}
			if c.definiteBefore(a, end) {
				return "", "" // "the story it tells": a relative clause without its "that"
			}
			for end > a+1 && (ws[end-1].tag == "IN" || ws[end-1].tag == "CC" || ws[end-1].tag == "TO" || strings.HasPrefix(ws[end-1].tag, "RB")) {
				end--
			}
			if end > a+2 && ws[end-1].low == "time" && ws[end-2].tag == "DT" {
				end -= 2 // "every time", "each time"
			}
			if t := ws[end-1].tag; !isNounTag(t) && t != "CD" && t != "VBG" {
				return "", "" // the object's own words do not end where the next clause starts
			}
		case w.tag == ",":
			if end > a && end+1 < c.compB && isAdjTag(ws[end-1].tag) && isAdjTag(ws[end+1].tag) {
				continue
			}
		default:
			continue
		}
		break
	}
	if end > a && ws[end-1].low != "so" && (ws[end-1].tag == "DT" || ws[end-1].tag == "IN" || ws[end-1].tag == "PRP$" || ws[end-1].tag == "TO") {
		return "", "" // cut inside a phrase: "the top of the (...) dress"
	}
	for rel == "" && end > a+1 && ws[end-1].low != "now" && (ws[end-1].tag == "RB" || ws[end-1].tag == "RBR" || ws[end-1].tag == "UH" || interjections[ws[end-1].low]) {
		// "warm scarves especially", "pickles lol": the object ends at its
		// noun. ("now" is left to the cuts: "right now".)
		end--
	}
	if end <= a {
		return "", ""
	}
	if rel == "" && c.anaphoric(a, end) {
		return "", ""
	}
	return c.s[ws[a].start:ws[end-1].end], rel
}

// anaphoric reports whether the object at words [a, b) opens with "the" and
// a singular common noun alone, as in "I love the plot (and ...)": such a
// phrase points back to something said before (the plot of what?), which
// the fact does not hold.
func (c *clause) anaphoric(a, b int) bool {
	ws := c.ws
	return a+1 < b && ws[a].low == "the" && ws[a+1].tag == "NN" && ws[a+1].low == ws[a+1].text &&
		(a+2 == b || ws[a+2].tag == "CC" || ws[a+2].tag == ",")
}

// maxRelativeWords bounds a relative clause kept with its object: a longer
// one makes the object a description.
const maxRelativeWords = 5

// relativeWords open a restrictive relative clause after a noun.
var relativeWords = wordSet("that which who whom whose where")

// newClauseAt reports whether a clause of its own starts at k with no
// punctuation before it: a subject pronoun and a verb ("it's", "I find").
func newClauseAt(ws []word, k, b int) bool {
	if k+1 >= b || ws[k].tag != "PRP" || !subjectPronouns[ws[k].low] && ws[k].text != "I" {
		return false
	}
	n := ws[k+1]
	return isVerbTag(n.tag) || n.tag == "MD" || n.low == "'s" || n.low == "'m" || n.low == "'re" || n.low == "'ve" || n.low == "'ll" || n.low == "'d"
}

// definiteBefore reports whether words [a, b) end in a definite noun
// phrase: "the" or a demonstrative, then adjectives and nouns.
func (c *clause) definiteBefore(a, b int) bool {
	k := b - 1
	if k < a || !isNounTag(c.ws[k].tag) {
		return false
	}
	for k >= a && (isNounTag(c.ws[k].tag) || isAdjTag(c.ws[k].tag)) {
		k--
	}
	return k >= a && (c.ws[k].low == "the" || c.ws[k].low == "this" || c.ws[k].low == "that" || c.ws[k].low == "those" || c.ws[k].low == "these")
}

// objectRel is tasteRel for an object objectText already cut at its
// clause: a comma left in it stands between adjectives. A relative clause
// kept with the object follows it only when nothing was cut between the
// two: else it would name another noun.
func objectRel(subj, pred, x, rel string) *engram.Relation {
	whole := x
	x = cutAt(x, relCutsInObject)
	if pred == "prefers" {
		x, _ = cutPrefixFold(x, "to ")
		x = cutAt(x, prefCuts)
	}
	if rel != "" {
		if !strings.HasSuffix(strings.TrimSpace(strings.TrimRight(whole, relTrim)), x) {
			return nil
		}
		x += " " + rel
	}
	return newRel(subj, pred, x)
}

// relCutsInObject are relCuts but the comma.
var relCutsInObject = slices.DeleteFunc(slices.Clone(relCuts), func(c string) bool { return c == "," })
