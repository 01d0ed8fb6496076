package httpapi_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/httpapi"
)

// TestRedactSpanEverywhere redacts a span of a turn through the API after
// the layers were derived from it: the archive line, the palace, the
// layers and every file of the home lose it; the archive stays valid, the
// doctor passes (the turn's vector was made again), and the rest of the
// turn is still found.
func TestRedactSpanEverywhere(t *testing.T) {
	var home string
	s, e := mustOpenEngineStackWith(t, httpapi.Config{}, func(c *engine.Config) { home = c.Home })
	ctx := context.Background()
	body := `{"turns":[
		{"id":"r1","session":"s1","speaker":"Ana","content":"I moved to Quokkaville and my password is zorbletrax."},
		{"id":"r2","session":"s1","speaker":"Ana","content":"I work at Acme and love the sea."}]}`
	if code, out := s.do(t, "POST", "/v1/turns", []byte(body)); code != 201 {
		t.Fatalf("POST: %d %v", code, out)
	}
	if err := e.RunAll(ctx); err != nil {
		t.Fatal(err)
	}
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
	err := filepath.WalkDir(home, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err == nil && (strings.Contains(strings.ToLower(string(b)), "zorbletrax")) {
			t.Errorf("%s still holds the span", path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
