package pipeline

import (
	"context"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/querytext"
	"github.com/engram-dev/engram/internal/textutil"
)

// RulesExtractor is the offline, deterministic L1 extractor: hand-written
// English and Chinese patterns for decisions, preferences, plans, facts about
// the speaker, habits (facts such as "Alice usually runs before work") and
// past events. It is the embedded default, so the pipeline works without an
// LLM; the Ollama extractor replaces it when configured.
//
// Where a statement has a clear triple the memory carries it as its
// Relation, subject the speaker: name, lives_in, works_at, works_as,
// is_from, is, likes, dislikes, prefers, favourite_<noun>, uses and
// uses_for_<purpose> (decisions: "we" counts as the speaker), habit, and the
// speaker's relatives by name (sister, married_to, partner, ...). The
// section "relations" below has the details; a vague statement keeps no
// relation.
//
// Each turn is split into sentences and clauses; a clause yields at most one
// memory, from the earliest pattern that matches and is not guarded out.
// Questions, hypotheticals ("if we decided..."), reported or quoted speech and
// negated or hedged statements ("I don't think we'll use X") yield nothing;
// "I don't like X" yields the negative preference. Tool and system turns are
// skipped: they are not statements of a participant.
//
// The same turns always give the same memories with the same IDs, so
// re-extracting a batch changes nothing.
type RulesExtractor struct{}

var _ engram.Extractor = RulesExtractor{}

// Base importance of each memory type; a decision with its rationale gets
// rationaleBonus more (capped at 1).
var ruleImportance = map[string]float64{
	engram.MemoryDecision:   0.9,
	engram.MemoryPlan:       0.7,
	engram.MemoryPreference: 0.6,
	engram.MemoryFact:       0.6,
	engram.MemoryEvent:      0.5,
}

const (
	rationaleBonus = 0.1
	// maxClauseBytes bounds what one pattern looks at: longer runs of text
	// without a sentence break are pasted documents or logs, not statements.
	maxClauseBytes = 1000
	maxEntities    = 16
)

// Extract returns the memories found in turns, in turn order, without
// duplicates. It returns ctx.Err() when ctx is done before it finishes.
func (RulesExtractor) Extract(ctx context.Context, turns []engram.Turn) ([]engram.Memory, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []engram.Memory
	seen := make(map[string]bool)
	for i := range turns {
		if i%64 == 63 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		t := &turns[i]
		if t.Role == engram.RoleTool || t.Role == engram.RoleSystem {
			continue
		}
		for _, m := range extractTurn(t) {
			if seen[m.ID] {
				continue
			}
			seen[m.ID] = true
			out = append(out, m)
		}
	}
	return out, nil
}

// finding is what a pattern yields for one clause.
type finding struct {
	typ, text, rationale string
	entityText           string // where entities are looked for
	rel                  *engram.Relation
}

func extractTurn(t *engram.Turn) []engram.Memory {
	subject := t.Speaker
	if subject == "" {
		subject = string(t.Role)
	}
	if subject == "" {
		subject = string(engram.RoleUser)
	}
	subject = strings.ToValidUTF8(subject, "\uFFFD") // the archive validates; direct callers may not
	ns := t.Namespace
	if ns == "" {
		ns = engram.DefaultNamespace
	}
	content := strings.ToValidUTF8(t.Content, "\uFFFD")
	content = strings.ReplaceAll(content, "’", "'") // "I’ll" as typed on phones
	var out []engram.Memory
	for _, s := range splitSentences(content) {
		if s.question || isQuestion(s.text) || isHypothetical(s.text) {
			continue
		}
		for _, c := range splitClauses(s.text) {
			f, ok := matchClause(subject, c)
			if !ok {
				continue
			}
			imp := ruleImportance[f.typ]
			if f.rationale != "" {
				imp += rationaleBonus
			}
			imp = math.Min(1, math.Round(imp*100)/100)
			out = append(out, engram.Memory{
				ID:         engram.MemoryID(ns, f.typ, f.text, t.ID),
				Namespace:  ns,
				Type:       f.typ,
				Text:       f.text,
				Rationale:  f.rationale,
				Subject:    subject,
				Entities:   entities(f.entityText),
				Importance: imp,
				TS:         t.TS,
				ValidFrom:  t.TS,
				Sources:    []string{t.ID},
				Relation:   f.rel,
			})
		}
	}
	return out
}

// --- sentences and clauses ---

type sentence struct {
	text     string
	question bool
}

// splitSentences splits on . ! ? ; (ASCII and full-width) and newlines. A
// period splits only before white space or the end, and not after an
// abbreviation ("e.g.", "Dr."), so versions and decimals stay whole.
func splitSentences(s string) []sentence {
	var out []sentence
	start := 0
	emit := func(end int, q bool) {
		if txt := strings.TrimSpace(s[start:end]); txt != "" {
			out = append(out, sentence{text: txt, question: q})
		}
	}
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch r {
		case '\n', '\r', '!', '！', '。', ';', '；':
			emit(i, false)
			start = i + n
		case '?', '？':
			emit(i, true)
			start = i + n
		case '.':
			next, _ := utf8.DecodeRuneInString(s[i+n:])
			if i+n == len(s) || unicode.IsSpace(next) {
				if !isAbbrev(s[start:i]) {
					emit(i, false)
					start = i + n
				}
			}
		}
		i += n
	}
	emit(len(s), false)
	return out
}

var abbrevs = map[string]bool{"mr": true, "mrs": true, "ms": true, "dr": true, "vs": true, "st": true, "jr": true, "sr": true, "e.g": true, "i.e": true, "approx": true}

func isAbbrev(before string) bool {
	w := before
	if i := strings.LastIndexFunc(before, unicode.IsSpace); i >= 0 {
		w = before[i+1:]
	}
	if w == "" {
		return false
	}
	if abbrevs[strings.ToLower(w)] {
		return true
	}
	r, n := utf8.DecodeRuneInString(w)
	return n == len(w) && unicode.IsLower(r)
}

// Clause breaks: "..., and I ...", "... but we ...", "...，我..."; the second
// clause keeps its subject.
var (
	enClauseBreak = regexp.MustCompile(`(?i)(?:[,:]\s*|\s+)(?:and|but|also|plus|so)\s+((?:i|we|my|let's)\b)`)
	zhClauseBreak = regexp.MustCompile(`[，,](?:而且|并且|但是|但|还有|另外|然后)?(我)`)
)

