package extract

// A memory's relation is (subject, predicate, object) with a snake_case
// predicate; the subject is the speaker. "We" is not resolved to a group: a
// decision the speaker reports ("we decided to use X") is the speaker's
// (speaker, uses_for_<purpose>, X). A relative is tied to the speaker by
// name, (Ana, sister, Maria) from "my sister Maria ...", and is the subject
// herself only when unnamed: ("Ana's sister", lives_in, Oslo). Objects are cut
// before a trailing clause ("Berlin with my wife" is Berlin); where the
// object is long, vague or not clearly the thing the predicate wants, the
// memory keeps no relation.

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/engram-dev/engram"
)

const (
	maxRelBytes  = 80 // an object longer than this is a description, not a thing
	maxRelWords  = 8
	maxKeyWords  = 3 // words of a derived predicate key: favourite_<noun>, uses_for_<purpose>
	maxToolWords = 4 // words of a tool or a job
	maxZhRunes   = 8 // runes of a Chinese key or tool
	maxZhObject  = 24
)

// newRel returns the triple, or nil when the object is empty, too long or
// vague.
func newRel(subj, pred, obj string) *engram.Relation {
	obj = strings.TrimSpace(strings.TrimRight(obj, relTrim))
	for _, c := range []string{" or", " and", " but", " so"} {
		// An object cut before what its last word joins: "year 500 or".
		if rest, ok := strings.CutSuffix(obj, c); ok {
			obj = strings.TrimSpace(strings.TrimRight(rest, relTrim))
		}
	}
	// An emphatic reflexive after the object ("built the shelf myself"),
	// not one a preposition governs ("cooking for myself").
	if f := strings.Fields(obj); len(f) > 1 && reflexives[strings.ToLower(f[len(f)-1])] && !reflexivePreps[strings.ToLower(f[len(f)-2])] {
		obj = strings.TrimSpace(strings.TrimRight(strings.TrimSuffix(obj, f[len(f)-1]), relTrim))
	}
	if obj == "" || pred == "" || len(obj) > maxRelBytes {
		return nil
	}
	first, _, _ := strings.Cut(obj, " ")
	first = strings.ToLower(strings.Trim(first, ",.!'\""))
	if vagueFirst[first] || relVague[first] || strings.Count(obj, " ") >= maxRelWords {
		return nil
	}
	return &engram.Relation{Subject: subj, Predicate: pred, Object: obj}
}

// reflexivePreps are the prepositions that take a reflexive as their
// object ("by myself", "for ourselves").
var reflexivePreps = wordSet("by for to with about of on at from after behind within")

const relTrim = ",;:.!?-–—'\" 　，。；：、！？了啦呢哦吧啊呀"

// relVague first words make no object: "I like how it works".
var relVague = map[string]bool{"how": true, "when": true, "what": true, "where": true, "why": true, "which": true,
	"who": true, "if": true, "whether": true, "whatever": true, "being": true, "doing": true}

// Cuts end an object before what follows it: another clause or a
// circumstance. Each is matched as a whole word.
var (
	relCuts = []string{",", ";", "(", " with", " because", " since", " and", " but", " so", " which", " who", " where",
		" while", " although", " though", " until", " unless", " when", " now", " currently", " nowadays",
		" these days", " at the moment", " for now", " anymore", " too", " as well", " right now", " lately"}
	// listCuts are relCuts without " and", for a list: "Muse and Radiohead".
	listCuts  = slices.DeleteFunc(slices.Clone(relCuts), func(c string) bool { return c == " and" })
	liveCuts  = []string{" for", " near", " ago", " last", " this", " next", " after", " before", " recently"}
	placeCuts = append([]string{" in", " on", " at", " a few", " a couple", " two", " three"}, liveCuts...)
	toolCuts  = []string{" instead of", " rather than", " over", " to", " as", " in", " on", " at", " from", " by", " going forward"}
	orgCuts   = []string{" as", " in", " on", " for", " at", " near"}
	jobCuts   = []string{" at", " for", " in", " on", " from", " by"}
	prefCuts  = []string{" over", " to", " rather than", " instead of", " more than"}
)

// cutAt cuts x at the earliest of the cuts, each a whole word, and trims it.
func cutAt(x string, cuts ...[]string) string {
	end := len(x)
	for _, list := range cuts {
		for _, c := range list {
			for off := 0; off < end; {
				i := strings.Index(x[off:], c)
				if i < 0 || off+i >= end {
					break
				}
				i += off
				j := i + len(c)
				if j == len(x) || !isWordByte(c[len(c)-1]) || !isWordByte(x[j]) {
					end = i
					break
				}
				off = i + 1
			}
		}
	}
	return strings.TrimSpace(strings.TrimRight(x[:end], relTrim))
}

func isWordByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '\'' || b == '-' || b == '_'
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

func stripArticle(x string) string {
	for _, a := range []string{"a ", "an ", "the "} {
		if rest, ok := cutPrefixFold(x, a); ok {
			return strings.TrimSpace(rest)
		}
	}
	return x
}

// nameLike reports whether x starts like a name: a capital, a digit, a Han
// character or an identifier (gRPC, k8s).
func nameLike(x string) bool {
	r, _ := utf8.DecodeRuneInString(x)
	if unicode.IsUpper(r) || unicode.IsDigit(r) || isHan(r) {
		return true
	}
	first, _, _ := strings.Cut(x, " ")
	return first != "" && isIdent(first)
}

// capitalised reports whether x, past a leading "the", is a proper noun: a
// place ("the Netherlands"), not "the data team".
func capitalised(x string) bool {
	if rest, ok := cutPrefixFold(x, "the "); ok {
		x = rest
	}
	r, _ := utf8.DecodeRuneInString(x)
	return unicode.IsUpper(r) || isHan(r)
}

// keyDrop are words left off the front of a derived predicate key.
var keyDrop = map[string]bool{"the": true, "a": true, "an": true, "our": true, "my": true, "your": true, "their": true,
	"its": true, "his": true, "her": true, "all": true, "this": true, "that": true, "these": true, "those": true, "some": true}

// keyAlias spells a key one way: favourite_colour is favourite_color.
var keyAlias = map[string]string{"colour": "color", "colours": "colors", "flavour": "flavor", "flavours": "flavors"}

// relKey snake_cases a short noun phrase for a predicate ("the billing
// service" is billing_service); "" when it is empty or longer than
// maxKeyWords words.
func relKey(s string) string {
	words := strings.Fields(strings.ToLower(s))
	for len(words) > 0 && (keyDrop[words[0]] || strings.HasSuffix(words[0], "'s")) {
		words = words[1:]
	}
	if len(words) == 0 || len(words) > maxKeyWords {
		return ""
	}
	var b strings.Builder
	sep := false
	for _, w := range words {
		if a, ok := keyAlias[w]; ok {
			w = a
		}
		for _, r := range w {
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				sep = true
				continue
			}
			if sep && b.Len() > 0 {
				b.WriteByte('_')
			}
			sep = false
			b.WriteRune(r)
		}
		sep = true
	}
	return b.String()
}

// decisionObj is a decision's object without its rationale.
func decisionObj(subj, x string) string {
	x, _ = because(object(subj, x))
	return x
}

// toolVerbs choose a tool; one marked true takes only a name-like object:
// "we went with Postgres", not "I picked a date for the party".
var toolVerbs = map[string]bool{"use": false, "adopt": false, "switch to": false, "migrate to": false, "stick with": false,
	"start using": false, "keep using": false, "go with": true, "pick": true, "choose": true, "chose": true, "picked": true,
	"settled on": true, "went with": true, "opted for": true, "decided on": true}

var toolVerbOrder = []string{"start using", "keep using", "switch to", "migrate to", "stick with", "go with", "use", "adopt", "pick", "choose"}

// toolRel is useRel for "use X ..." with the verb still in front.
func toolRel(subj, x string) *engram.Relation {
	for _, v := range toolVerbOrder {
		if rest, ok := cutPrefixFold(x, v+" "); ok {
			return useRel(subj, v, rest)
		}
	}
	return nil
}

// purposeStop are "for ..." tails that name a time or a reason, not a
// purpose: "use Redis for now", "for the first release".
var purposeStop = map[string]bool{"now": true, "a": true, "while": true, "time": true, "moment": true, "first": true,
	"next": true, "rest": true, "ever": true, "good": true, "sure": true, "example": true, "instance": true, "free": true,
	"years": true, "months": true, "weeks": true, "days": true, "once": true, "real": true, "it": true, "us": true,
	"them": true, "me": true, "everyone": true, "everything": true, "both": true, "each": true, "today": true, "v1": true}

