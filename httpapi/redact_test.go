package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/httpapi"
	"github.com/engram-dev/engram/internal/filetest"
)

// TestRedactSpanEverywhere redacts a span of a turn through the API after
// the layers were derived from it: the archive line, the palace, the
// layers and every file of the home lose it; the archive stays valid, the
// doctor passes (the turn's vector was made again), and the rest of the
// turn is still found.
func TestRedactSpanEverywhere(t *testing.T) {
	var home string
	s, e := mustOpenEngineStackWith(t, httpapi.Config{}, func(c *config.Config) { home = c.Home })
	ctx := context.Background()
	body := `{"turns":[
		{"id":"r1","session":"s1","speaker":"Ana","content":"I moved to Quokkaville and my password is zorbletrax."},
		{"id":"r2","session":"s1","speaker":"Ana","content":"I work at Acme and love the sea."}]}`
	mustIngest(t, s, e, body)
	for _, c := range []struct {
		body string
		code int
		want string
	}{
		{`{"texts":["ab"],"ids":["r1"]}`, 400, "texts[0]"},
		{`{"ids":["r1"]}`, 400, "texts"},
		{`{"texts":["zorbletrax"],"ids":["nope"]}`, 404, "nope"},
		{`{"texts":["zorbletrax"],"idz":["r1"]}`, 400, "idz"},
		{`{"texts":["zorbletrax"],"marker":"[zorbletrax]"}`, 400, "marker"},
		{`{"texts":["zorbletrax"],"namespace":"*"}`, 400, "namespace"},
	} {
		code, out := s.do(t, "POST", "/v1/redact", []byte(c.body))
		if code != c.code || !strings.Contains(fmt.Sprint(out), c.want) {
			t.Errorf("POST /v1/redact %s: %d %v, want %d naming %q", c.body, code, out, c.code, c.want)
		}
	}
	// A correction holding the span: the journal is rewritten too.
	correctMemoryText(t, s, "password", "Ana's password is zorbletrax")
	code, out := s.do(t, "POST", "/v1/redact", []byte(`{"texts":["zorbletrax","Quokkaville"],"dry_run":true}`))
	if code != 200 || out["spans"] != float64(2) || out["dry_run"] != true {
		t.Fatalf("dry run: %d %v", code, out)
	}
	if n := recallCount(t, s, "Quokkaville"); n == 0 {
		t.Fatal("a dry run redacted")
	}
	code, out = s.do(t, "POST", "/v1/redact", []byte(`{"texts":["zorbletrax","Quokkaville"],"ids":["r1"],"reason":"a password"}`))
	if ids, _ := out["turns"].([]any); code != 200 || len(ids) != 1 || out["spans"] != float64(2) {
		t.Fatalf("redact: %d %v", code, out)
	}
	if _, raw, _ := s.get(t, "/v1/turns?session=s1"); !strings.Contains(raw, "my password is [redacted].") {
		t.Fatalf("the stored turn: %s", raw)
	}
	for _, q := range []string{"zorbletrax", "Quokkaville"} {
		if n := recallCount(t, s, q); n != 0 {
			t.Errorf("recall still finds %q (%d results)", q, n)
		}
	}
	if n := recallCount(t, s, "password"); n == 0 {
		t.Error("the rest of the redacted turn is lost")
	}
	for _, path := range []string{"/v1/memories?q=password", "/v1/scenes", "/v1/persona"} {
		if _, raw, _ := s.get(t, path); strings.Contains(raw, "zorbletrax") || strings.Contains(raw, "Quokkaville") {
			t.Errorf("%s still holds the span: %s", path, raw)
		}
	}
	if rep, err := e.VerifyArchive(ctx); err != nil || !rep.OK() {
		t.Fatalf("archive-verify: %+v %v", rep, err)
	}
	if err := e.RunAll(ctx); err != nil {
		t.Fatal(err)
	}
	if r := e.Doctor(ctx); r.Failed() {
		t.Errorf("doctor after a redaction: %+v", r)
	}
	filetest.MustHoldNowhere(t, home, "zorbletrax", "Quokkaville")
}

// TestRedactSpeakerMetaAndEntities redacts a name a speaker, a meta
// value and a graph alias hold: the archive lines, the palace, the layers
// derived again and every file of the home lose it, in any case.
func TestRedactSpeakerMetaAndEntities(t *testing.T) {
	var home string
	s, e := mustOpenEngineStackWith(t, httpapi.Config{}, func(c *config.Config) { home = c.Home })
	ctx := context.Background()
	body := `{"turns":[
		{"id":"n1","session":"s1","speaker":"Ana","content":"My name is Ana Zorbletrax.","meta":{"device":"Zorbletrax's phone","n":1}},
		{"id":"n2","session":"s1","speaker":"Ana","content":"I work at Acme and I love the sea."},
		{"id":"n3","session":"s1","speaker":"Zorbletrax Bot","content":"The deploy finished on time."}]}`
	mustIngest(t, s, e, body)
	if _, raw, _ := s.get(t, "/v1/kg?entity=Ana"); !strings.Contains(raw, "Ana Zorbletrax") {
		t.Fatalf("the graph does not know Ana's full name before the redaction: %s", raw)
	}
	code, out := s.do(t, "POST", "/v1/redact", []byte(`{"texts":["Zorbletrax"]}`))
	if ids, _ := out["turns"].([]any); code != 200 || len(ids) != 2 || out["spans"] != float64(3) {
		t.Fatalf("redact: %d %v", code, out)
	}
	_, raw, _ := s.get(t, "/v1/turns?session=s1")
	for _, want := range []string{`"speaker":"[redacted] Bot"`, `[redacted]'s phone`, "My name is Ana [redacted]."} {
		if !strings.Contains(raw, want) {
			t.Errorf("the stored turns lack %s: %s", want, raw)
		}
	}
	if err := e.RunAll(ctx); err != nil {
		t.Fatal(err)
	}
	if n := recallCount(t, s, "Zorbletrax"); n != 0 {
		t.Errorf("recall still finds Zorbletrax (%d results)", n)
	}
	for _, path := range []string{"/v1/turns?session=s1", "/v1/memories", "/v1/scenes", "/v1/persona", "/v1/kg?entity=Ana",
		"/v1/entities?namespace=default"} {
		if _, raw, _ := s.get(t, path); strings.Contains(strings.ToLower(raw), "zorbletrax") {
			t.Errorf("%s still holds the span: %s", path, raw)
		}
	}
	if _, raw, _ := s.get(t, "/v1/kg?entity=Ana"); !strings.Contains(raw, "Acme") {
		t.Errorf("Ana's other facts are lost: %s", raw)
	}
	if rep, err := e.VerifyArchive(ctx); err != nil || !rep.OK() {
		t.Fatalf("archive-verify: %+v %v", rep, err)
	}
	if r := e.Doctor(ctx); r.Failed() {
		t.Errorf("doctor after a redaction: %+v", r)
	}
	filetest.MustHoldNowhere(t, home, "zorbletrax")
}

