package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/engram-dev/engram"
)

// RulesExtractor is the offline, deterministic L1 extractor: hand-written
// English and Chinese patterns for decisions, preferences, plans, facts about
// the speaker and past events. It is the embedded default, so the pipeline
// works without an LLM; the Ollama extractor replaces it when configured.
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
				ID:         memoryID(ns, f.typ, f.text, t.ID),
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
			})
		}
	}
	return out
}

// memoryID is "mem-" and the first 20 hex digits of the SHA-256 of what makes
// a memory the same: namespace, type, text and source turn.
func memoryID(ns, typ, text, source string) string {
	h := sha256.New()
	for _, s := range []string{ns, typ, text, source} {
		h.Write([]byte(s))
		h.Write([]byte{'|'})
	}
	return "mem-" + hex.EncodeToString(h.Sum(nil))[:20]
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
}

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

	timeSuffix = regexp.MustCompile(`(?i)(?:^|[\s,])((?:next|last|this) (?:week|weekend|month|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday|summer|winter|spring|autumn|fall|quarter|sprint)|tomorrow|tonight|today|yesterday|later today|on (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday))\s*,?\s*$`)
)

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
	hasHan := strings.IndexFunc(clause, func(r rune) bool { return unicode.Is(unicode.Han, r) }) >= 0
	best := finding{}
	bestStart := -1
	for _, r := range extractRules {
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
				if ts := timeSuffix.FindStringSubmatch(clause[:loc[0]]); ts != nil {
					text += " " + strings.ToLower(ts[1])
				}
				f.text = capFirst(text)
				f.entityText = m[r.obj]
				if r.skipFirst {
					if _, rest, ok := strings.Cut(strings.TrimSpace(f.entityText), " "); ok {
						f.entityText = rest
					}
				}
			}
			best, bestStart = f, loc[0]
			break
		}
	}
	return best, bestStart >= 0
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
		func(m []string) string { return "decided " + strings.ToLower(m[1]) }),
	enRule(engram.MemoryDecision, []string{"let"}, `let'?s (go with|use|pick|choose|stick with|switch to|adopt) (.+)`, 2,
		func(m []string) string { return "decided to " + strings.ToLower(m[1]) }),
	enRule(engram.MemoryDecision, []string{"agreed"}, `(?:we|i)(?: have|'ve)?(?: all)? agreed (on|to|that) (.+)`, 2,
		func(m []string) string { return "agreed " + strings.ToLower(m[1]) }),
	enRule(engram.MemoryDecision, []string{"decision"}, `the (?:final )?decision is(?: that)?:? (to )?(.+)`, 2,
		func(m []string) string {
			if m[1] != "" {
				return "decided to"
			}
			return "decided:"
		}),
	enRule(engram.MemoryDecision, []string{"we", "i"}, `(?:we|i)(?:'ll| will|'re going to| are going to|'m going to| am going to) (use|go with|switch to|adopt|stick with|pick|choose|migrate to|move to) (.+)`, 2,
		func(m []string) string { return "decided to " + strings.ToLower(m[1]) }),
	enRule(engram.MemoryDecision, []string{"chose", "picked", "settled", "went with", "opted"}, `(?:we|i)(?: have|'ve)? (chose|picked|settled on|went with|opted for) (.+)`, 2,
		func(m []string) string { return strings.ToLower(m[1]) }),

	// Preferences.
	enRule(engram.MemoryPreference, []string{"favourite", "favorite"}, `my (?:all-time )?(favou?rite .+? (?:is|are)) (.+)`, 2,
		func(m []string) string { return "'s " + strings.ToLower(m[1]) }),
	enRule(engram.MemoryPreference, []string{"don't", "do not"}, `i (?:really )?(?:don't|do not) (?:really )?(like|love|enjoy) (.+)`, 2,
		func(m []string) string { return "doesn't " + strings.ToLower(m[1]) }),
	enRule(engram.MemoryPreference, []string{"fan of"}, `i(?:'m| am) (?:a |an )?(?:big |huge |massive )?fan of (.+)`, 1, litVerb("is a fan of")),
	enRule(engram.MemoryPreference, []string{"i "}, `i ((?:really |also |much |truly |definitely |absolutely |still )?)(prefer|like|love|hate|enjoy|dislike|adore|can't stand) (.+)`, 3,
		func(m []string) string { return strings.ToLower(m[1]) + third(m[2]) }),

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
	enRule(engram.MemoryFact, []string{"my name", "call me"}, `(?:my name is|my name's|call me) (.+)`, 1, litVerb("is called")),
	enRule(engram.MemoryFact, []string{"i'm", "i am"}, `i(?:'m| am) (a|an) (.+)`, 2,
		func(m []string) string { return "is " + strings.ToLower(m[1]) }),
	enRule(engram.MemoryFact, []string{"work"}, `i (?:work|am working|'m working) (at|for|in|as) (.+)`, 2,
		func(m []string) string { return "works " + strings.ToLower(m[1]) }),
	enRule(engram.MemoryFact, []string{"live"}, `i (?:live|am living|'m living) in (.+)`, 1, litVerb("lives in")),
	enRule(engram.MemoryFact, []string{"from"}, `i(?:'m| am) (?:originally )?from (.+)`, 1, litVerb("is from")),
	{typ: engram.MemoryFact, hint: []string{"my "}, re: regexp.MustCompile(`(?i)\bmy ((?:best |older |younger |little |big )?(?:sister|brother|wife|husband|partner|friend|mom|mum|mother|dad|father|son|daughter|boss|manager|colleague|coworker|girlfriend|boyfriend|cousin|aunt|uncle|grandma|grandmother|grandpa|grandfather|dog|cat)(?:'s)?) (.+)`), obj: 2,
		build: func(subj string, m []string) (string, string, bool) {
			x := object(subj, m[2])
			if x == "" || reportVerb.MatchString(x) {
				return "", "", false
			}
			return subj + "'s " + strings.ToLower(m[1]) + " " + x, "", true
		}},

	// Past events.
	enRule(engram.MemoryEvent, []string{"went", "visited", "started", "moved", "attended", "joined", "finished", "graduated", "flew", "travel", "met"},
		`(?:i|we) (?:just |finally |recently )?(went to|visited|started|moved to|attended|joined|finished|graduated from|flew to|travelled to|traveled to|met) (.+)`, 2,
		func(m []string) string { return strings.ToLower(m[1]) }),

	// Chinese.
	zhRule(engram.MemoryDecision, nil, `(?:我们|我)(?:最终|最后|已经|一致)?决定(?:了)?(.+)`, notVague(1)),
	zhRule(engram.MemoryDecision, nil, `决定(?:用|使用|采用|选用|选)(.+)`, notVague(1)),
	zhRule(engram.MemoryDecision, nil, `就(?:用|选)(.+?)吧`, notVague(1)),
	zhRule(engram.MemoryDecision, nil, `(?:因为|由于)(.+?)[，,]?\s*所以(.+)`, func(m []string) bool { return zhDecideVerb.MatchString(m[2]) }),
	zhRule(engram.MemoryPreference, nil, `我最喜欢的(.+?)是(.+)`, nil),
	zhRule(engram.MemoryPreference, nil, `我(?:真的|也|并|一点也|一直)?不(?:太|怎么)?(?:喜欢|爱)(.+)`, notVague(1)),
	zhRule(engram.MemoryPreference, nil, `我(?:更|很|非常|特别|比较|真的|也|最|一直)?(?:喜欢|爱|偏好|讨厌|热爱)(.+)`, notVague(1)),
	zhRule(engram.MemoryPlan, nil, `(?:我们|我)(?:下周|明天|今晚|周末|之后|以后)?(?:打算|准备|计划|想要|要|需要)(.+)`, notVague(1)),
	zhRule(engram.MemoryPlan, nil, `^(?:计划|记得|别忘了|提醒我|待办[:：]?)(.+)`, notVague(1)),
	zhRule(engram.MemoryFact, nil, `我叫(.+)`, notVague(1)),
	zhRule(engram.MemoryFact, nil, `我的名字是(.+)`, notVague(1)),
	zhRule(engram.MemoryFact, nil, `我在(.+?)(?:工作|上班|任职)`, notVague(1)),
	zhRule(engram.MemoryFact, nil, `我住在(.+)`, notVague(1)),
	zhRule(engram.MemoryFact, nil, `我的?(妹妹|姐姐|哥哥|弟弟|妻子|老婆|丈夫|老公|朋友|女朋友|男朋友|儿子|女儿|妈妈|爸爸|母亲|父亲|同事|老板)(.+)`,
		func(m []string) bool { return !zhReport.MatchString(m[2]) }),
	zhRule(engram.MemoryFact, nil, `我是(.{1,20})$`, func(m []string) bool {
		return !zhVagueObj.MatchString(m[1]) && !strings.HasPrefix(m[1], "在") && !strings.HasPrefix(m[1], "想")
	}),
	zhRule(engram.MemoryEvent, nil, `(?:我们|我)(?:昨天|上周|上个月|去年|今天|刚)?(?:去了|参加了|搬到了|搬到|开始了|完成了|加入了|见了)(.+)`, notVague(1)),
}

var (
	reportVerb = regexp.MustCompile(`(?i)^(?:said|says|told|tells|asked|asks|thinks|thought|believes|claims|wrote)\b`)
	zhReport   = regexp.MustCompile(`^(?:说|觉得|认为|告诉|问)`)
)

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
