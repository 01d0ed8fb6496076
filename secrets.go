package engram

import (
	"regexp"
	"sort"
)

// SecretRule is one shape of secret the ingest filter (config
// redact_secrets) replaces before a turn is archived: a name, kept in the
// turn's Redaction and counted in the stats, and a pattern. When the
// pattern has a group, only the group is replaced (the "Bearer " of a
// header stays).
type SecretRule struct {
	Name    string
	Pattern *regexp.Regexp
}

// SecretRules are the shapes the ingest filter knows, in the order they
// apply. docs/operations.md lists them; TestSecretRulesDocumented keeps the
// two in step.
var SecretRules = []SecretRule{
	{"private-key", regexp.MustCompile(`-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----`)},
	{"bearer-token", regexp.MustCompile(`(?i)\bbearer\s+([A-Za-z0-9\-._~+/]{20,}=*)`)},
	{"aws-access-key", regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`)},
	{"aws-secret-key", regexp.MustCompile(`(?i)aws_secret_access_key\s*[:=]\s*["']?([A-Za-z0-9/+=]{40})`)},
	{"github-token", regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b`)},
	{"slack-token", regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`)},
	{"stripe-key", regexp.MustCompile(`\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}\b`)},
	{"api-key", regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{20,}`)},
	{"google-api-key", regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`)},
	{"jwt", regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}`)},
}

// SecretMarker is what replaces a secret of the rule name:
// "[redacted:api-key]".
func SecretMarker(rule string) string { return "[redacted:" + rule + "]" }

// RedactSecrets replaces every span of s that a SecretRule matches by its
// marker, and counts the spans by rule (nil when none matched).
func RedactSecrets(s string) (string, map[string]int64) {
	var counts map[string]int64
	for _, r := range SecretRules {
		locs := r.Pattern.FindAllStringSubmatchIndex(s, -1)
		if len(locs) == 0 {
			continue
		}
		if counts == nil {
			counts = map[string]int64{}
		}
		out := make([]byte, 0, len(s))
		last := 0
		for _, l := range locs {
			from, to := l[0], l[1]
			if len(l) >= 4 && l[2] >= 0 {
				from, to = l[2], l[3]
			}
			out = append(out, s[last:from]...)
			out = append(out, SecretMarker(r.Name)...)
			last = to
			counts[r.Name]++
		}
		s = string(append(out, s[last:]...))
	}
	return s, counts
}

// RedactTurnSecrets is RedactSecrets over everything of t that is text: its
// content, its speaker and the string values of its meta (its other bytes
// kept). The counts are by rule, nil when nothing matched.
func RedactTurnSecrets(t Turn) (Turn, map[string]int64) {
	var counts map[string]int64
	red := func(s string) string {
		out, c := RedactSecrets(s)
		for rule, n := range c {
			if counts == nil {
				counts = map[string]int64{}
			}
			counts[rule] += n
		}
		return out
	}
	t.Content = red(t.Content)
	t.Speaker = red(t.Speaker)
	t.Meta = mapJSONStrings(t.Meta, red)
	return t, counts
}

// SecretRuleNames returns the rules' names, sorted.
func SecretRuleNames() []string {
	out := make([]string, len(SecretRules))
	for i, r := range SecretRules {
		out[i] = r.Name
	}
	sort.Strings(out)
	return out
}
