package engram_test

import (
	"strings"
	"testing"

	"github.com/engram-dev/engram"
)

func TestRedactSecrets(t *testing.T) {
	pem := "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\nAAAAAAAB\n-----END OPENSSH PRIVATE KEY-----"
	for _, c := range []struct {
		in, want string
		rule     string
	}{
		{"my key is sk-proj-abcdefghijklmnopqrstuvwxyz012345 ok", "my key is [redacted:api-key] ok", "api-key"},
		{"AKIAIOSFODNN7EXAMPLE is the id", "[redacted:aws-access-key] is the id", "aws-access-key"},
		{"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key = [redacted:aws-secret-key]", "aws-secret-key"},
		{"token ghp_0123456789abcdefghijABCDEFGHIJ012345 here", "token [redacted:github-token] here", "github-token"},
		{"slack xoxb-1234567890-abcdefghij", "slack [redacted:slack-token]", "slack-token"},
		{"Authorization: Bearer abcdefghijklmnopqrstuvwxyz.123", "Authorization: Bearer [redacted:bearer-token]", "bearer-token"},
		{"key:\n" + pem + "\nthanks", "key:\n[redacted:private-key]\nthanks", "private-key"},
		{"stripe sk_live_0123456789abcdefABCD", "stripe [redacted:stripe-key]", "stripe-key"},
		{"AIzaSyA0123456789abcdefghijABCDEFGHIJ_- g", "[redacted:google-api-key] g", "google-api-key"},
	} {
		got, counts := engram.RedactSecrets(c.in)
		if got != c.want || counts[c.rule] != 1 {
			t.Errorf("RedactSecrets(%q) = %q %v, want %q with one %s", c.in, got, counts, c.want, c.rule)
		}
	}
	// Not secrets: prose, short tokens, words that begin alike.
	for _, s := range []string{"ask-me-anything", "sk-short", "the bearer of bad news", "AKIA is a prefix", "xoxo hugs", "ghp_short"} {
		if got, counts := engram.RedactSecrets(s); got != s || counts != nil {
			t.Errorf("RedactSecrets(%q) = %q %v, want it unchanged", s, got, counts)
		}
	}
	// Two of a kind are counted twice.
	_, counts := engram.RedactSecrets("AKIAIOSFODNN7EXAMPLE and AKIAIOSFODNN7EXAMPL2")
	if counts["aws-access-key"] != 2 {
		t.Errorf("counts: %v", counts)
	}
	if names := engram.SecretRuleNames(); len(names) != len(engram.SecretRules) || !strings.Contains(strings.Join(names, ","), "private-key") {
		t.Errorf("names: %v", names)
	}
}
