package extract

import (
	"context"
	"math"
	"regexp"
	"runtime"
	"strings"
	"sync"

	"github.com/jdkato/prose/v2"

	"github.com/engram-dev/engram"
)

// NLPExtractor is the default offline L1 extractor: it parses each English
// sentence with a part-of-speech tagger (github.com/jdkato/prose/v2, an
// averaged perceptron trained on the Penn Treebank, embedded in the binary)
// and reads clauses off the tags, instead of matching whole statements
// with regular expressions as RulesExtractor does.
//
// Per clause it finds the subject and the verb group, and keeps the clause
// as a memory when it states something about a participant:
//
//   - the first person is the speaker ("I", "me", "my"; a chat's dropped
//     subject, "Lost my job yesterday", too), "you" the other speaker of the
//     session, and "we" the session's speakers when the clause is a plan, a
//     suggestion or a decision, else the speaker and others ("we went to the
//     beach" was the speaker's family, not the listener);
//   - the verb group gives the type: a decision (decided, chose, settled on,
//     "let's use"), with its rationale ("because ..."); a plan (will, going
//     to, want to, need to, "let's"); a preference (like, love, prefer, a fan
//     of, into); an event (the past, the present perfect, an activity going
//     on); else a fact (what is, has, lives, works, usually does);
//   - a relative time ("yesterday", "last Friday", "next month") is resolved
//     against the turn's time and written as a date, and an event keeps its
//     date as ValidFrom;
//   - sentences are read with the ones before them: a "they", "he" or
//     "she" that can only point to the speaker's own ("my kids", a bare
//     "Mom") is read as that phrase (nlp_refer.go); a short sentence that
//     only says how an event was ("that trip was wild!") is the setting of
//     the event the next one tells (nlp_setting.go); "It is <a thing>" joins
//     the speaker's memory of the one thing it can be, in this turn or the
//     speaker's turn before (nlp_elaborate.go); phrases of place before the
//     subject go to the memory's end;
//   - clauses that state nothing are dropped: questions, hypotheticals,
//     hedges and reports ("I think", "he said"), feelings and politeness
//     ("I'm so happy", "I appreciate it"), imperatives, and statements with
//     no content word ("I will keep it up").
//
// Relations for the knowledge graph (lives_in, is_from, born_in, works_at,
// works_as, likes, dislikes, prefers, favourite_<noun>, uses, uses_for_<x>,
// relatives and pets by name, works_on, habit) come from patterns over the
// same tags; the persona facets follow from them. An object that means
// nothing without what the triple leaves out makes none: one that holds a
// pronoun ("listening to them"), or a noun whose "of" phrase, relative
// clause or infinitive the cut would drop ("the edge of the two",
// "the book where ..."); a short restrictive relative clause stays with its
// noun ("buses that never come on time"). Entities are the proper noun runs
// the tagger finds, with numbers, quoted terms and identifiers.
//
// Sentences in Chinese keep the patterns of RulesExtractor (see
// rules_patterns.go); Japanese and other scripts yield nothing.
//
// The tagger's model loads once per process, on the first Extract (see
// LoadTagger). Turns of a batch are parsed in parallel, up to Workers
// at a time, each a step of Pace when it is set. The same turns always
// give the same memories with the same IDs.
type NLPExtractor struct {
	// Workers bounds the turns parsed at once; 0 means GOMAXPROCS.
	Workers int
	// Pace, if set, bounds the parses with the rest of the background
	// work: each turn's is a step.
	Pace Pacer
}

// Pacer shares the cores between the parses and the rest of the
// background work (work.Pace is one): Step waits for a step,
// and done ends it.
type Pacer interface {
	Step(ctx context.Context) (done func(), err error)
}

var _ engram.Extractor = (*NLPExtractor)(nil)

// taggerModel is the part-of-speech model, loaded once. A document made
// without entity extraction builds a model of the tagger alone: the named
// entity classifier of prose scans a 10,000-word list per token (about 0.6
// ms a token), too slow to run on every turn.
var taggerModel = sync.OnceValue(func() *prose.Model {
	doc, err := prose.NewDocument("", prose.WithSegmentation(false), prose.WithExtraction(false))
	if err != nil {
		panic("prose: " + err.Error()) // the embedded model cannot fail to load
	}
	return doc.Model
})

// LoadTagger loads the tagger's model now, so that the first Extract does
// not pay for it. It is safe to call more than once.
func LoadTagger() { taggerModel() }

