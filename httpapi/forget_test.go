package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/httpapi"
	"github.com/engram-dev/engram/internal/filetest"
	"github.com/engram-dev/engram/internal/testutil"
)

// TestForgetTurnEverywhere forgets a turn through the API after the layers
// were derived from it: recall, the listings, the layers and the graph no
// longer know its words; a re-send does not bring it back.
func TestForgetTurnEverywhere(t *testing.T) {
	var home string
	s, e := mustOpenEngineStackWith(t, httpapi.Config{}, func(c *config.Config) { home = c.Home })
	ctx := context.Background()
	body := `{"turns":[
		{"id":"keep-1","session":"s1","speaker":"Ana","content":"I live in Lisbon and I work at Acme."},
		{"id":"gone-1","session":"s1","speaker":"Ana","content":"I moved to Quokkaville and I love xylophones."},
		{"id":"keep-2","session":"s2","speaker":"Bo","content":"We decided to keep the API on port 30001."}]}`
	mustIngest(t, s, e, body)
	if n := recallCount(t, s, "Quokkaville xylophones"); n == 0 {
		t.Fatal("the turn to forget is not found before the forget")
	}
	// A correction of the memory made from it holds its words too.
	memID := correctMemoryText(t, s, "Quokkaville", "Ana moved to Quokkaville in May")

	code, out := s.do(t, "DELETE", "/v1/turns/gone-1?reason=asked", nil)
	if code != 200 {
		t.Fatalf("DELETE /v1/turns/gone-1: %d %v", code, out)
	}
	if ids, _ := out["turns"].([]any); len(ids) != 1 || ids[0] != "gone-1" {
		t.Fatalf("report: %v", out)
	}
	if n := recallCount(t, s, "Quokkaville xylophones"); n != 0 {
		t.Fatalf("recall still finds %d results for the forgotten words", n)
	}
	for _, path := range []string{"/v1/memories?q=Quokkaville", "/v1/memories?q=xylophones", "/v1/scenes?q=Quokkaville",
		"/v1/turns?session=s1", "/v1/persona", "/v1/entities?namespace=default"} {
		_, raw, _ := s.get(t, path)
		if strings.Contains(raw, "Quokkaville") || strings.Contains(raw, "xylophone") || strings.Contains(raw, "gone-1") {
			t.Errorf("%s still holds the forgotten turn: %s", path, raw)
		}
	}
	if n := recallCount(t, s, "Lisbon Acme"); n == 0 {
		t.Fatal("forgetting one turn lost another")
	}
	cs, err := e.Corrections(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if c.Of == memID || strings.Contains(c.Text, "Quokkaville") {
			t.Errorf("the corrections journal still holds the forgotten turn's memory: %+v", c)
		}
	}
	filetest.MustHoldNowhere(t, home, "quokkaville")
	if code, _, _ := s.get(t, "/v1/kg?entity=Quokkaville"); code != 404 {
		t.Errorf("GET /v1/kg?entity=Quokkaville: %d, want 404", code)
	}

	// Forgotten again: nothing to do. Unknown: 404 naming it.
	code, out = s.do(t, "DELETE", "/v1/turns/gone-1", nil)
	if code != 200 || out["already_forgotten"] == nil {
		t.Fatalf("second DELETE: %d %v", code, out)
	}
	if code, out := s.do(t, "DELETE", "/v1/turns/no-such-turn", nil); code != 404 || !strings.Contains(fmt.Sprint(out), "no-such-turn") {
		t.Fatalf("DELETE of an unknown id: %d %v", code, out)
	}
	// A re-send is a duplicate that says it was forgotten.
	code, out = s.do(t, "POST", "/v1/turns", []byte(`{"id":"gone-1","session":"s1","content":"I moved to Quokkaville"}`))
	if code != 201 || !strings.Contains(fmt.Sprint(out), "forgotten:true") {
		t.Fatalf("re-send: %d %v", code, out)
	}
	if err := e.RunAll(ctx); err != nil {
		t.Fatal(err)
	}
	if n := recallCount(t, s, "Quokkaville"); n != 0 {
		t.Fatal("a re-send resurrected the forgotten turn")
	}
	if c := doctorCheck(t, e.Doctor(ctx), "forgotten"); c.Status != engram.CheckOK || !strings.Contains(c.Finding, "1 forgotten turn, none left") {
		t.Errorf("doctor after a forget: %+v", c)
	}
	// Unless asked.
	code, _ = s.do(t, "POST", "/v1/turns", []byte(`{"id":"gone-1","session":"s1","content":"I moved to Quokkaville","resurrect":true}`))
	if code != 201 {
		t.Fatalf("resurrect: %d", code)
	}
	if n := recallCount(t, s, "Quokkaville"); n != 1 {
		t.Fatalf("after a resurrect recall finds %d results, want 1", n)
	}
}