// useRel makes (subj, uses_for_<purpose>, tool) from the object of a tool
// verb: "Postgres for the billing service". Without a purpose, or with one
// too long for a key, the predicate is "uses".
func useRel(subj, verb, x string) *engram.Relation {
	named, ok := toolVerbs[strings.ToLower(strings.Join(strings.Fields(verb), " "))]
	if !ok {
		return nil
	}
	x = cutAt(x, relCuts)
	tool, purpose, _ := strings.Cut(x, " for ")
	tool = stripArticle(cutAt(tool, toolCuts))
	if tool == "" || len(strings.Fields(tool)) > maxToolWords || named && !nameLike(tool) {
		return nil
	}
	pred := "uses"
	if purpose = cutAt(purpose, toolCuts); purpose != "" {
		f := strings.Fields(strings.ToLower(purpose))
		for len(f) > 1 && keyDrop[f[0]] {
			f = f[1:]
		}
		if k := relKey(purpose); k != "" && !purposeStop[f[0]] {
			pred = "uses_for_" + k
		}
	}
	return newRel(subj, pred, tool)
}

// favouriteRel: "my favourite book is Dune" is (subj, favourite_book, Dune).
func favouriteRel(subj string, m []string) *engram.Relation {
	f := strings.Fields(strings.ToLower(m[1])) // favourite <noun> is
	if len(f) < 3 {
		return nil
	}
	k := relKey(strings.Join(f[1:len(f)-1], " "))
	if k == "" || k == "favorite" || k == "favourite" || k == "fave" {
		return nil // "my personal favorite is X": a favourite of what is not said
	}
	x := object(subj, m[2])
	if f[len(f)-1] == "are" { // "are Muse and Radiohead": keep the list
		x = cutAt(x, listCuts)
	} else {
		x = cutAt(x, relCuts)
	}
	return newRel(subj, "favourite_"+k, x)
}

// tastePredicate maps a verb of liking to its predicate.
var tastePredicate = map[string]string{"prefer": "prefers", "like": "likes", "love": "likes", "enjoy": "likes",
	"adore": "likes", "hate": "dislikes", "dislike": "dislikes", "can't stand": "dislikes"}

func tasteRel(subj, pred, x string) *engram.Relation {
	if pred == "" {
		return nil
	}
	x = cutAt(x, relCuts)
	if pred == "prefers" {
		x, _ = cutPrefixFold(x, "to ") // "I prefer to work remotely"
		x = cutAt(x, prefCuts)
	}
	return newRel(subj, pred, x)
}

// nameRel makes (who, pred, name). strict asks for a name-like object:
// "call me Bob", not "call me tomorrow".
func nameRel(who, pred, x string, strict bool) *engram.Relation {
	x = cutAt(x, relCuts)
	if strict && !nameLike(x) || len(strings.Fields(x)) > 4 {
		return nil
	}
	return newRel(who, pred, x)
}

// Jobs and other identities for "I'm a/an X", by the head noun of X.
var (
	jobNouns = wordSet("engineer developer programmer nurse doctor physician surgeon teacher professor lecturer " +
		"designer manager lawyer attorney accountant scientist researcher writer author journalist editor artist chef " +
		"cook baker architect consultant analyst pharmacist dentist vet veterinarian photographer musician electrician " +
		"plumber mechanic carpenter pilot firefighter paramedic librarian translator therapist psychologist " +
		"psychiatrist administrator sysadmin founder co-founder ceo cto cfo intern freelancer contractor tester sre " +
		"economist barista waiter waitress cashier salesperson recruiter marketer entrepreneur technician " +
		"director secretary clerk banker trader realtor tutor instructor dev devops")
	isNouns = wordSet("vegetarian vegan pescatarian student introvert extrovert owl bird")
	// jobAdjectives judge rather than name a job: "a good cook".
	jobAdjectives = wordSet("good great bad terrible decent better best big huge awful amazing excellent horrible " +
		"lousy poor careful lazy slow fast picky proud total complete real bit little")
)

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// identityRel: "a nurse" is (who, works_as, nurse), "a vegetarian" (who,
// is, vegetarian), anything else nothing.
func identityRel(who, x string) *engram.Relation {
	x = stripArticle(cutAt(x, relCuts, jobCuts))
	f := strings.Fields(strings.ToLower(x))
	if len(f) == 0 || len(f) > maxToolWords {
		return nil
	}
	for _, w := range f[:len(f)-1] {
		if jobAdjectives[w] {
			return nil
		}
	}
	head := f[len(f)-1]
	switch {
	case jobNouns[head]:
		return newRel(who, "works_as", x)
	case isNouns[head] && (head != "owl" && head != "bird" || strings.Contains(x, "night owl") || strings.Contains(x, "early bird")):
		return newRel(who, "is", x)
	}
	return nil
}

// workStop are "I work at/for ..." objects that are no employer.
var workStop = map[string]bool{"home": true, "night": true, "nights": true, "weekends": true, "the weekend": true,
	"the moment": true, "least": true, "all": true, "times": true, "midnight": true, "myself": true, "a living": true,
	"remote": true, "remotely": true, "it": true, "the same place": true, "free": true, "a company": true}