func splitClauses(s string) []string {
	// A cut ends one clause at end and starts the next at next.
	type cut struct{ end, next int }
	var cuts []cut
	for _, m := range enClauseBreak.FindAllStringSubmatchIndex(s, -1) {
		cuts = append(cuts, cut{m[0], m[2]})
	}
	for _, m := range zhClauseBreak.FindAllStringSubmatchIndex(s, -1) {
		cuts = append(cuts, cut{m[0], m[2]})
	}
	if len(cuts) == 0 {
		return []string{s}
	}
	slices.SortFunc(cuts, func(a, b cut) int { return a.end - b.end })
	var out []string
	start := 0
	for _, c := range cuts {
		if c.end < start {
			continue
		}
		part := s[start:c.end]
		// Keep a rationale with its decision: "因为便宜，我们决定用SQLite".
		if strings.Contains(part, "因为") || strings.Contains(part, "由于") || strings.Contains(strings.ToLower(part), "because") {
			continue
		}
		out = append(out, trimClause(part))
		start = c.next
	}
	return append(out, trimClause(s[start:]))
}

func trimClause(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimRight(s, ",，、:：-–— ")
	return strings.TrimLeft(s, "-*•·> \t")
}

// --- sentence-level guards ---

var (
	enQuestionStart = regexp.MustCompile(`(?i)^(?:do|does|did|are|is|am|can|could|would|should|will|shall|may|might|have|has|what|why|how|where|who|which|whose|whom|isn't|aren't|don't|doesn't|didn't|won't|wouldn't|shouldn't|can't)\b`)
	zhQuestion      = regexp.MustCompile(`(?:吗|呢|么|嘛)\s*$|是不是|要不要|能不能|会不会|有没有|好不好|行不行|对不对|怎么|什么|为什么|哪里|哪个|哪儿|几点|多少`)
	enHypoStart     = regexp.MustCompile(`(?i)^(?:(?:so|well|and|but|ok|okay|even),?\s+)?(?:if|unless|suppose|supposing|imagine|what if|in case|assuming|hypothetically|whether|were we to|had we)\b`)
	zhHypo          = regexp.MustCompile(`如果|假如|要是|假设|万一|倘若|如若|的话|假使`)
)

func isQuestion(s string) bool {
	return enQuestionStart.MatchString(s) || zhQuestion.MatchString(s)
}

func isHypothetical(s string) bool {
	return enHypoStart.MatchString(s) || zhHypo.MatchString(s)
}

// --- patterns ---

// rule is one pattern. hint, lower case, must occur in the lowered clause
// before the regexp is tried: most clauses match nothing, and a substring
// search is far cheaper than a regexp.
type rule struct {
	typ  string
	zh   bool
	hint []string
	re   *regexp.Regexp
	// skipFirst drops the object's first word before looking for entities:
	// an imperative ("TODO: Fix the login") is capitalised but no name.
	skipFirst bool
	obj       int // submatch holding the object, where entities are looked for
	build     func(subj string, m []string) (text, why string, ok bool)
	// rel, if set, gives the memory's knowledge-graph triple from the same
	// submatches, or nil where the statement has no clear one. It runs only
	// for the match that wins the clause.
	rel func(subj string, m []string) *engram.Relation
}

func (r rule) withRel(rel func(subj string, m []string) *engram.Relation) rule { r.rel = rel; return r }

// Guards on the text before a match. The whole prefix must not report speech
// or set a condition; the clause right before the match must not negate, hedge
// or name someone else.
var (
	enPrefixAny  = regexp.MustCompile(`(?i)\b(?:if|unless|suppose|supposing|imagine|whether|assuming|hypothetically|said|says|say|told|tells|asked|asks|claims|claimed|wrote|writes|pretend|pretending)\b`)
	enPrefixNear = regexp.MustCompile(`(?i)n't\b|\b(?:not|never|no|maybe|perhaps|might|would|could|should|think|thinks|thought|believe|believes|wonder|wondering|hope|hopes|wish|doubt|guess|he|she|they|you|nobody|someone|whoever|when)\b`)
	enSuffixSaid = regexp.MustCompile(`(?i),\s*(?:he|she|they|someone|[a-z]+)\s+(?:said|says|claimed|claims|told|wrote)\b`)
	zhPrefixAny  = regexp.MustCompile(`说|告诉|问|听说`)
	zhPrefixNear = regexp.MustCompile(`不|没|别|觉得|认为|以为|也许|可能|或许|是否|他|她|你|谁`)
	nearBreak    = regexp.MustCompile(`[,;:—–(，、；：（]|所以`)

	// planPeriod is what a plan may open with that names no date range,
	// which querytext.TimeSuffix therefore does not read: a season, a
	// quarter or a sprint ("Next sprint, we'll..."), and "later today".
	planPeriod = regexp.MustCompile(`(?i)(?:^|[\s,])((?:next|last|this) (?:summer|winter|spring|autumn|fall|quarter|sprint)|later today)\s*,?\s*$`)
)

// timeSuffix returns the time a statement's lead names ("Next week I'll
// visit..."), which the memory keeps at its end ("...visit Porto next
// week").
func timeSuffix(lead string) (string, bool) {
	if m := planPeriod.FindStringSubmatch(lead); m != nil {
		return m[1], true
	}
	// Only the expression's span is used: the date it resolves to, against
	// any day, is not.
	return querytext.TimeSuffix(lead, timeSuffixDay)
}

// timeSuffixDay is the day time expressions are resolved against for their
// span alone: a leap year, so that "on February 29" reads as a date.
var timeSuffixDay = time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)

func blocked(zh bool, clause string, start, end int) bool {
	prefix := clause[:start]
	if insideQuote(prefix) {
		return true
	}
	near := prefix
	if locs := nearBreak.FindAllStringIndex(prefix, -1); len(locs) > 0 {
		near = prefix[locs[len(locs)-1][1]:]
	}
	if zh {
		return zhPrefixAny.MatchString(prefix) || zhPrefixNear.MatchString(near)
	}
	if enPrefixAny.MatchString(prefix) || enPrefixNear.MatchString(near) {
		return true
	}
	// "We decided to use Redis, he said": reported after the fact.
	return enSuffixSaid.MatchString(clause[start:end])
}

