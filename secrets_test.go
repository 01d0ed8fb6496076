package engram_test

import (
	"encoding/json"
	"os"
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
		{"jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U end",
			"jwt [redacted:jwt] end", "jwt"},
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

// TestSecretRulesDocumented: docs/operations.md has a row for every rule
// of the ingest filter, and no row for a rule that does not exist.
func TestSecretRulesDocumented(t *testing.T) {
	doc, err := os.ReadFile("docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(doc), "| rule | matches |")
	if !ok {
		t.Fatal("docs/operations.md has no table of the ingest filter's rules")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	var documented []string
	for _, line := range strings.Split(table, "\n") {
		if name, ok := strings.CutPrefix(line, "| `"); ok {
			name, _, _ = strings.Cut(name, "`")
			documented = append(documented, name)
		}
	}
	if got, want := strings.Join(documented, ","), strings.Join(ruleNamesInOrder(), ","); got != want {
		t.Errorf("docs/operations.md lists the rules %s, secrets.go has %s", got, want)
	}
}

func ruleNamesInOrder() []string {
	var out []string
	for _, r := range engram.SecretRules {
		out = append(out, r.Name)
	}
	return out
}

// TestRedactTurnSecrets: the filter reaches the speaker and the meta's
// string values too, and keeps the meta's other bytes.
func TestRedactTurnSecrets(t *testing.T) {
	in := engram.Turn{Content: "no secret here", Speaker: "bot sk-proj-abcdefghijklmnopqrstuvwxyz012345",
		Meta: json.RawMessage(`{"n":7,"auth":"Bearer abcdefghijklmnopqrstuvwxyz.123","tags":["AKIAIOSFODNN7EXAMPLE"]}`)}
	out, counts := engram.RedactTurnSecrets(in)
	if out.Content != in.Content || out.Speaker != "bot [redacted:api-key]" {
		t.Errorf("content %q, speaker %q", out.Content, out.Speaker)
	}
	if want := `{"n":7,"auth":"Bearer [redacted:bearer-token]","tags":["[redacted:aws-access-key]"]}`; string(out.Meta) != want {
		t.Errorf("meta %s, want %s", out.Meta, want)
	}
	if counts["api-key"] != 1 || counts["bearer-token"] != 1 || counts["aws-access-key"] != 1 || len(counts) != 3 {
		t.Errorf("counts %v", counts)
	}
	if _, counts := engram.RedactTurnSecrets(engram.Turn{Content: "plain", Speaker: "Ana", Meta: json.RawMessage(`{"a":"b"}`)}); counts != nil {
		t.Errorf("a turn without secrets: counts %v", counts)
	}
}
