package extract

// The entities a memory mentions: names, identifiers, quoted terms.

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

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