// insideQuote reports whether a match after prefix lies within quotation
// marks: quoted speech is not the speaker's own statement.
func insideQuote(prefix string) bool {
	return strings.Count(prefix, `"`)%2 == 1 ||
		strings.Count(prefix, "“") > strings.Count(prefix, "”") ||
		strings.Count(prefix, "「") > strings.Count(prefix, "」") ||
		strings.Count(prefix, "『") > strings.Count(prefix, "』")
}

func matchClause(subj, clause string) (finding, bool) {
	if clause == "" || len(clause) > maxClauseBytes {
		return finding{}, false
	}
	lower := strings.ToLower(clause)
	hasHan := strings.IndexFunc(clause, isHan) >= 0
	best := finding{}
	bestStart := -1
	var bestRule *rule
	var bestM []string
	for i := range extractRules {
		r := &extractRules[i]
		if r.zh && !hasHan {
			continue
		}
		if !hasHint(lower, r.hint) {
			continue
		}
		for _, loc := range r.re.FindAllStringSubmatchIndex(clause, 4) {
			if bestStart >= 0 && loc[0] >= bestStart {
				break
			}
			if blocked(r.zh, clause, loc[0], loc[1]) {
				continue
			}
			m := submatches(clause, loc)
			text, why, ok := r.build(subj, m)
			if !ok {
				continue
			}
			f := finding{typ: r.typ, rationale: why}
			if r.zh {
				f.text = subj + ": " + clause
				f.entityText = clause[loc[0]:]
			} else {
				if when, ok := timeSuffix(clause[:loc[0]]); ok {
					text += " " + strings.ToLower(when)
				}
				f.text = capFirst(text)
				f.entityText = m[r.obj]
				if r.skipFirst {
					if _, rest, ok := strings.Cut(strings.TrimSpace(f.entityText), " "); ok {
						f.entityText = rest
					}
				}
			}
			best, bestStart, bestRule, bestM = f, loc[0], r, m
			break
		}
	}
	if bestStart < 0 {
		return finding{}, false
	}
	if bestRule.rel != nil {
		best.rel = bestRule.rel(subj, bestM)
	}
	return best, true
}

func hasHint(lower string, hints []string) bool {
	for _, h := range hints {
		if strings.Contains(lower, h) {
			return true
		}
	}
	return len(hints) == 0
}

func submatches(s string, loc []int) []string {
	m := make([]string, len(loc)/2)
	for i := range m {
		if loc[2*i] >= 0 {
			m[i] = s[loc[2*i]:loc[2*i+1]]
		}
	}
	return m
}

// isHan reports whether r is a Chinese character.
func isHan(r rune) bool { return textutil.ScriptOf(r) == textutil.ScriptHan }

func capFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if r < utf8.RuneSelf && unicode.IsLower(r) {
		return string(unicode.ToUpper(r)) + s[n:]
	}
	return s
}

// object cleans the captured rest of a statement: white space collapsed,
// trailing punctuation dropped, "my" turned into the subject's.
func object(subj, x string) string {
	x = strings.Join(strings.Fields(x), " ")
	x = strings.TrimRight(x, ",;:-–— ")
	return myRe.ReplaceAllLiteralString(x, subj+"'s")
}

var myRe = regexp.MustCompile(`(?i)\bmy\b`)

// vague objects make no memory: "I like it", "I'll do that".
var vagueFirst = map[string]bool{"it": true, "that": true, "this": true, "them": true, "you": true, "him": true, "her": true,
	"those": true, "these": true, "so": true, "one": true, "bit": true, "little": true, "lot": true, "few": true, "not": true, "never": true, "no": true, "nothing": true, "anything": true, "something": true}

func vague(x string) bool {
	f := strings.Fields(strings.ToLower(x))
	if len(f) == 0 {
		return true
	}
	return vagueFirst[strings.Trim(f[0], ",.!'\"")]
}

var smallTalk = []string{"be right back", "be back", "see you", "talk to you", "let you know", "get back to you", "think about it",
	"try", "check", "take a look", "have a look", "look into it", "help", "do my best", "be fine", "be there", "keep that in mind"}

func isSmallTalk(x string) bool {
	l := strings.ToLower(x)
	for _, p := range smallTalk {
		if l == p || strings.HasPrefix(l, p+" ") {
			return true
		}
	}
	return false
}

var becauseRe = regexp.MustCompile(`(?i)\s*(?:,\s*since|,?\s+(?:because(?: of)?|so that))\s+`)

// because splits "X because Y" into X and Y.
func because(x string) (string, string) {
	if loc := becauseRe.FindStringIndex(x); loc != nil && loc[0] > 0 {
		return strings.TrimSpace(x[:loc[0]]), strings.TrimRight(strings.TrimSpace(x[loc[1]:]), ",;: ")
	}
	return x, ""
}

var thirdPerson = map[string]string{
	"prefer": "prefers", "like": "likes", "love": "loves", "hate": "hates", "enjoy": "enjoys", "dislike": "dislikes",
	"adore": "adores", "can't stand": "can't stand", "need to": "needs to", "have to": "has to", "must": "must",
	"should": "should", "got to": "has to", "gotta": "has to", "plan": "plans", "intend": "intends", "want": "wants",
	"aim": "aims", "mean": "means", "work": "works", "live": "lives",
}

func third(v string) string {
	l := strings.ToLower(strings.Join(strings.Fields(v), " "))
	if t, ok := thirdPerson[l]; ok {
		return t
	}
	return l
}

// enRule makes an English rule whose text is subject + verb phrase + object,
// where verb(m) gives the verb phrase and obj is the index of the object.
func enRule(typ string, hint []string, expr string, obj int, verb func(m []string) string) rule {
	return rule{typ: typ, hint: hint, re: regexp.MustCompile(`(?i)\b` + expr), obj: obj,
		build: func(subj string, m []string) (string, string, bool) {
			x := object(subj, m[obj])
			why := ""
			if typ == engram.MemoryDecision {
				x, why = because(x)
			}
			if x == "" || vague(x) {
				return "", "", false
			}
			v := verb(m)
			if !strings.HasPrefix(v, "'") {
				v = " " + v
			}
			return subj + v + " " + x, why, true
		}}
}

func imperative(r rule) rule { r.skipFirst = true; return r }

func litVerb(s string) func([]string) string { return func([]string) string { return s } }