func TestForgetBadRequests(t *testing.T) {
	s, _ := mustOpenEngineStack(t, httpapi.Config{})
	for _, c := range []struct {
		method, path, body, field string
		code                      int
	}{
		{"DELETE", "/v1/turns", "", "namespace", 400},
		{"DELETE", "/v1/turns?namespace=*", "", "namespace", 400},
		{"DELETE", "/v1/turns?namespace=nobody", "", "", 404},
		{"DELETE", "/v1/turns/x?bogus=1", "", "bogus", 400},
		{"DELETE", "/v1/turns/x?dry_run=maybe", "", "dry_run", 400},
		{"POST", "/v1/forget", `{}`, "ids", 400},
		{"POST", "/v1/forget", `{"ids":"x"}`, "ids", 400},
		{"POST", "/v1/forget", `{"ids":["a"],"session":"s"}`, "session", 400},
		{"POST", "/v1/forget", `{"ids":[""]}`, "ids[0]", 400},
		{"POST", "/v1/forget", `{"ids":["a"],"reason":"` + strings.Repeat("r", 2000) + `"}`, "reason", 413},
		{"POST", "/v1/forget", `{"ids":["a"],"what":1}`, "what", 400},
	} {
		var body []byte
		if c.body != "" {
			body = []byte(c.body)
		}
		code, out := s.do(t, c.method, c.path, body)
		errObj, _ := out["error"].(map[string]any)
		if code != c.code || (c.field != "" && errObj["field"] != c.field) {
			t.Errorf("%s %s %s: %d %v, want %d on field %q", c.method, c.path, c.body, code, out, c.code, c.field)
		}
	}
}

// TestForgetSessionUnderLoad forgets sessions while clients post: nothing
// else is lost, and the archive verifies clean.
func TestForgetSessionUnderLoad(t *testing.T) {
	s, e := mustOpenEngineStack(t, httpapi.Config{})
	ctx := context.Background()
	for i := range 5 {
		body := fmt.Sprintf(`{"turns":[{"session":"doomed-%d","content":"doomed words number %d"},{"session":"doomed-%d","content":"more doomed %d"}]}`, i, i, i, i)
		mustIngest(t, s, nil, body)
	}
	stop := postWhile(t, s, 3, func(w, i int) string {
		return fmt.Sprintf(`{"session":"live-%d","content":"live turn %d of writer %d"}`, w, i, w)
	})
	for i := range 5 {
		code, out := s.do(t, "DELETE", fmt.Sprintf("/v1/turns?session=doomed-%d", i), nil)
		if ids, _ := out["turns"].([]any); code != 200 || len(ids) != 2 {
			t.Errorf("forget session %d: %d %v", i, code, out)
		}
	}
	kept := stop()
	if n := recallCount(t, s, "doomed"); n != 0 {
		t.Fatalf("recall finds %d doomed turns", n)
	}
	mustHoldTurns(t, e, kept)
	rep, err := e.VerifyArchive(ctx)
	if err != nil || !rep.OK() || rep.Forgotten != 10 {
		t.Fatalf("archive verify: %+v %v", rep, err)
	}
}

