package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/engram-dev/engram/httpapi"
)

// TestCorrectMemoryAndFact corrects what the layers derived, through the
// API: a memory's text replaced, a memory marked wrong, a fact's object
// replaced; the corrections hold after the jobs run again and after a turn
// that says the wrong thing again. Bad requests are answered 4xx naming the
// field.
func TestCorrectMemoryAndFact(t *testing.T) {
	s, e := mustOpenEngineStack(t, httpapi.Config{})
	ctx := context.Background()
	body := `{"turns":[
		{"id":"t1","session":"s1","speaker":"Ana","content":"I live in Lisbon."},
		{"id":"t2","session":"s1","speaker":"Ana","content":"I work at Acme."}]}`
	mustIngest(t, s, e, body)
	lisbon, acme := firstMemoryID(t, s, "Lisbon"), firstMemoryID(t, s, "Acme")
	if _, raw, _ := s.get(t, "/v1/persona"); !strings.Contains(raw, "Acme") {
		t.Fatalf("the persona lacks the memory to mark wrong: %s", raw)
	}
	factID := func(object string) string {
		t.Helper()
		_, raw, out := s.get(t, "/v1/kg?entity=Ana")
		trs, _ := out["triples"].([]any)
		for _, tr := range trs {
			m := tr.(map[string]any)
			if m["object"] == object {
				return m["id"].(string)
			}
		}
		t.Fatalf("no fact of Ana with object %s: %s", object, raw)
		return ""
	}
	lives := factID("Lisbon")

	// Errors first: nothing is recorded by them.
	for _, c := range []struct {
		method, path, body string
		code               int
		want               string
	}{
		{"PATCH", "/v1/memories/no-such-memory", `{"wrong":true}`, 404, "no-such-memory"},
		{"PATCH", "/v1/kg/facts/kg-nothing", `{"wrong":true}`, 404, "kg-nothing"},
		{"PATCH", "/v1/memories/" + lisbon, `{"txt":"x"}`, 400, "txt"},
		{"PATCH", "/v1/memories/" + lisbon, `{"wrong":"yes"}`, 400, "wrong"},
		{"PATCH", "/v1/memories/" + lisbon, `{}`, 400, "text"},
		{"PATCH", "/v1/memories/" + lisbon, `{"wrong":true,"text":"x"}`, 400, "wrong"},
		{"PATCH", "/v1/memories/" + lisbon, `{"object":"Porto"}`, 400, "object"},
		{"PATCH", "/v1/memories/" + lisbon, `{"restore":true}`, 400, "restore"},
		{"PATCH", "/v1/kg/facts/" + lives, `{"text":"x"}`, 400, "text"},
		{"PATCH", "/v1/memories/" + lisbon, `[1]`, 400, ""},
	} {
		code, out := s.do(t, c.method, c.path, []byte(c.body))
		if code != c.code || !strings.Contains(fmt.Sprint(out), c.want) {
			t.Errorf("%s %s %s: %d %v, want %d naming %q", c.method, c.path, c.body, code, out, c.code, c.want)
		}
	}

	if code, out := s.do(t, "PATCH", "/v1/memories/"+lisbon, []byte(`{"text":"Ana lives in Porto","reason":"she moved"}`)); code != 200 || out["of"] != lisbon {
		t.Fatalf("PATCH memory text: %d %v", code, out)
	}
	if code, out := s.do(t, "PATCH", "/v1/memories/"+acme, []byte(`{"wrong":true}`)); code != 200 || out["wrong"] != true {
		t.Fatalf("PATCH memory wrong: %d %v", code, out)
	}
	if code, out := s.do(t, "PATCH", "/v1/kg/facts/"+lives, []byte(`{"object":"Porto"}`)); code != 200 || out["original"] != "Lisbon" {
		t.Fatalf("PATCH fact: %d %v", code, out)
	}

	check := func(when string) {
		t.Helper()
		_, raw, _ := s.get(t, "/v1/memories?q=Porto")
		if !strings.Contains(raw, lisbon) || !strings.Contains(raw, `"extracted_text":"I live in Lisbon`) && !strings.Contains(raw, `"extracted_text"`) {
			t.Errorf("%s: the corrected text is not listed: %s", when, raw)
		}
		if _, raw, _ := s.get(t, "/v1/memories?q=Acme"); strings.Contains(raw, acme) {
			t.Errorf("%s: a memory marked wrong is listed: %s", when, raw)
		}
		if _, raw, _ := s.get(t, "/v1/memories?superseded=true&q=Acme"); !strings.Contains(raw, `"wrong":true`) {
			t.Errorf("%s: a memory marked wrong is not in the history: %s", when, raw)
		}
		if _, raw, _ := s.get(t, "/v1/persona"); strings.Contains(raw, "Acme") || !strings.Contains(raw, "Lisbon") {
			t.Errorf("%s: the persona keeps the memory marked wrong, or lost the others: %s", when, raw)
		}
		if _, raw, _ := s.get(t, "/v1/kg?entity=Ana"); !strings.Contains(raw, `"object":"Porto"`) || strings.Contains(raw, `"object":"Lisbon"`) || strings.Contains(raw, "Acme") {
			t.Errorf("%s: the graph does not hold the corrections: %s", when, raw)
		}
		code, out := s.do(t, "POST", "/v1/recall", []byte(`{"query":"Acme","mode":"keyword","kinds":["memory","fact"]}`))
		if res, _ := out["results"].([]any); code != 200 || len(res) != 0 {
			t.Errorf("%s: recall finds the wrong memory or fact: %d %v", when, code, out)
		}
		code, out = s.do(t, "POST", "/v1/recall", []byte(`{"query":"Porto","mode":"keyword","kinds":["memory","fact"]}`))
		if res, _ := out["results"].([]any); code != 200 || len(res) < 2 {
			t.Errorf("%s: recall does not find the corrected memory and fact: %d %v", when, code, out)
		}
	}
	check("after the corrections")
	if err := e.RunAll(ctx); err != nil {
		t.Fatal(err)
	}
	check("after the jobs ran again")
	// Said again: the memory merges into the one marked wrong and stays
	// hidden; the graph keeps the corrected object.
	if code, out := s.do(t, "POST", "/v1/turns", []byte(`{"id":"t3","session":"s2","speaker":"Ana","content":"I work at Acme."}`)); code != 201 {
		t.Fatalf("POST: %d %v", code, out)
	}
	if err := e.RunAll(ctx); err != nil {
		t.Fatal(err)
	}
	check("after a turn said it again")

	// A fact marked wrong leaves the graph; its correction's id names it
	// to restore it.
	porto := factID("Porto")
	code, out := s.do(t, "PATCH", "/v1/kg/facts/"+porto, []byte(`{"wrong":true}`))
	if code != 200 {
		t.Fatalf("PATCH fact wrong: %d %v", code, out)
	}
	if _, raw, _ := s.get(t, "/v1/kg?entity=Ana"); strings.Contains(raw, "Porto") || strings.Contains(raw, "Lisbon") {
		t.Errorf("a fact marked wrong is in the graph: %s", raw)
	}
	if code, out := s.do(t, "PATCH", "/v1/kg/facts/"+out["id"].(string), []byte(`{"restore":true}`)); code != 200 {
		t.Fatalf("PATCH fact restore by the correction's id: %d %v", code, out)
	}
	if _, raw, _ := s.get(t, "/v1/kg?entity=Ana"); !strings.Contains(raw, `"object":"Lisbon"`) {
		t.Errorf("a restored fact is not in the graph as extracted: %s", raw)
	}

	// Restore: what extraction produced stands again.
	if code, out := s.do(t, "PATCH", "/v1/memories/"+acme, []byte(`{"restore":true}`)); code != 200 {
		t.Fatalf("PATCH restore: %d %v", code, out)
	}
	if _, raw, _ := s.get(t, "/v1/persona"); !strings.Contains(raw, "Acme") {
		t.Errorf("a restored memory is not in the persona again: %s", raw)
	}
	if _, raw, _ := s.get(t, "/v1/memories?q=Acme"); !strings.Contains(raw, acme) {
		t.Errorf("a restored memory is not listed: %s", raw)
	}
}

// firstMemoryID is the id of the first memory GET /v1/memories?q= lists.
func firstMemoryID(t *testing.T, s *stack, q string) string {
	t.Helper()
	_, raw, out := s.get(t, "/v1/memories?q="+q)
	ms, _ := out["memories"].([]any)
	if len(ms) == 0 {
		t.Fatalf("no memory for %q: %s", q, raw)
	}
	return ms[0].(map[string]any)["id"].(string)
}

// correctMemoryText corrects the text of the first memory of q and returns
// its id.
func correctMemoryText(t *testing.T, s *stack, q, text string) string {
	t.Helper()
	id := firstMemoryID(t, s, q)
	body, _ := json.Marshal(map[string]string{"text": text})
	if code, out := s.do(t, "PATCH", "/v1/memories/"+id, body); code != 200 {
		t.Fatalf("PATCH /v1/memories/%s: %d %v", id, code, out)
	}
	return id
}