// workRel: "at/for Acme" is works_at, "as a nurse" works_as; "in ..." is a
// field or a place, so nothing.
func workRel(who, prep, x string) *engram.Relation {
	switch strings.ToLower(prep) {
	case "at", "for":
		x = cutAt(x, relCuts, orgCuts)
		if workStop[strings.ToLower(x)] {
			return nil
		}
		return newRel(who, "works_at", x)
	case "as":
		x = stripArticle(cutAt(x, relCuts, jobCuts))
		if len(strings.Fields(x)) > maxToolWords {
			return nil
		}
		return newRel(who, "works_as", x)
	}
	return nil
}

// home is where "I live in x" says one lives: the town of "a small flat in
// Berlin".
func home(x string) string {
	x = cutAt(x, relCuts, liveCuts)
	if hasPrefixFold(x, "a ") || hasPrefixFold(x, "an ") {
		if i := strings.LastIndex(x, " in "); i >= 0 && capitalised(x[i+4:]) {
			return x[i+4:]
		}
	}
	return x
}

// placeRel makes (who, pred, place) for a proper noun place.
func placeRel(who, pred, x string, cuts []string) *engram.Relation {
	x = cutAt(x, relCuts, cuts)
	if !capitalised(x) {
		return nil
	}
	return newRel(who, pred, x)
}

// kin is a relative: the noun for "Ana's <noun>" and the predicate that ties
// a named one to the speaker.
type kin struct{ noun, pred string }

var enKin = map[string]kin{"sister": {"sister", "sister"}, "brother": {"brother", "brother"},
	"wife": {"wife", "married_to"}, "husband": {"husband", "married_to"}, "partner": {"partner", "partner"},
	"girlfriend": {"girlfriend", "partner"}, "boyfriend": {"boyfriend", "partner"}, "friend": {"friend", "friend"},
	"mom": {"mother", "mother"}, "mum": {"mother", "mother"}, "mother": {"mother", "mother"}, "dad": {"father", "father"},
	"father": {"father", "father"}, "son": {"son", "son"}, "daughter": {"daughter", "daughter"}, "boss": {"boss", "boss"},
	"manager": {"manager", "manager"}, "colleague": {"colleague", "colleague"}, "coworker": {"colleague", "colleague"},
	"cousin": {"cousin", "cousin"}, "aunt": {"aunt", "aunt"}, "uncle": {"uncle", "uncle"},
	"grandma": {"grandmother", "grandmother"}, "grandmother": {"grandmother", "grandmother"},
	"grandpa": {"grandfather", "grandfather"}, "grandfather": {"grandfather", "grandfather"},
	"dog": {"dog", "dog"}, "cat": {"cat", "cat"}}

// kinRel: "my sister Maria ..." is (Ana, sister, Maria); "my sister lives
// in Oslo" is ("Ana's sister", lives_in, Oslo).
func kinRel(subj string, m []string) *engram.Relation {
	words := strings.Fields(strings.ToLower(m[1]))
	last := words[len(words)-1]
	possessive := strings.HasSuffix(last, "'s")
	k := enKin[strings.TrimSuffix(last, "'s")]
	pred, noun := k.pred, k.noun
	if len(words) > 1 {
		noun = words[0] + " " + noun
		if words[0] == "best" && noun == "best friend" {
			pred = "best_friend"
		}
	}
	rest := object(subj, m[2])
	if possessive { // "my sister's name is Maria"
		if x, ok := cutPrefixFold(rest, "name is "); ok {
			return nameRel(subj, pred, x, true)
		}
		return nil
	}
	if name := leadingName(rest); name != "" {
		return newRel(subj, pred, name)
	}
	for _, p := range []string{"is called ", "is named ", "'s called ", "'s name is "} {
		if x, ok := cutPrefixFold(rest, p); ok {
			return nameRel(subj, pred, x, true)
		}
	}
	return statementRel(subj+"'s "+noun, rest)
}

// statementRel reads a third-person statement about who: "lives in Oslo",
// "works at Acme", "is a nurse".
func statementRel(who, s string) *engram.Relation {
	switch {
	case hasPrefixFold(s, "lives in "):
		return newRel(who, "lives_in", home(s[len("lives in "):]))
	case hasPrefixFold(s, "works at "), hasPrefixFold(s, "works for "), hasPrefixFold(s, "works as "):
		prep, x, _ := strings.Cut(s[len("works "):], " ")
		return workRel(who, prep, x)
	case hasPrefixFold(s, "is from "):
		return placeRel(who, "is_from", s[len("is from "):], liveCuts)
	case hasPrefixFold(s, "moved to "):
		return placeRel(who, "lives_in", s[len("moved to "):], placeCuts)
	case hasPrefixFold(s, "is a "), hasPrefixFold(s, "is an "):
		return identityRel(who, s[len("is "):])
	}
	return nil
}