// postWhile starts n clients posting bodies (body(w, i) is the i-th of
// client w) to POST /v1/turns until stop is called; stop waits for them
// and returns the ids the server acknowledged.
func postWhile(tb testing.TB, s *stack, n int, body func(w, i int) string) (stop func() []string) {
	var mu sync.Mutex
	var acked []string
	halt := testutil.Writers(tb, n, func(w, i int) bool {
		ids, ok := postTurns(tb, s.URL, body(w, i))
		mu.Lock()
		acked = append(acked, ids...)
		mu.Unlock()
		return ok
	})
	return func() []string {
		halt()
		return acked
	}
}

// mustHoldTurns fails the test for each of ids the engine does not list.
func mustHoldTurns(tb testing.TB, e *engine.Engine, ids []string) {
	tb.Helper()
	turns, err := e.ListTurns(context.Background(), engram.TurnQuery{Limit: 1000})
	if err != nil {
		tb.Fatal(err)
	}
	have := map[string]bool{}
	for _, tr := range turns {
		have[tr.ID] = true
	}
	for _, id := range ids {
		if !have[id] {
			tb.Errorf("turn %s posted meanwhile is lost", id)
		}
	}
}

// mustIngest posts turns (a POST /v1/turns body) and, given the engine,
// derives every layer from them.
func mustIngest(tb testing.TB, s *stack, e *engine.Engine, body string) {
	tb.Helper()
	if code, out := s.do(tb, "POST", "/v1/turns", []byte(body)); code != 201 {
		tb.Fatalf("POST /v1/turns: %d %v", code, out)
	}
	if e == nil {
		return
	}
	if err := e.RunAll(context.Background()); err != nil {
		tb.Fatal(err)
	}
}

// recallCount is the number of keyword results for query whose text holds
// one of its words.
func recallCount(tb testing.TB, s *stack, query string) int {
	tb.Helper()
	b, _ := json.Marshal(map[string]any{"query": query, "mode": "keyword", "kinds": []string{"turn", "memory", "scene", "fact"}})
	code, out := s.do(tb, "POST", "/v1/recall", b)
	if code != 200 {
		tb.Fatalf("recall: %d %v", code, out)
	}
	res, _ := out["results"].([]any)
	n := 0
	for _, r := range res {
		text := strings.ToLower(fmt.Sprint(r.(map[string]any)["text"]))
		for _, w := range strings.Fields(strings.ToLower(query)) {
			if strings.Contains(text, w) {
				n++
				break
			}
		}
	}
	return n
}

func doctorCheck(tb testing.TB, r engram.DoctorReport, name string) engram.DoctorCheck {
	tb.Helper()
	for _, c := range r.Checks {
		if c.Name == name {
			return c
		}
	}
	tb.Fatalf("no doctor check %s: %+v", name, r)
	return engram.DoctorCheck{}
}

// TestForgetNamespace: DELETE /v1/turns?namespace= forgets every turn of
// the namespace, and no other.
func TestForgetNamespace(t *testing.T) {
	s, e := mustOpenEngineStack(t, httpapi.Config{})
	mustIngest(t, s, e, `{"turns":[
		{"id":"n1","namespace":"gone","session":"a","content":"the walrus plan for Tuesday"},
		{"id":"n2","namespace":"gone","session":"b","content":"the walrus budget is approved"},
		{"id":"n3","namespace":"kept","session":"a","content":"the walrus stays in this namespace"}]}`)
	code, out := s.do(t, "DELETE", "/v1/turns?namespace=gone&reason=asked", nil)
	if code != 200 {
		t.Fatalf("DELETE ?namespace=gone: %d %v", code, out)
	}
	if turns, _ := out["turns"].([]any); len(turns) != 2 {
		t.Fatalf("forgot %v, want n1 and n2", out["turns"])
	}
	for ns, want := range map[string]int{"gone": 0, "kept": 1} {
		_, raw, got := s.get(t, "/v1/turns?namespace="+ns)
		if turns, _ := got["turns"].([]any); len(turns) != want {
			t.Errorf("namespace %s after the forget: %s", ns, raw)
		}
	}
}