// zhRule makes a Chinese rule; its text is the subject and the clause. check, if
// set, vets the submatches.
func zhRule(typ string, hint []string, expr string, check func(m []string) bool) rule {
	return rule{typ: typ, zh: true, hint: hint, re: regexp.MustCompile(expr),
		build: func(_ string, m []string) (string, string, bool) {
			if check != nil && !check(m) {
				return "", "", false
			}
			why := ""
			if typ == engram.MemoryDecision {
				why = zhRationale(m[0])
			}
			return m[0], why, true
		}}
}

var (
	zhBecauseSo  = regexp.MustCompile(`(?:因为|由于)(.+?)[，,]?\s*所以`)
	zhBecause    = regexp.MustCompile(`[，,]\s*(?:因为|由于)(.+)$`)
	zhDecideVerb = regexp.MustCompile(`用|选|采用|使用|决定|改用|换成|换用`)
	zhVagueObj   = regexp.MustCompile(`^(?:你|他|她|它|这个|那个|这样|那样|是|说|不|没)`)
)

func zhRationale(s string) string {
	if m := zhBecauseSo.FindStringSubmatch(s); m != nil {
		return strings.TrimSpace(m[1])
	}
	if m := zhBecause.FindStringSubmatch(s); m != nil {
		return strings.TrimRight(strings.TrimSpace(m[1]), "，,。 ")
	}
	return ""
}

func notVague(i int) func(m []string) bool {
	return func(m []string) bool {
		x := strings.TrimSpace(m[i])
		return x != "" && !zhVagueObj.MatchString(x)
	}
}