// Extract returns the memories found in turns, in turn order, without
// duplicates. It returns ctx.Err() when ctx is done before it finishes.
func (x *NLPExtractor) Extract(ctx context.Context, turns []engram.Turn) ([]engram.Memory, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ctxs := speakerContexts(turns)
	found := make([][]engram.Memory, len(turns))
	its := make([][]itSentence, len(turns))
	workers := x.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, len(turns)))
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		next int
	)
	take := func() int {
		mu.Lock()
		defer mu.Unlock()
		if next >= len(turns) || ctx.Err() != nil {
			return -1
		}
		next++
		return next - 1
	}
	parse := func(i int) {
		if x.Pace != nil {
			done, err := x.Pace.Step(ctx)
			if err != nil {
				return // Extract returns ctx's error
			}
			defer done()
		}
		found[i], its[i] = nlpTurn(&turns[i], ctxs[i])
	}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := take(); i >= 0; i = take() {
				if r := turns[i].Role; r != engram.RoleTool && r != engram.RoleSystem {
					parse(i)
				}
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	prev := make([]int, len(turns))
	for i := range ctxs {
		prev[i] = ctxs[i].prev
	}
	elaborate(turns, found, its, prev, ctxs)
	var out []engram.Memory
	seen := make(map[string]bool)
	for _, mems := range found {
		for _, m := range mems {
			if !seen[m.ID] {
				seen[m.ID] = true
				out = append(out, m)
			}
		}
	}
	return out, nil
}

// speakers says who a turn's pronouns name: the speaker ("I"), the other
// speaker of the session ("you"; "" when the batch shows none), and the
// session's speakers in order of appearance ("we").
type speakers struct {
	self, other string
	session     []string
	// burst is the turn before when the same speaker said it: a statement
	// spread over several short messages reads on from it.
	burst string
	// asked and askedID are the turn before when someone else said it: a
	// reply may answer its question (see answered).
	asked, askedID string
	prev           int // the turn before in the session, in the batch; -1: none
}

// speakerContexts finds, for each turn, the other speaker: the nearest
// earlier turn of the session by someone else, else the nearest later one.
func speakerContexts(turns []engram.Turn) []speakers {
	type key struct{ ns, session string }
	out := make([]speakers, len(turns))
	bySession := map[key][]int{}
	for i := range turns {
		k := key{turns[i].Namespace, turns[i].Session}
		bySession[k] = append(bySession[k], i)
		out[i].self = speakerName(&turns[i])
	}
	for _, idx := range bySession {
		var names []string
		for _, i := range idx {
			if n := out[i].self; !containsFold(names, n) {
				names = append(names, n)
			}
		}
		for j, i := range idx {
			self := out[i].self
			other := ""
			for k := j - 1; k >= 0 && other == ""; k-- {
				if n := out[idx[k]].self; !strings.EqualFold(n, self) {
					other = n
				}
			}
			for k := j + 1; k < len(idx) && other == ""; k++ {
				if n := out[idx[k]].self; !strings.EqualFold(n, self) {
					other = n
				}
			}
			out[i].other, out[i].session, out[i].prev = other, names, -1
			if j > 0 {
				out[i].prev = idx[j-1]
				if strings.EqualFold(out[idx[j-1]].self, self) {
					out[i].burst = turns[idx[j-1]].Content
				} else {
					out[i].asked, out[i].askedID = turns[idx[j-1]].Content, turns[idx[j-1]].ID
				}
			}
		}
	}
	return out
}

