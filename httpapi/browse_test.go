package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/httpapi"
)

// TestListTurns: the timeline pages newest first with before, a session's
// turns page in order with after, and the parameters are checked.
func TestListTurns(t *testing.T) {
	s := mustOpenLayers(t, httpapi.Config{})
	ctx := context.Background()
	var turns []engram.Turn
	for i := int64(1); i <= 7; i++ {
		turns = append(turns, engram.Turn{ID: fmt.Sprintf("t%d", i), Seq: i, Namespace: "default", Session: []string{"s1", "s2"}[i%2],
			Role: engram.RoleUser, Speaker: "Ana", Content: fmt.Sprintf("turn %d", i), TS: layerDay(int(i))})
	}
	turns = append(turns, engram.Turn{ID: "w1", Seq: 8, Namespace: "work", Session: "s1", Role: engram.RoleUser, Content: "elsewhere", TS: layerDay(9)},
		// Imported late: the last to arrive, the oldest in time.
		engram.Turn{ID: "old", Seq: 9, Namespace: "default", Session: "s3", Role: engram.RoleUser, Content: "long ago", TS: layerDay(-30)})
	if err := s.Palace.PutTurns(ctx, turns); err != nil {
		t.Fatal(err)
	}
	ids := func(body map[string]any) []string {
		var out []string
		for _, x := range body["turns"].([]any) {
			out = append(out, x.(map[string]any)["id"].(string))
		}
		return out
	}
	for _, c := range []struct {
		what, query, want string
		next              float64 // -1: not checked
	}{
		{"first page", "limit=3", "[t7 t6 t5]", 5},
		{"second page", "limit=3&before=5", "[t4 t3 t2]", -1},
		{"last page (the timeline is in time order, not arrival order)", "limit=3&before=2", "[t1 old]", 0},
		{"every namespace", "namespace=*&limit=2", "[w1 t7]", -1},
		{"session s1 of default", "session=s1", "[t2 t4 t6]", -1},
		{"session page", "session=s1&after=2&limit=1", "[t4]", 4},
	} {
		code, _, body := s.get(t, "/v1/turns?"+c.query)
		if code != 200 || fmt.Sprint(ids(body)) != c.want || (c.next >= 0 && body["next"].(float64) != c.next) {
			t.Fatalf("%s: %d %v", c.what, code, body)
		}
	}
	for _, bad := range []struct{ q, field string }{
		{"before=0", "before"}, {"before=x", "before"}, {"after=3", "after"}, {"session=s1&before=3", "before"},
		{"limit=0", "limit"}, {"nope=1", "nope"},
		{"ids=", "ids"}, {"ids=t1,,t2", "ids"}, {"ids=t1&session=s1", "session"}, {"ids=t1&before=3", "before"},
		{"ids=t1&limit=2", "limit"}, {"ids=" + strings.Repeat("x,", httpapi.MaxLayerLimit) + "x", "ids"},
		{"ids=t1,t%002", "ids"}, {"session=s%001", "session"},
	} {
		code, _, body := s.get(t, "/v1/turns?"+bad.q)
		if code != http.StatusBadRequest || body["error"].(map[string]any)["field"] != bad.field {
			t.Errorf("%s: %d %v, want 400 naming %s", bad.q, code, body, bad.field)
		}
	}
	if code, _, body := s.get(t, "/v1/turns?ids=t1,"+strings.Repeat("x", 5000)); code != http.StatusRequestEntityTooLarge ||
		body["error"].(map[string]any)["field"] != "ids" {
		t.Errorf("an id of 5000 bytes: %d %v, want 413 naming ids", code, body)
	}
}

// TestListTurnsByID: ids lists those turns, in the order asked, once
// each, of the namespace asked (every one with "*"); an id stored nowhere
// is left out, so a client sees which of its sources are gone.
func TestListTurnsByID(t *testing.T) {
	s := mustOpenLayers(t, httpapi.Config{})
	ctx := context.Background()
	turns := []engram.Turn{
		{ID: "a1", Seq: 1, Namespace: "default", Session: "s1", Role: engram.RoleUser, Speaker: "Ana", Content: "I live in Paris.", TS: layerDay(1)},
		{ID: "a2", Seq: 2, Namespace: "default", Session: "s2", Role: engram.RoleAssistant, Content: "Noted.", TS: layerDay(2)},
		{ID: "w1", Seq: 3, Namespace: "work", Session: "s1", Role: engram.RoleUser, Speaker: "Bo", Content: "elsewhere", TS: layerDay(3)},
	}
	if err := s.Palace.PutTurns(ctx, turns); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ query, want string }{
		{"ids=a2,a1", "[a2/s2/ Noted. a1/s1/Ana I live in Paris.]"},
		{"ids=a1,nosuch,a1", "[a1/s1/Ana I live in Paris.]"},
		{"ids=w1,a1", "[a1/s1/Ana I live in Paris.]"},
		{"ids=w1,a1&namespace=work", "[w1/s1/Bo elsewhere]"},
		{"ids=w1,a1&namespace=*", "[w1/s1/Bo elsewhere a1/s1/Ana I live in Paris.]"},
		{"ids=" + url.QueryEscape("a1, a2"), "[a1/s1/Ana I live in Paris.]"}, // " a2" is another id
	} {
		code, _, body := s.get(t, "/v1/turns?"+c.query)
		if code != 200 {
			t.Fatalf("%s: %d %v", c.query, code, body)
		}
		var got []string
		for _, x := range body["turns"].([]any) {
			m := x.(map[string]any)
			speaker, _ := m["speaker"].(string)
			got = append(got, fmt.Sprintf("%s/%s/%s %s", m["id"], m["session"], speaker, m["content"]))
		}
		if fmt.Sprint(got) != c.want || body["next"].(float64) != 0 {
			t.Errorf("%s: %v (next %v), want %s", c.query, got, body["next"], c.want)
		}
	}
}

// TestListEntities: entities with their triples, by prefix of a name or an
// alias, those with the most triples first.
func TestListEntities(t *testing.T) {
	s := mustOpenLayers(t, httpapi.Config{})
	code, _, body := s.get(t, "/v1/entities")
	if code != 200 {
		t.Fatalf("entities: %d %v", code, body)
	}
	es := body["entities"].([]any)
	if len(es) == 0 {
		t.Fatalf("no entities: %v", body)
	}
	first := es[0].(map[string]any)
	for _, e := range es[1:] {
		if e.(map[string]any)["triples"].(float64) > first["triples"].(float64) {
			t.Fatalf("not by triples: %v", es)
		}
	}
	_, _, body = s.get(t, "/v1/entities?prefix=ali")
	got := body["entities"].([]any)
	if len(got) != 1 || got[0].(map[string]any)["name"] != "Alice" {
		t.Fatalf("prefix ali: %v", body)
	}
	if code, _, _ := s.get(t, "/v1/entities?limit=5000"); code != http.StatusBadRequest {
		t.Errorf("limit 5000: %d", code)
	}
}
