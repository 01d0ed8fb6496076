package httpapi_test

import (
	"context"
	"strings"
	"testing"

	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/httpapi"
	"github.com/engram-dev/engram/internal/filetest"
)

// TestIngestRedactsSecrets: with redact_secrets on, a turn's secrets (in
// its content, speaker and meta) are replaced before it is archived, so neither the archive nor recall holds
// them; the stats count them by rule. Off (the default), content is kept
// as sent.
func TestIngestRedactsSecrets(t *testing.T) {
	var home string
	s, e := mustOpenEngineStackWith(t, httpapi.Config{}, func(c *config.Config) { c.RedactSecrets = true; home = c.Home })
	body := `{"turns":[
		{"id":"k1","session":"s1","content":"my key is sk-proj-abcdefghijklmnopqrstuvwxyz012345 and AKIAIOSFODNN7EXAMPLE"},
		{"id":"k2","session":"s1","content":"nothing secret about the quarterly plan"},
		{"id":"k3","session":"s1","speaker":"ghp_0123456789abcdefghijABCDEFGHIJ012345","content":"a token in the speaker",
		 "meta":{"auth":"Bearer zyxwvutsrqponmlkjihgfedcba.987"}}]}`
	if code, out := s.do(t, "POST", "/v1/turns", []byte(body)); code != 201 {
		t.Fatalf("POST: %d %v", code, out)
	}
	_, raw, _ := s.get(t, "/v1/turns?session=s1")
	if strings.Contains(raw, "sk-proj-abc") || strings.Contains(raw, "AKIAIOSFODNN7EXAMPLE") ||
		strings.Contains(raw, "ghp_0123") || strings.Contains(raw, "zyxwvutsrq") ||
		!strings.Contains(raw, "[redacted:api-key]") || !strings.Contains(raw, "[redacted:aws-access-key]") || !strings.Contains(raw, "quarterly") {
		t.Fatalf("the stored turns: %s", raw)
	}
	if err := e.RunAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, raw, out := s.get(t, "/v1/stats")
	arch, _ := out["archive"].(map[string]any)
	sec, _ := arch["secrets_redacted"].(map[string]any)
	if arch["redacted_turns"] != float64(2) || sec["api-key"] != float64(1) || sec["aws-access-key"] != float64(1) ||
		sec["github-token"] != float64(1) || sec["bearer-token"] != float64(1) {
		t.Fatalf("stats: %s", raw)
	}
	filetest.MustHoldNowhere(t, home, "sk-proj-abc", "AKIAIOSFODNN7EXAMPLE", "ghp_0123", "zyxwvutsrq")

	plain, _ := mustOpenEngineStack(t, httpapi.Config{})
	if code, out := plain.do(t, "POST", "/v1/turns", []byte(`{"session":"s1","content":"AKIAIOSFODNN7EXAMPLE"}`)); code != 201 {
		t.Fatalf("POST: %d %v", code, out)
	}
	if _, raw, _ := plain.get(t, "/v1/turns?session=s1"); !strings.Contains(raw, "AKIAIOSFODNN7EXAMPLE") {
		t.Fatalf("the filter ran while off: %s", raw)
	}
}
