package extract

// Word classes of the clause extractor: closed classes of English (pronouns,
// auxiliaries, discourse markers) and a few small lists of general
// vocabulary (verbs of thinking, light nouns, adjectives of feeling). None
// is drawn from any data set: they are the textbook members of each class.

import (
	"strings"

	"github.com/kljensen/snowball/english"
)

// discourse words open a clause without being part of what it states:
// interjections, greetings, connectives.
var discourseWords = wordSet("oh ah aw aww awww wow whoa woah yeah yea yes yep yup no nope nah well hey hi hello " +
	"ok okay so and but also anyway anyways btw honestly actually basically plus lol haha hah omg um uh hmm hm " +
	"sure right cool great nice awesome thanks thank man dude oops ugh yay now then still luckily unfortunately " +
	"fortunately sadly thankfully hopefully guess fyi tbh imo imho ps")

// interjections stand alone, outside any clause: in chat they close a
// sentence as a full stop does ("fun day lol I slept all afternoon").
var interjections = wordSet("oh ah aw aww wow whoa woah yeah yea yes yep yup nope nah ok okay lol lmao haha hah hehe " +
	"omg um uh hmm oops ugh yay tbh idk btw")

// leadAdverbs may stand before a verb whose subject is dropped, "just got
// back", and are left out of the memory's text there.
var leadAdverbs = wordSet("just finally recently also really actually already lately still even")

// mentalVerbs state an attitude, not a fact: "I think so", "I know", "I
// hope you are well", in any tense. Their clauses are not memories (a "to"
// plan such as "I hope to" is read before this list is).
var mentalVerbs = stemSet("think believe guess suppose bet know mean feel wonder hope wish agree understand appreciate "+
	"admire imagine doubt trust realize realise notice respect care thank congratulate", false)

// presentMentalVerbs are mental in the present only: "I see", "I miss
// you"; "I saw a film" is an event.
var presentMentalVerbs = stemSet("see hear recall remember forget miss get", false)

// affectAdjectives describe a feeling: "I am so happy for you" states
// nothing to remember.
var affectAdjectives = wordSet("happy glad excited sad sorry proud grateful thankful lucky blessed thrilled stoked " +
	"pumped nervous scared afraid worried tired exhausted busy good great fine okay ok sure ready determined hopeful " +
	"amazed impressed inspired motivated curious jealous bummed stressed overwhelmed relieved confident positive " +
	"optimistic honored honoured touched moved eager psyched delighted pleased surprised shocked upset angry mad " +
	"frustrated disappointed bored lonely content calm comfortable glad well sorry here there back in down up " +
	"awesome amazing cool fun keen pleased super totally stuck serious certain right wrong new alright sick " +
	"fortunate unsure exciting interesting inspiring relaxing challenging rewarding fulfilling overwhelming " +
	"refreshing satisfying calming nerve-wracking tough hard easy")

// abstractNouns name no thing, person, place or activity: "I will keep
// chasing my dreams", "let's make it a success". A clause needs a concrete
// word to be remembered.
var abstractNouns = wordSet("dream dreams goal goals success passion hope hopes love joy happiness effort efforts " +
	"progress journey future potential confidence strength courage vibe vibes energy memory memories " +
	"motivation inspiration creativity positivity kindness magic best difficulties difficulty goodness luck " +
	"understanding acceptance achievement achievements collaboration self")

// reportVerbs report what someone said: "my manager told me we decided to
// drop it" is the manager's statement, not the speaker's.
var reportVerbs = stemSet("say tell ask claim mention explain announce report write", false)

// preferenceAdjectives with their preposition make a preference: "I am
// passionate about dancing", "I am into hiking".
var preferenceAdjectives = map[string]string{"passionate": "about", "fond": "of", "keen": "on", "crazy": "about",
	"obsessed": "with", "interested": "in", "addicted": "to", "mad": "about", "nuts": "about", "big": "on"}

// lightNouns carry no content of their own: "I will do my best", "I had a
// great time". A clause needs another noun (or a number, or a name) to be
// worth remembering.
var lightNouns = wordSet("thing things stuff lot lots bit time times way ways day days one ones something anything " +
	"everything nothing someone anyone everyone somebody anybody everybody kind sort type idea chance sense part " +
	"point side end deal fun luck moment moments while best hand hands yeah yes no okay ok hey wow guy guys people " +
	"others life world blast difference impact heart mind words word thanks support feeling feelings " +
	"journey step steps look plan plans matter ton tons")

// lightVerbs say little without an object: "I will try", "I went there".
var lightVerbs = stemSet("do make get go have be take keep give see try say tell come let put look happen", true)

// preferenceVerbs say what someone likes, by verb stem; the value is the
// relation's predicate.
var preferenceVerbs = func() map[string]string {
	m := map[string]string{}
	for verb, pred := range map[string]string{"like": "likes", "love": "likes", "enjoy": "likes", "adore": "likes",
		"prefer": "prefers", "hate": "dislikes", "dislike": "dislikes", "detest": "dislikes", "loathe": "dislikes"} {
		m[verbStem(verb)] = pred
	}
	return m
}()

// decisionVerbs decide: "we decided to", "I chose", "we settled on", "we
// agreed to", "I went with", "we opted for".
var decisionVerbs = stemSet("decide choose pick settle agree opt", true)

// choiceVerbs make a decision of a plan or suggestion: "we'll use X",
// "let's go with X", "let's not use X".
var choiceVerbs = stemSet("use adopt pick choose switch migrate stick avoid drop go-with", true)