// extractRules are in priority order: when two match at the same place the first wins
// ("we'll use X" is a decision, not a plan; "I'm a big fan of X" a
// preference, not a role).
var extractRules = []rule{
	// Decisions.
	enRule(engram.MemoryDecision, []string{"decided"}, `(?:we|i)(?: have|'ve)?(?: finally| just| already)? decided (not to|to|on) (.+)`, 2,
		func(m []string) string { return "decided " + strings.ToLower(m[1]) }).withRel(
		func(subj string, m []string) *engram.Relation {
			switch strings.ToLower(m[1]) {
			case "to":
				return toolRel(subj, decisionObj(subj, m[2]))
			case "on":
				return useRel(subj, "decided on", decisionObj(subj, m[2]))
			}
			return nil
		}),
	enRule(engram.MemoryDecision, []string{"let"}, `let'?s (go with|use|pick|choose|stick with|switch to|adopt) (.+)`, 2,
		func(m []string) string { return "decided to " + strings.ToLower(m[1]) }).withRel(
		func(subj string, m []string) *engram.Relation { return useRel(subj, m[1], decisionObj(subj, m[2])) }),
	enRule(engram.MemoryDecision, []string{"agreed"}, `(?:we|i)(?: have|'ve)?(?: all)? agreed (on|to|that) (.+)`, 2,
		func(m []string) string { return "agreed " + strings.ToLower(m[1]) }).withRel(
		func(subj string, m []string) *engram.Relation {
			if !strings.EqualFold(m[1], "to") {
				return nil
			}
			return toolRel(subj, decisionObj(subj, m[2]))
		}),
	enRule(engram.MemoryDecision, []string{"decision"}, `the (?:final )?decision is(?: that)?:? (to )?(.+)`, 2,
		func(m []string) string {
			if m[1] != "" {
				return "decided to"
			}
			return "decided:"
		}).withRel(
		func(subj string, m []string) *engram.Relation {
			if m[1] == "" {
				return nil
			}
			return toolRel(subj, decisionObj(subj, m[2]))
		}),
	enRule(engram.MemoryDecision, []string{"we", "i"}, `(?:we|i)(?:'ll| will|'re going to| are going to|'m going to| am going to) (use|go with|switch to|adopt|stick with|pick|choose|migrate to|move to) (.+)`, 2,
		func(m []string) string { return "decided to " + strings.ToLower(m[1]) }).withRel(
		func(subj string, m []string) *engram.Relation { return useRel(subj, m[1], decisionObj(subj, m[2])) }),
	enRule(engram.MemoryDecision, []string{"chose", "picked", "settled", "went with", "opted"}, `(?:we|i)(?: have|'ve)? (chose|picked|settled on|went with|opted for) (.+)`, 2,
		func(m []string) string { return strings.ToLower(m[1]) }).withRel(
		func(subj string, m []string) *engram.Relation {
			x := decisionObj(subj, m[2])
			if rest, ok := cutPrefixFold(x, "to "); ok { // "we chose to use X"
				return toolRel(subj, rest)
			}
			return useRel(subj, m[1], x)
		}),

	// Preferences.
	enRule(engram.MemoryPreference, []string{"favourite", "favorite"}, `my (?:all-time )?(favou?rite .+? (?:is|are)) (.+)`, 2,
		func(m []string) string { return "'s " + strings.ToLower(m[1]) }).withRel(favouriteRel),
	enRule(engram.MemoryPreference, []string{"don't", "do not"}, `i (?:really )?(?:don't|do not) (?:really )?(like|love|enjoy) (.+)`, 2,
		func(m []string) string { return "doesn't " + strings.ToLower(m[1]) }).withRel(
		func(subj string, m []string) *engram.Relation {
			if strings.EqualFold(m[1], "love") { // not loving X is no dislike
				return nil
			}
			return tasteRel(subj, "dislikes", object(subj, m[2]))
		}),
	enRule(engram.MemoryPreference, []string{"fan of"}, `i(?:'m| am) (?:a |an )?(?:big |huge |massive )?fan of (.+)`, 1, litVerb("is a fan of")).withRel(
		func(subj string, m []string) *engram.Relation { return tasteRel(subj, "likes", object(subj, m[1])) }),
	enRule(engram.MemoryPreference, []string{"i "}, `i ((?:really |also |much |truly |definitely |absolutely |still )?)(prefer|like|love|hate|enjoy|dislike|adore|can't stand) (.+)`, 3,
		func(m []string) string { return strings.ToLower(m[1]) + third(m[2]) }).withRel(
		func(subj string, m []string) *engram.Relation {
			return tasteRel(subj, tastePredicate[strings.ToLower(m[2])], object(subj, m[3]))
		}),

	// Plans and todos.
	enRule(engram.MemoryPlan, []string{"going to", "planning to"}, `(?:i|we)(?:'m| am|'re| are) (going|planning) to (.+)`, 2,
		func(m []string) string { return "is " + strings.ToLower(m[1]) + " to" }),
	{typ: engram.MemoryPlan, hint: []string{"'ll", "will", "shall"}, re: regexp.MustCompile(`(?i)\b(?:i|we)(?:'ll| will| shall) (.+)`), obj: 1,
		build: func(subj string, m []string) (string, string, bool) {
			x := object(subj, m[1])
			if x == "" || vague(x) || isSmallTalk(x) || strings.HasPrefix(strings.ToLower(x), "be ") && len(strings.Fields(x)) < 3 {
				return "", "", false
			}
			return subj + " will " + x, "", true
		}},
	enRule(engram.MemoryPlan, []string{"plan", "intend", "want", "aim", "mean"}, `(?:i|we) (plan|intend|want|aim|mean) to (.+)`, 2,
		func(m []string) string { return third(m[1]) + " to" }),
	enRule(engram.MemoryPlan, []string{"need", "have to", "must", "should", "got"}, `(?:we|i) (need to|have to|must|should|got to|gotta) (.+)`, 2,
		func(m []string) string { return third(m[1]) }),
	imperative(enRule(engram.MemoryPlan, []string{"todo", "to-do", "to do"}, `(?:todo|to-do|to do)\s*[:\-]\s*(.+)`, 1, litVerb("has a todo:"))),
	enRule(engram.MemoryPlan, []string{"remind me", "forget to", "remember to"}, `(?:remind me to|don't forget to|do not forget to|remember to) (.+)`, 1,
		litVerb("wants to remember to")),

	// Facts about the speaker and their people.
	enRule(engram.MemoryFact, []string{"my name", "call me"}, `(?:my name is|my name's|call me) (.+)`, 1, litVerb("is called")).withRel(
		func(subj string, m []string) *engram.Relation {
			// "Call me Bob", not "call me tomorrow".
			return nameRel(subj, "name", object(subj, m[1]), hasPrefixFold(m[0], "call"))
		}),
	enRule(engram.MemoryFact, []string{"i'm", "i am"}, `i(?:'m| am) (a|an) (.+)`, 2,
		func(m []string) string { return "is " + strings.ToLower(m[1]) }).withRel(
		func(subj string, m []string) *engram.Relation { return identityRel(subj, object(subj, m[2])) }),
	enRule(engram.MemoryFact, []string{"work"}, `i (?:work|am working|'m working) (at|for|in|as) (.+)`, 2,
		func(m []string) string { return "works " + strings.ToLower(m[1]) }).withRel(
		func(subj string, m []string) *engram.Relation { return workRel(subj, m[1], object(subj, m[2])) }),
	enRule(engram.MemoryFact, []string{"live"}, `i (?:live|am living|'m living) in (.+)`, 1, litVerb("lives in")).withRel(
		func(subj string, m []string) *engram.Relation {
			return newRel(subj, "lives_in", home(object(subj, m[1])))
		}),
	enRule(engram.MemoryFact, []string{"from"}, `i(?:'m| am) (?:originally )?from (.+)`, 1, litVerb("is from")).withRel(
		func(subj string, m []string) *engram.Relation {
			return placeRel(subj, "is_from", object(subj, m[1]), liveCuts)
		}),
	rule{typ: engram.MemoryFact, hint: []string{"my "}, re: regexp.MustCompile(`(?i)\bmy ((?:best |older |younger |little |big )?(?:sister|brother|wife|husband|partner|friend|mom|mum|mother|dad|father|son|daughter|boss|manager|colleague|coworker|girlfriend|boyfriend|cousin|aunt|uncle|grandma|grandmother|grandpa|grandfather|dog|cat)(?:'s)?) (.+)`), obj: 2,
		build: func(subj string, m []string) (string, string, bool) {
			x := object(subj, m[2])
			if x == "" || reportVerb.MatchString(x) {
				return "", "", false
			}
			return subj + "'s " + strings.ToLower(m[1]) + " " + x, "", true
		}}.withRel(kinRel),

	// Past events.
	enRule(engram.MemoryEvent, []string{"went", "visited", "started", "moved", "attended", "joined", "finished", "graduated", "flew", "travel", "met"},
		`(?:i|we) (?:just |finally |recently )?(went to|visited|started|moved to|attended|joined|finished|graduated from|flew to|travelled to|traveled to|met) (.+)`, 2,
		func(m []string) string { return strings.ToLower(m[1]) }).withRel(
		func(subj string, m []string) *engram.Relation {
			// "I moved to Berlin"; "we moved to Postgres" is a migration.
			if !hasPrefixFold(m[0], "i ") || !strings.EqualFold(m[1], "moved to") {
				return nil
			}
			return placeRel(subj, "lives_in", object(subj, m[2]), placeCuts)
		}),

	// Habits: facts with the relation (speaker, habit, activity). After
	// the rules above, and the leading "every morning I ..." form steps
	// aside for their verbs, so a clause they matched keeps its memory.
	{typ: engram.MemoryFact, hint: habitAdverbs, obj: 3,
		re: regexp.MustCompile(`(?i)\bi (` + strings.Join(habitAdverbs, "|") + `) ([a-z']+)\b(.*)`),
		build: func(subj string, m []string) (string, string, bool) {
			return habitText(subj, m[2], m[3], strings.ToLower(m[1]), "", false)
		},
		rel: func(subj string, m []string) *engram.Relation { return habitRel(subj, m[2], m[3], "") }},
	{typ: engram.MemoryFact, hint: []string{"every"}, obj: 3,
		re: regexp.MustCompile(`(?i)\b(every ` + habitPeriods + `)\s*,?\s+i ([a-z']+)\b(.*)`),
		build: func(subj string, m []string) (string, string, bool) {
			return habitText(subj, m[2], m[3], "", strings.ToLower(m[1]), true)
		},
		rel: func(subj string, m []string) *engram.Relation {
			return habitRel(subj, m[2], m[3], strings.ToLower(m[1]))
		}},
	{typ: engram.MemoryFact, hint: []string{"every"}, obj: 2,
		re: regexp.MustCompile(`(?i)\bi ([a-z']+)\b(.*?),?\s+(every ` + habitPeriods + `)\b`),
		build: func(subj string, m []string) (string, string, bool) {
			return habitText(subj, m[1], m[2], "", strings.ToLower(m[3]), false)
		},
		rel: func(subj string, m []string) *engram.Relation {
			return habitRel(subj, m[1], m[2], strings.ToLower(m[3]))
		}},

	// Chinese.
	zhRule(engram.MemoryDecision, nil, `(?:我们|我)(?:最终|最后|已经|一致)?决定(?:了)?(.+)`, notVague(1)).withRel(
		func(subj string, m []string) *engram.Relation { return zhUseRel(subj, m[1], true) }),
	zhRule(engram.MemoryDecision, nil, `决定(?:用|使用|采用|选用|选)(.+)`, notVague(1)).withRel(
		func(subj string, m []string) *engram.Relation {
			return zhUseRel(subj, strings.TrimPrefix(m[0], "决定"), true)
		}),
	zhRule(engram.MemoryDecision, nil, `就(?:用|选)(.+?)吧`, notVague(1)).withRel(
		func(subj string, m []string) *engram.Relation {
			return zhUseRel(subj, strings.TrimPrefix(m[0], "就"), true)
		}),
	zhRule(engram.MemoryDecision, nil, `(?:因为|由于)(.+?)[，,]?\s*所以(.+)`, func(m []string) bool { return zhDecideVerb.MatchString(m[2]) }).withRel(
		func(subj string, m []string) *engram.Relation { return zhUseRel(subj, m[2], false) }),
	zhRule(engram.MemoryPreference, nil, `我最喜欢的(.+?)是(.+)`, nil).withRel(
		func(subj string, m []string) *engram.Relation {
			if k := zhKey(m[1], zhFavouriteKeys); k != "" {
				return newRel(subj, "favourite_"+k, zhObj(m[2]))
			}
			return nil
		}),
	zhRule(engram.MemoryPreference, nil, `我(?:真的|也|并|一点也|一直)?不(?:太|怎么)?(?:喜欢|爱)(.+)`, notVague(1)).withRel(
		func(subj string, m []string) *engram.Relation { return newRel(subj, "dislikes", zhObj(m[1])) }),
	zhRule(engram.MemoryPreference, nil, `我(?:更|很|非常|特别|比较|真的|也|最|一直)?(?:喜欢|爱|偏好|讨厌|热爱)(.+)`, notVague(1)).withRel(
		func(subj string, m []string) *engram.Relation {
			pred := "likes"
			switch verb := m[0][:len(m[0])-len(m[1])]; {
			case strings.HasSuffix(verb, "讨厌"):
				pred = "dislikes"
			case strings.HasSuffix(verb, "偏好") || strings.HasPrefix(verb, "我更"):
				pred = "prefers"
			}
			return newRel(subj, pred, zhObj(m[1]))
		}),
	zhRule(engram.MemoryPlan, nil, `(?:我们|我)(?:下周|明天|今晚|周末|之后|以后)?(?:打算|准备|计划|想要|要|需要)(.+)`, notVague(1)),
	zhRule(engram.MemoryPlan, nil, `^(?:计划|记得|别忘了|提醒我|待办[:：]?)(.+)`, notVague(1)),
	zhRule(engram.MemoryFact, nil, `我叫(.+)`, notVague(1)).withRel(
		func(subj string, m []string) *engram.Relation { return zhNameRel(subj, "name", m[1]) }),
	zhRule(engram.MemoryFact, nil, `我的名字是(.+)`, notVague(1)).withRel(
		func(subj string, m []string) *engram.Relation { return zhNameRel(subj, "name", m[1]) }),
	zhRule(engram.MemoryFact, nil, `我在(.+?)(?:工作|上班|任职)`, notVague(1)).withRel(
		func(subj string, m []string) *engram.Relation { return zhWorkRel(subj, m[1]) }),
	zhRule(engram.MemoryFact, nil, `我住在(.+)`, notVague(1)).withRel(
		func(subj string, m []string) *engram.Relation { return newRel(subj, "lives_in", zhObj(m[1])) }),
	zhRule(engram.MemoryFact, []string{"来自"}, `我来自(.+)`, notVague(1)).withRel(
		func(subj string, m []string) *engram.Relation { return newRel(subj, "is_from", zhObj(m[1])) }),
	zhRule(engram.MemoryFact, nil, `我的?(妹妹|姐姐|哥哥|弟弟|妻子|老婆|丈夫|老公|朋友|女朋友|男朋友|儿子|女儿|妈妈|爸爸|母亲|父亲|同事|老板)(.+)`,
		func(m []string) bool { return !zhReport.MatchString(m[2]) }).withRel(zhKinRel),
	zhRule(engram.MemoryFact, nil, `我是(.{1,20})$`, func(m []string) bool {
		return !zhVagueObj.MatchString(m[1]) && !strings.HasPrefix(m[1], "在") && !strings.HasPrefix(m[1], "想")
	}).withRel(func(subj string, m []string) *engram.Relation { return zhIdentityRel(subj, m[1]) }),
	zhRule(engram.MemoryEvent, nil, `(?:我们|我)(?:昨天|上周|上个月|去年|今天|刚)?(?:去了|参加了|搬到了|搬到|开始了|完成了|加入了|见了)(.+)`, notVague(1)).withRel(
		func(subj string, m []string) *engram.Relation {
			// "我搬到了深圳"; "我们搬到了..." is the team's.
			verb := strings.TrimSuffix(m[0][:len(m[0])-len(m[1])], "了")
			if strings.HasPrefix(m[0], "我们") || !strings.HasSuffix(verb, "搬到") {
				return nil
			}
			return newRel(subj, "lives_in", zhObj(m[1]))
		}),
	// Habits, as in English: "我每天跑步", "每天早上我都跑步".
	zhRule(engram.MemoryFact, []string{"每", "通常", "经常", "一般", "总是", "常常", "平时", "平常", "往往"},
		`我(`+zhHabitPeriods+`|平时|平常|通常|经常|一般|总是|常常|往往)(早上|早晨|上午|中午|下午|晚上)?(?:都会|都|会|也)?(.+)`, zhHabitOK).withRel(zhHabitRel),
	zhRule(engram.MemoryFact, []string{"每"},
		`(`+zhHabitPeriods+`)(早上|早晨|上午|中午|下午|晚上)?我(?:都会|都|会|也)?(.+)`, zhHabitOK).withRel(zhHabitRel),
}