// TestRedactUnderLoad redacts a secret, session by session, while clients
// post: nothing else is lost, the archive verifies clean, and no file of
// the home holds the secret afterwards.
func TestRedactUnderLoad(t *testing.T) {
	var home string
	s, e := mustOpenEngineStackWith(t, httpapi.Config{}, func(c *config.Config) { home = c.Home })
	ctx := context.Background()
	for i := range 5 {
		body := fmt.Sprintf(`{"turns":[{"session":"leak-%d","speaker":"Ana","content":"the vault code is Plumbarix-%d, keep it"},
			{"session":"leak-%d","speaker":"Plumbarix bot","content":"noted %d","meta":{"tag":"Plumbarix"}}]}`, i, i, i, i)
		mustIngest(t, s, nil, body)
	}
	if err := e.RunAll(ctx); err != nil {
		t.Fatal(err)
	}
	stop := postWhile(t, s, 3, func(w, i int) string {
		return fmt.Sprintf(`{"session":"live-%d","content":"live turn %d of writer %d"}`, w, i, w)
	})
	for i := range 5 {
		code, out := s.do(t, "POST", "/v1/redact", []byte(fmt.Sprintf(`{"texts":["Plumbarix"],"session":"leak-%d"}`, i)))
		if ids, _ := out["turns"].([]any); code != 200 || len(ids) != 2 || out["spans"] != float64(3) {
			t.Errorf("redact session %d: %d %v", i, code, out)
		}
	}
	kept := stop()
	mustHoldTurns(t, e, kept)
	if rep, err := e.VerifyArchive(ctx); err != nil || !rep.OK() || rep.Forgotten != 0 {
		t.Fatalf("archive verify: %+v %v", rep, err)
	}
	if _, _, stats := s.get(t, "/v1/stats"); fmt.Sprint(stats["archive"].(map[string]any)["redacted_turns"]) != "10" {
		t.Errorf("stats: %v, want 10 redacted turns", stats["archive"])
	}
	if err := e.RunAll(ctx); err != nil {
		t.Fatal(err)
	}
	if n := recallCount(t, s, "Plumbarix"); n != 0 {
		t.Errorf("recall finds %d turns holding the secret", n)
	}
	if n := recallCount(t, s, "vault code"); n < 5 {
		t.Errorf("recall finds %d of the 5 redacted turns by their other words", n)
	}
	if r := e.Doctor(ctx); r.Failed() {
		t.Errorf("doctor: %+v", r)
	}
	filetest.MustHoldNowhere(t, home, "Plumbarix")
}

// TestRedactWarnsWhereItDoesNotReach: a span in a turn's id, session or a
// meta key stays there (only a forget removes it); the answer, dry run or
// not, says so, naming the fields and forget. Over MaxRedactTexts spans is
// 413 naming texts.
func TestRedactWarnsWhereItDoesNotReach(t *testing.T) {
	s, e := mustOpenEngineStackWith(t, httpapi.Config{}, nil)
	mustIngest(t, s, e, `{"turns":[
		{"id":"w-Zorbix","session":"s1","content":"my name is Zorbix"},
		{"id":"w2","session":"s-Zorbix","content":"nothing to see"},
		{"id":"w3","session":"s1","content":"plain","meta":{"Zorbix phone":"on"}}]}`)
	for _, dry := range []bool{true, false} {
		code, out := s.do(t, "POST", "/v1/redact", []byte(fmt.Sprintf(`{"texts":["Zorbix"],"dry_run":%v}`, dry)))
		warnings := fmt.Sprint(out["warnings"])
		if ids, _ := out["turns"].([]any); code != 200 || len(ids) != 1 || out["spans"] != float64(1) {
			t.Fatalf("redact (dry run %v): %d %v", dry, code, out)
		}
		for _, want := range []string{"id, session, meta keys of 3 turns", `"w-Zorbix"`, `"w2"`, `"w3"`, "forget"} {
			if !strings.Contains(warnings, want) {
				t.Errorf("redact (dry run %v): warnings %s, want %q", dry, warnings, want)
			}
		}
	}
	texts := make([]string, 1001)
	for i := range texts {
		texts[i] = fmt.Sprintf("secret-%05d", i)
	}
	body, _ := json.Marshal(map[string]any{"texts": texts})
	if code, out := s.do(t, "POST", "/v1/redact", body); code != 413 || out["error"].(map[string]any)["field"] != "texts" {
		t.Errorf("1001 spans: %d %v, want 413 naming texts", code, out)
	}
}