// intentVerbs + "to" make a plan: "I want to", "I plan to".
var intentVerbs = stemSet("want plan intend aim hope mean try need expect", true)

// auxiliaries of the verb group.
var (
	beForms   = wordSet("am is are was were be been being")
	haveForms = wordSet("have has had having")
	doForms   = wordSet("do does did")
	futureMD  = wordSet("will shall")
	weakMD    = wordSet("can could may might would")
	dutyMD    = wordSet("should must")
)

// habitWords make a present statement a habit.
var habitWords = wordSet("usually always often normally typically generally regularly sometimes every")

// irregularPast maps irregular past forms to their base.
var irregularPast = map[string]string{"went": "go", "gone": "go", "got": "get", "gotten": "get", "took": "take",
	"taken": "take", "made": "make", "had": "have", "saw": "see", "seen": "see", "came": "come", "gave": "give",
	"given": "give", "found": "find", "began": "begin", "begun": "begin", "lost": "lose", "met": "meet", "felt": "feel",
	"left": "leave", "bought": "buy", "brought": "bring", "thought": "think", "told": "tell", "said": "say",
	"knew": "know", "known": "know", "ran": "run", "won": "win", "wrote": "write", "written": "write",
	"taught": "teach", "sent": "send", "spent": "spend", "built": "build", "held": "hold", "kept": "keep",
	"chose": "choose", "chosen": "choose", "became": "become", "did": "do", "done": "do", "been": "be", "was": "be",
	"were": "be", "is": "be", "am": "be", "are": "be", "has": "have", "flew": "fly", "flown": "fly", "drove": "drive",
	"driven": "drive", "ate": "eat", "eaten": "eat", "fell": "fall", "fallen": "fall", "sold": "sell", "stood": "stand",
	"understood": "understand", "caught": "catch", "fought": "fight", "led": "lead", "paid": "pay", "heard": "hear",
	"slept": "sleep", "spoke": "speak", "spoken": "speak", "woke": "wake", "wore": "wear", "sang": "sing", "sung": "sing",
	"swam": "swim", "rode": "ride", "ridden": "ride", "threw": "throw", "grew": "grow", "grown": "grow", "drew": "draw",
	"drawn": "draw", "broke": "break", "broken": "break", "forgot": "forget", "forgotten": "forget",
	"joined": "join", "sat": "sit", "shot": "shoot", "hung": "hang", "dug": "dig", "fed": "feed", "lit": "light",
	"meant": "mean", "read": "read", "put": "put", "set": "set", "hit": "hit", "cut": "cut", "let": "let",
	"quit": "quit", "shut": "shut", "hurt": "hurt", "cost": "cost", "lent": "lend", "bent": "bend", "dealt": "deal",
	"learnt": "learn", "dreamt": "dream", "burnt": "burn", "spelt": "spell", "spilt": "spill", "leapt": "leap",
	"knelt": "kneel", "smelt": "smell", "sunk": "sink", "sank": "sink", "stuck": "stick", "struck": "strike",
	"swung": "swing", "sought": "seek"}

// verbStem reduces a verb form to the stem that its other forms share:
// the Snowball English stem of its base ("decided", "decides", "deciding"
// and "decide" all give "decid"; "went" is "go" first). It is only compared
// with the stems of stemSet and verbIs, which apply it to every form of a
// verb, never shown. The scenes' terms are stemmed by the same stemmer.
func verbStem(w string) string {
	w = strings.ToLower(w)
	if base, ok := irregularPast[w]; ok {
		w = base
	}
	return english.Stem(w, true)
}

// stemSet is the set of the verb stems (verbStem) of every form of the
// verbs of s (verbForms), so that any form of them is found by its stem;
// with whole, the listed words themselves too. A hyphenated entry
// ("go-with") is a phrase, kept as it is.
func stemSet(s string, whole bool) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		if strings.Contains(w, "-") {
			m[w] = true
			continue
		}
		for _, f := range verbForms(w) {
			m[verbStem(f)] = true
		}
		if whole {
			m[w] = true
		}
	}
	return m
}

// verbForms returns the forms of a verb: base, third person, past (the
// irregular ones of irregularPast too) and present participle, doubled
// final consonant or not.
func verbForms(base string) []string {
	forms := []string{base, thirdSingular(base)}
	for past, b := range irregularPast {
		if b == base {
			forms = append(forms, past)
		}
	}
	n := len(base)
	switch {
	case strings.HasSuffix(base, "e"):
		forms = append(forms, base+"d", base[:n-1]+"ing", base+"ing")
	case n > 1 && base[n-1] == 'y' && !strings.ContainsRune("aeiou", rune(base[n-2])):
		forms = append(forms, base[:n-1]+"ied", base+"ing")
	default:
		forms = append(forms, base+"ed", base+"ing")
		if last := base[n-1]; !strings.ContainsRune("aeiouwxy", rune(last)) && n > 1 && strings.ContainsRune("aeiou", rune(base[n-2])) {
			forms = append(forms, base+string(last)+"ed", base+string(last)+"ing")
		}
	}
	return forms
}

// lemmaStems holds the stems of the forms of the verbs the extractor names
// one by one (verbIs).
var lemmaStems = func() map[string]map[string]bool {
	m := map[string]map[string]bool{}
	for _, l := range strings.Fields("love live move relocate work have decide agree settle go opt choose pick wait thank use get land plan try find") {
		m[l] = stemSet(l, true)
	}
	return m
}()

// verbIs reports whether a verb stem is a form of lemma, one of lemmaStems.
func verbIs(stem, lemma string) bool { return lemmaStems[lemma][stem] }
