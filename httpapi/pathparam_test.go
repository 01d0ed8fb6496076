package httpapi_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/engram-dev/engram/httpapi"
)

// escapeAll percent-encodes every byte of s but letters and digits, as
// the web view's encodeURIComponent does for the reserved characters.
func escapeAll(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// TestForgetByPathReservedChars forgets, by DELETE /v1/turns/{id}, turns
// whose ids hold each reserved character (and '%', which must be decoded
// once, not twice), sent percent-encoded and, where a path allows it, as
// is.
func TestForgetByPathReservedChars(t *testing.T) {
	s, _ := mustOpenEngineStack(t, httpapi.Config{})
	var ids []string
	for _, c := range "/:@+=,;&$%!'()*~ " {
		ids = append(ids, "x"+string(c)+"y")
	}
	ids = append(ids, "slack:C1:1699999999.000100", "user@host", "a%3Ab", "a%2Fb")
	var turns []string
	for i, id := range ids {
		turns = append(turns, fmt.Sprintf(`{"id":%q,"session":"s","content":"turn number %d"}`, id, i))
	}
	mustIngest(t, s, nil, `{"turns":[`+strings.Join(turns, ",")+`]}`)
	for _, id := range ids {
		path := "/v1/turns/" + escapeAll(id) + "?dry_run=true"
		code, out := s.do(t, "DELETE", path, nil)
		if code != 200 || fmt.Sprint(out["turns"]) != fmt.Sprint([]any{id}) {
			t.Errorf("DELETE %s (id %q): %d %v", path, id, code, out)
		}
	}
	// Unescaped where the path allows: ':' '@' and the sub-delimiters.
	for _, id := range []string{"x:y", "x@y", "x+y", "x=y", "x,y", "x;y", "x&y", "x$y"} {
		code, out := s.do(t, "DELETE", "/v1/turns/"+id, nil)
		if code != 200 || fmt.Sprint(out["turns"]) != fmt.Sprint([]any{id}) {
			t.Errorf("DELETE /v1/turns/%s: %d %v", id, code, out)
		}
	}
	// The other routes with a parameter in the path decode it the same way.
	for _, path := range []string{"/v1/memories/" + escapeAll("no:such@memory"), "/v1/kg/facts/" + escapeAll("no:such@fact")} {
		code, out := s.do(t, "PATCH", path, []byte(`{"wrong":true}`))
		if code != 404 || !strings.Contains(fmt.Sprint(out), "no:such@") {
			t.Errorf("PATCH %s: %d %v, want 404 naming the decoded id", path, code, out)
		}
	}
	if code, out := s.do(t, "POST", "/v1/jobs/"+escapeAll("no:such")+"/run", nil); code != 404 || !strings.Contains(fmt.Sprint(out), "no:such") {
		t.Errorf("POST /v1/jobs/no%%3Asuch/run: %d %v, want 404 naming the decoded name", code, out)
	}
}