func hasPrefixFold(s, prefix string) bool {
	_, ok := cutPrefixFold(s, prefix)
	return ok
}

// leadingName returns the capitalised words, up to three, that open s and
// are followed by its end, punctuation or a lower-case word: "Maria" in
// "Maria lives in Lisbon".
func leadingName(s string) string {
	f := strings.Fields(s)
	n := 0
	for n < len(f) && n < 3 {
		w := strings.TrimRight(f[n], ",;:")
		r, _ := utf8.DecodeRuneInString(w)
		if !unicode.IsUpper(r) || stopCaps[w] || strings.ContainsFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && r != '-' && r != '\'' }) {
			break
		}
		n++
		if w != f[n-1] { // "Maria, who ..."
			break
		}
	}
	if n == 0 {
		return ""
	}
	if n < len(f) {
		r, _ := utf8.DecodeRuneInString(f[n])
		if strings.TrimRight(f[n-1], ",;:") == f[n-1] && !unicode.IsLower(r) {
			return ""
		}
	}
	return strings.TrimRight(strings.Join(f[:n], " "), ",;:")
}

// Habits.
var (
	habitAdverbs = []string{"usually", "always", "often", "normally", "typically", "generally", "regularly"}
	habitPeriods = `(?:morning|day|evening|night|week|weekend|weekday|monday|tuesday|wednesday|thursday|friday|saturday|sunday|month|year|summer|winter)`
	// habitSkip are words after "I" that make no habit: auxiliaries,
	// negation, the past, reporting, hedging, adverbs of other rules.
	habitSkip = wordSet("don't didn't doesn't won't can't cannot wouldn't shouldn't couldn't never not will would can " +
		"could should must might may shall am was were had did been thought said say says think believe feel felt " +
		"wonder guess hope wish knew know went got made came took saw mean meant seem sometimes rarely seldom " +
		"really also still just finally recently much truly definitely absolutely usually always often normally " +
		"typically generally regularly need want plan intend aim gotta like love prefer hate enjoy dislike adore")
)

// habitVerb reports whether v, lower case and followed by rest, opens a
// habit. lead is the "every morning I ..." form, which starts before the
// "I" other rules match at, so it steps aside for their verbs: "every day I
// work at the library" stays the fact it was.
func habitVerb(v, rest string, lead bool) bool {
	if habitSkip[v] || len(v) > 4 && strings.HasSuffix(v, "ed") && !strings.HasSuffix(v, "eed") { // the past
		return false
	}
	r := strings.ToLower(strings.TrimSpace(rest))
	if r == "not" || strings.HasPrefix(r, "not ") || strings.HasPrefix(r, "been ") {
		return false
	}
	if lead {
		switch v {
		case "live":
			return false
		case "work":
			return !strings.HasPrefix(r, "at ") && !strings.HasPrefix(r, "for ") && !strings.HasPrefix(r, "in ") && !strings.HasPrefix(r, "as ")
		case "have", "got":
			return !strings.HasPrefix(r, "to ")
		}
	}
	return true
}

// habitText is "Alice usually runs before work" or "Alice runs every
// morning": adv before the verb, period after the rest.
func habitText(subj, verb, rest, adv, period string, lead bool) (string, string, bool) {
	v := strings.ToLower(verb)
	if !habitVerb(v, rest, lead) {
		return "", "", false
	}
	var b strings.Builder
	b.WriteString(subj)
	if adv != "" {
		b.WriteString(" " + adv)
	}
	b.WriteString(" " + thirdSingular(v))
	if x := object(subj, rest); x != "" {
		b.WriteString(" " + x)
	}
	if period != "" {
		b.WriteString(" " + period)
	}
	return b.String(), "", true
}

// habitCuts end a habit's activity; "with" and "and" stay ("have coffee
// with milk").
var habitCuts = []string{",", ";", " because", " since", " but", " although", " though", " unless", " so that", " which"}

func habitRel(subj, verb, rest, period string) *engram.Relation {
	x := cutAt(strings.TrimSpace(strings.ToLower(verb)+" "+object(subj, rest)), habitCuts)
	if period != "" {
		x += " " + period
	}
	return newRel(subj, "habit", x)
}