var (
	reportVerb = regexp.MustCompile(`(?i)^(?:said|says|told|tells|asked|asks|thinks|thought|believes|claims|wrote)\b`)
	zhReport   = regexp.MustCompile(`^(?:说|觉得|认为|告诉|问)`)
)

// --- relations ---
//
// A memory's relation is (subject, predicate, object) with a snake_case
// predicate; the subject is the speaker. "We" is not resolved to a group: a
// decision the speaker reports ("we decided to use X") is the speaker's
// (speaker, uses_for_<purpose>, X). A relative is tied to the speaker by
// name, (Ana, sister, Maria) from "my sister Maria ...", and is the subject
// herself only when unnamed: ("Ana's sister", lives_in, Oslo). Objects are cut
// before a trailing clause ("Berlin with my wife" is Berlin); where the
// object is long, vague or not clearly the thing the predicate wants, the
// memory keeps no relation.

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
	if k == "" {
		return nil
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

// thirdSingular conjugates a verb for he or she: run, runs; watch, watches.
func thirdSingular(v string) string {
	switch v {
	case "have":
		return "has"
	case "do", "go":
		return v + "es"
	case "be":
		return "is"
	}
	n := len(v)
	switch {
	case n == 0:
		return v
	case strings.HasSuffix(v, "s"), strings.HasSuffix(v, "sh"), strings.HasSuffix(v, "ch"), strings.HasSuffix(v, "x"),
		strings.HasSuffix(v, "z"), strings.HasSuffix(v, "o"):
		return v + "es"
	case n > 1 && v[n-1] == 'y' && !strings.ContainsRune("aeiou", rune(v[n-2])):
		return v[:n-1] + "ies"
	}
	return v + "s"
}

// --- Chinese relations ---

var (
	zhUseStart  = regexp.MustCompile(`^(?:还是|就|先|要|继续)?(?:改用|换成|换用|采用|使用|选用|选择|选|用)`)
	zhUseAny    = regexp.MustCompile(`改用|换成|换用|采用|使用|选用|选择|选|用`)
	zhPurpose   = regexp.MustCompile(`^(?:用来做|用来|用于|来做|来作|作为|当作|做|作|当|来)`)
	zhToolEnd   = regexp.MustCompile(`用来|用于|来做|来作|作为|当作|做|作|当|来|吧|了|，|,|。|；|因为|由于`)
	zhObjEnd    = regexp.MustCompile(`[，,。；;！!（(]|因为|由于|但是|所以|而且|并且|然后|不过`)
	zhMeasure   = regexp.MustCompile(`^(?:一名|一个|一位|一款|一种|个|名|位)`)
	zhWorkStop  = wordSet("家 家里 这里 那里 这儿 那儿 公司 外地 国外 本地")
	zhJobs      = wordSet("医生 护士 会计 经理 记者 作家 教授 司机 销售 主管 总监 创始人 厨子 警察 军人 演员 歌手 画家 编辑 翻译 导演 秘书 农民 工人")
	zhIs        = wordSet("学生 大学生 研究生 博士生 中学生 小学生 素食者 素食主义者 新手 夜猫子")
	zhNotJob    = wordSet("会员 成员 队员 大师")
	zhHabitSkip = regexp.MustCompile(`^(?:们|想|打算|准备|计划|希望|觉得|认为|要|需要|得)`)
)

// zhFavouriteKeys and zhPurposeKeys give Chinese nouns the English key the
// English rules derive, so both languages meet in the graph.
var (
	zhFavouriteKeys = map[string]string{"书": "book", "电影": "movie", "颜色": "color", "食物": "food", "菜": "food",
		"歌": "song", "歌曲": "song", "歌手": "singer", "乐队": "band", "运动": "sport", "编程语言": "programming_language",
		"语言": "language", "城市": "city", "水果": "fruit", "饮料": "drink", "游戏": "game", "作家": "author",
		"编辑器": "editor", "动物": "animal", "季节": "season", "电视剧": "tv_show", "国家": "country"}
	zhPurposeKeys = map[string]string{"存储": "storage", "缓存": "caching", "数据库": "database", "消息队列": "message_queue",
		"队列": "queue", "前端": "frontend", "后端": "backend", "监控": "monitoring", "日志": "logging", "部署": "deployment",
		"搜索": "search", "认证": "auth", "网关": "gateway", "测试": "testing"}
)

// zhObj cuts a Chinese object before a following clause and its final
// particles.
func zhObj(s string) string {
	if loc := zhObjEnd.FindStringIndex(s); loc != nil {
		s = s[:loc[0]]
	}
	s = strings.TrimSpace(strings.TrimRight(s, relTrim))
	if utf8.RuneCountInString(s) > maxZhObject {
		return ""
	}
	return s
}

// zhKey is the English key of a Chinese noun from keys, else the noun
// itself when short; "" otherwise.
func zhKey(s string, keys map[string]string) string {
	s = strings.TrimSpace(s)
	if k, ok := keys[s]; ok {
		return k
	}
	if s == "" || utf8.RuneCountInString(s) > maxZhRunes || strings.ContainsFunc(s, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		return ""
	}
	return strings.ToLower(s)
}

// zhUseRel reads "用SQLite做存储" (from the verb on when anchored, else from
// the first verb) as (subj, uses_for_storage, SQLite).
func zhUseRel(subj, s string, anchored bool) *engram.Relation {
	s = strings.TrimSpace(s)
	var rest string
	if anchored {
		loc := zhUseStart.FindStringIndex(s)
		if loc == nil {
			return nil
		}
		rest = s[loc[1]:]
	} else {
		loc := zhUseAny.FindStringIndex(s)
		if loc == nil {
			return nil
		}
		rest = s[loc[1]:]
	}
	rest = strings.TrimSpace(rest)
	var tool string
	if r, _ := utf8.DecodeRuneInString(rest); r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
		n := strings.IndexFunc(rest, func(r rune) bool {
			return r >= utf8.RuneSelf || !(unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune(" ._+#-/", r))
		})
		if n < 0 {
			n = len(rest)
		}
		tool = strings.TrimSpace(rest[:n])
	} else {
		n := len(rest)
		if loc := zhToolEnd.FindStringIndex(rest); loc != nil {
			n = loc[0]
		}
		tool = rest[:n]
		if strings.HasPrefix(tool, "一") || strings.HasPrefix(tool, "哪") || utf8.RuneCountInString(tool) > maxZhRunes {
			return nil
		}
	}
	if tool == "" {
		return nil
	}
	pred := "uses"
	after := strings.TrimSpace(rest[len(tool):])
	if loc := zhPurpose.FindStringIndex(after); loc != nil {
		if k := zhKey(zhObj(after[loc[1]:]), zhPurposeKeys); k != "" {
			pred = "uses_for_" + k
		}
	}
	return newRel(subj, pred, tool)
}