// speakerName is who says a turn: its speaker, else its role.
func speakerName(t *engram.Turn) string {
	s := strings.TrimSpace(strings.ToValidUTF8(t.Speaker, "\uFFFD"))
	if s == "" {
		s = string(t.Role)
	}
	if s == "" {
		s = string(engram.RoleUser)
	}
	return s
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// nlpTurn extracts the memories of one turn, and the sentences that open
// with "it" and made none (see elaborate).
func nlpTurn(t *engram.Turn, sp speakers) ([]engram.Memory, []itSentence) {
	ns := t.Namespace
	if ns == "" {
		ns = engram.DefaultNamespace
	}
	content := strings.ToValidUTF8(t.Content, "\uFFFD")
	var out []engram.Memory
	also := "" // a turn the sentence read with this one (the question it answers)
	add := func(f nlpFinding) {
		imp := ruleImportance[f.typ]
		if f.rationale != "" {
			imp += rationaleBonus
		}
		m := engram.Memory{
			ID:         engram.MemoryID(ns, f.typ, f.text, t.ID),
			Namespace:  ns,
			Type:       f.typ,
			Text:       f.text,
			Rationale:  f.rationale,
			Subject:    sp.self,
			Entities:   f.entities,
			Importance: math.Min(1, math.Round(imp*100)/100),
			TS:         t.TS,
			ValidFrom:  t.TS,
			Sources:    []string{t.ID},
			Relation:   f.rel,
		}
		if also != "" {
			m.Sources = append(m.Sources, also)
		}
		if !f.at.IsZero() && f.at.Before(t.TS) {
			m.ValidFrom = f.at
		}
		out = append(out, m)
	}
	prev := ""         // the sentence before, its pronouns resolved
	var was []referent // what the pronouns of the sentence before became
	before, lastStart := "", 0
	var said []string // the turn's sentences so far
	var its []itSentence
	// An "it" sentence that made a memory of its own goes on about nothing.
	dropSaid := func() {
		if n := len(its); n > 0 && len(out) > its[n-1].after {
			its = its[:n-1]
		}
	}
	for i, s := range splitSentences(normalizeChat(content)) {
		dropSaid()
		also = ""
		if !s.question {
			s.text = droppedI(s.text)
		}
		if i == 0 && sp.asked != "" && !s.question && affirmative.MatchString(s.text) {
			if st, ok := answered(lastQuestion(sp.asked), s.text); ok {
				s.text, also = st, sp.askedID
			}
		}
		if i == 0 && sp.burst != "" && hasBackPronoun(s.text) {
			// The last sentence of the message before (normalised alone:
			// the whole message is not needed).
			if ss := splitSentences(strings.ToValidUTF8(sp.burst, "\uFFFD")); len(ss) > 0 {
				prev = normalizeChat(ss[len(ss)-1].text)
			}
		}
		s.text, was = referBack(s.text, prev, was, sp.session)
		prev = s.text
		said = append(said, s.text)
		if !s.question && itCopula.MatchString(s.text) {
			its = append(its, itSentence{text: s.text, before: said[: len(said)-1 : len(said)-1], after: len(out)})
		}
		// The sentence before, in this turn, when it made no memory: it may
		// name the event this one tells of.
		setting := ""
		if i > 0 && len(out) == lastStart {
			setting = before
		}
		before, lastStart = s.text, len(out)
		if s.question {
			// "I finished another pottery project - want to see a pic?":
			// the question is the part after the dash.
			i := strings.LastIndex(s.text, " - ")
			if i <= 0 {
				continue
			}
			s.text, s.question = strings.TrimSpace(s.text[:i]), false
		}
		if isQuestion(s.text) || isHypothetical(s.text) || len(s.text) > maxClauseBytes {
			continue
		}
		if strings.IndexFunc(s.text, isHan) >= 0 {
			for _, c := range splitClauses(s.text) {
				if f, ok := matchClause(sp.self, c); ok {
					add(nlpFinding{typ: f.typ, text: f.text, rationale: f.rationale, entities: entities(f.entityText), rel: f.rel})
				}
			}
			continue
		}
		if f, ok := reminder(s.text, sp.self); ok {
			add(f)
			continue
		}
		if !mayState(s.text) || quoted(s.text) {
			continue
		}
		fs := parseSentence(s.text, t.TS, sp)
		if len(fs) > 0 && setting != "" {
			setDuring(fs, setting, t.TS, sp)
		}
		for _, f := range fs {
			add(f)
		}
	}
	dropSaid()
	return out, its
}

// firstPerson are the words a sentence about the speaker holds.
var firstPerson = wordSet("i me my mine myself we us our ours ourselves let's")

// mayState reports, before the sentence is tagged (the costly part),
// whether it can state anything the parser keeps: it speaks of the
// speaker, opens with a verb whose subject is dropped ("Lost my job"), or
// reports a decision ("the team settled on gRPC").
func mayState(s string) bool {
	first := true
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r == '\'')
	}) {
		w = strings.Trim(w, "'")
		switch {
		case firstPerson[w]:
			return true
		case decisionVerbs[verbStem(w)] && w != "pick" && w != "picks":
			return true
		case first && discourseWords[w], first && leadAdverbs[w]:
			continue
		case first:
			first = false
			if _, ok := irregularPast[w]; ok || strings.HasSuffix(w, "ed") || strings.HasSuffix(w, "ing") {
				return true
			}
		}
	}
	return false
}

var (
	todoRe   = regexp.MustCompile(`(?i)^(?:todo|to-do|to do)\s*[:\-]\s*(.+)`)
	remindRe = regexp.MustCompile(`(?i)^(?:please,?\s+)?(?:remind me to|don't forget to|do not forget to|remember to)\s+(.+)`)
)

// reminder reads the two imperatives that are the speaker's own plans: a
// todo ("TODO: rotate the keys") and a reminder ("Remind me to renew the
// certificate").
func reminder(s, self string) (nlpFinding, bool) {
	m := todoRe.FindStringSubmatch(s)
	verb := " has a todo: "
	if m == nil {
		m, verb = remindRe.FindStringSubmatch(s), " wants to remember to "
	}
	if m == nil {
		return nlpFinding{}, false
	}
	x := object(self, m[1])
	if x == "" || vague(x) {
		return nlpFinding{}, false
	}
	text := self + verb + x
	var ents []string
	if first, rest, ok := strings.Cut(x, " "); ok && verb == " has a todo: " && first != "" {
		ents = entities(rest) // an imperative's capital is no name
	} else {
		ents = entities(x)
	}
	return nlpFinding{typ: engram.MemoryPlan, text: capFirst(text), entities: ents}, true
}

// quoted reports whether a sentence quotes someone: it opens with a quote,
// or a reporting clause follows ("..., he said").
func quoted(s string) bool {
	return strings.HasPrefix(s, `"`) || enSuffixSaid.MatchString(s)
}
