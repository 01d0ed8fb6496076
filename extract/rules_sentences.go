package extract

// Sentences and clauses, and the sentence-level guards: a question or a
// hypothetical states nothing.

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

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