func zhNameRel(who, pred, s string) *engram.Relation {
	x := zhObj(s)
	if strings.HasPrefix(x, "了") || utf8.RuneCountInString(x) > 10 {
		return nil
	}
	return newRel(who, pred, x)
}

func zhWorkRel(who, s string) *engram.Relation {
	x := zhObj(s)
	if zhWorkStop[x] {
		return nil
	}
	return newRel(who, "works_at", x)
}

// zhIdentityRel: "一名数据工程师" is works_as, "素食者" is "is".
func zhIdentityRel(who, s string) *engram.Relation {
	x := zhMeasure.ReplaceAllString(zhObj(s), "")
	switch {
	case zhIs[x]:
		return newRel(who, "is", x)
	case zhNotJob[x] || strings.HasSuffix(x, "会员") || strings.HasSuffix(x, "成员"):
		return nil
	case zhJobs[x], strings.HasSuffix(x, "师"), strings.HasSuffix(x, "员"), strings.HasSuffix(x, "经理"):
		if utf8.RuneCountInString(x) > maxZhRunes {
			return nil
		}
		return newRel(who, "works_as", x)
	}
	return nil
}

var zhKin = map[string]kin{"妹妹": enKin["sister"], "姐姐": enKin["sister"], "哥哥": enKin["brother"], "弟弟": enKin["brother"],
	"妻子": enKin["wife"], "老婆": enKin["wife"], "丈夫": enKin["husband"], "老公": enKin["husband"], "朋友": enKin["friend"],
	"女朋友": enKin["girlfriend"], "男朋友": enKin["boyfriend"], "儿子": enKin["son"], "女儿": enKin["daughter"],
	"妈妈": enKin["mother"], "母亲": enKin["mother"], "爸爸": enKin["father"], "父亲": enKin["father"],
	"同事": enKin["colleague"], "老板": enKin["boss"]}

