package extract

import (
	"context"
	"math"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/textutil"
	"github.com/engram-dev/engram/internal/timeexpr"
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
// file rules_relations.go has the details; a vague statement keeps no
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
type RulesExtractor struct {
	// Pace, if set, bounds the extractions with the rest of the
	// background work: each batch's is a step, so that batches extracted
	// side by side leave a core to the requests.
	Pace Pacer
}

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
func (x RulesExtractor) Extract(ctx context.Context, turns []engram.Turn) ([]engram.Memory, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if x.Pace != nil {
		done, err := x.Pace.Step(ctx)
		if err != nil {
			return nil, err
		}
		defer done()
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

// The pieces of the extractor, by file: rules_sentences.go (sentences,
// clauses, the question and hypothetical guards), this file (matching a
// clause against the patterns, the guards against reported and hedged
// speech), rules_patterns.go (the English and Chinese patterns),
// rules_relations.go (the triples of English statements), rules_zh.go
// (Chinese patterns' helpers and relations), rules_verbs.go (verb forms),
// rules_entities.go (the entities a memory mentions).

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
	// which timeexpr.Suffix therefore does not read: a season, a
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
	return timeexpr.Suffix(lead, timeSuffixDay)
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