// zhKinRel is kinRel for "我妹妹叫小红" and "我妹妹住在上海".
func zhKinRel(subj string, m []string) *engram.Relation {
	k := zhKin[m[1]]
	rest := strings.TrimPrefix(m[2], "的")
	for _, p := range []string{"叫", "名字是", "名字叫"} {
		if x, ok := strings.CutPrefix(rest, p); ok {
			return zhNameRel(subj, k.pred, x)
		}
	}
	who := subj + "'s " + k.noun
	if x, ok := strings.CutPrefix(rest, "住在"); ok {
		return newRel(who, "lives_in", zhObj(x))
	}
	if x, ok := strings.CutPrefix(rest, "来自"); ok {
		return newRel(who, "is_from", zhObj(x))
	}
	if x, ok := strings.CutPrefix(rest, "是"); ok {
		return zhIdentityRel(who, x)
	}
	if x, ok := strings.CutPrefix(rest, "在"); ok {
		for _, w := range []string{"工作", "上班"} {
			if i := strings.Index(x, w); i > 0 {
				return zhWorkRel(who, x[:i])
			}
		}
	}
	return nil
}

const zhHabitPeriods = `每天|每周|每晚|每个?星期[一二三四五六日天]?|每个?周末|每个?月|每年`

func zhHabitOK(m []string) bool {
	x := strings.TrimSpace(m[3])
	return x != "" && !zhVagueObj.MatchString(x) && !zhHabitSkip.MatchString(x)
}

// zhHabitRel: the activity, with its period when it is "every ...".
func zhHabitRel(subj string, m []string) *engram.Relation {
	x := zhObj(m[3])
	if x == "" {
		return nil
	}
	if strings.HasPrefix(m[1], "每") {
		x = m[1] + m[2] + x
	}
	return newRel(subj, "habit", x)
}

// --- entities ---

var (
	enToken   = regexp.MustCompile(`[A-Za-z0-9][A-Za-z0-9_\-./:+#']*`)
	quotedRe  = regexp.MustCompile("\"([^\"]{1,60})\"|“([^”]{1,60})”|「([^」]{1,60})」|`([^`]{1,60})`")
	stopCaps  = map[string]bool{"I": true, "I'm": true, "I'll": true, "I've": true, "I'd": true, "The": true, "A": true, "An": true, "My": true, "Our": true, "We": true, "It": true, "This": true, "That": true, "He": true, "She": true, "They": true, "You": true, "Your": true, "His": true, "Her": true, "Their": true, "TODO": true, "OK": true, "And": true, "But": true, "So": true, "Let's": true}
	digitsRe  = regexp.MustCompile(`^[0-9][0-9.]*[0-9]$`)
	hasLetter = regexp.MustCompile(`[A-Za-z]`)
	hasDigit  = regexp.MustCompile(`[0-9]`)
)

// entities finds names in s by simple heuristics: quoted strings, runs of
// capitalised words ("New York"), CamelCase and other identifiers (k8s,
// billing_service, v1.2), and numbers of two or more digits (ports, years).
func entities(s string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(e string) {
		e = strings.TrimSpace(e)
		if e == "" || seen[e] || len(out) >= maxEntities {
			return
		}
		seen[e] = true
		out = append(out, e)
	}
	for _, m := range quotedRe.FindAllStringSubmatch(s, -1) {
		for _, g := range m[1:] {
			add(g)
		}
	}
	var run []string
	prevEnd := 0
	flush := func() {
		if len(run) > 0 {
			add(strings.Join(run, " "))
		}
		run = run[:0]
	}
	for _, loc := range enToken.FindAllStringIndex(s, -1) {
		tok := strings.TrimRight(s[loc[0]:loc[1]], ".-/:'+")
		tok = strings.TrimSuffix(tok, "'s")
		if tok == "" {
			flush()
			continue
		}
		first, _ := utf8.DecodeRuneInString(tok)
		if unicode.IsUpper(first) && !stopCaps[tok] {
			if len(run) > 0 && s[prevEnd:loc[0]] != " " {
				flush()
			}
			run = append(run, tok)
			prevEnd = loc[0] + len(tok)
			continue
		}
		flush()
		if digitsRe.MatchString(tok) || isIdent(tok) {
			add(tok)
		}
	}
	flush()
	return out
}

func isIdent(tok string) bool {
	if strings.ContainsAny(tok[1:], "_./") && hasLetter.MatchString(tok) {
		return true
	}
	if hasLetter.MatchString(tok) && hasDigit.MatchString(tok) {
		return true
	}
	for _, r := range tok[1:] {
		if unicode.IsUpper(r) {
			return true
		}
	}
	return false
}
