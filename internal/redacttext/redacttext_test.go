package redacttext

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestSceneDraft: a draft loses the terms and phrases that hold a span or a
// word of one (by key or by surface form), their keys in the window, and
// the span and its pieces in every text; numbers and the other terms stay
// as they were.
func TestSceneDraft(t *testing.T) {
	r := New([]string{"Grimblethorp-11", "Quokkaville"}, "[x]")
	raw := `{"lead":"the secret is Grimblethorp-11","talk":12345678901234567,
		"terms":[{"k":"grimblethorp","d":"Grimblethorp","n":2},{"k":"quokkavil","d":"Quokkaville","n":1},{"k":"rest","n":1}],
		"phrases":[{"k":"grimblethorp rest","n":2},{"k":"keep rest","n":2}],
		"window":[["grimblethorp","rest"],["quokkavil"]],
		"scene":{"title":"Grimblethorp, rest","summary":"Ana: the code is Grimble…"},
		"sentences":[{"text":"I moved to \"Quokkaville\" <now>","turn":1}]}`
	var got map[string]any
	if err := json.Unmarshal([]byte(r.SceneDraft(raw)), &got); err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	json.Unmarshal([]byte(`{"lead":"the secret is [x]","talk":12345678901234567,
		"terms":[{"k":"rest","n":1}],
		"phrases":[{"k":"keep rest","n":2}],
		"window":[["rest"],[]],
		"scene":{"title":"[x], rest","summary":"Ana: the code is [x]…"},
		"sentences":[{"text":"I moved to \"[x]\" <now>","turn":1}]}`), &want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
	if s := r.SceneDraft(`{"talk":1`); s != `{"talk":1` {
		t.Errorf("a draft that does not decode: %q", s)
	}
}

// TestSceneDraftNames: a word of a span leaves the draft's texts but not
// its names: the scene's namespace, session and participants keep a word
// a span shares with them ("default" of "default password hunter2").
func TestSceneDraftNames(t *testing.T) {
	r := New([]string{"default password hunter2"}, "[x]")
	raw := `{"lead":"the default password is weak","scene":{"namespace":"default","session":"hunter2",
		"participants":["Default"],"title":"password, hunter2","turns":["t1"]}}`
	var got, want map[string]any
	if err := json.Unmarshal([]byte(r.SceneDraft(raw)), &got); err != nil {
		t.Fatal(err)
	}
	json.Unmarshal([]byte(`{"lead":"the [x] [x] is weak","scene":{"namespace":"default","session":"hunter2",
		"participants":["Default"],"title":"[x], [x]","turns":["t1"]}}`), &want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
}

// TestJSON: a span is found as JSON writes it, escaped.
func TestJSON(t *testing.T) {
	r := New([]string{`a "b" <c>`}, "[x]")
	if got := r.JSON(`{"v":"a \"b\" \u003cc\u003e!"}`); got != `{"v":"[x]!"}` {
		t.Errorf("JSON = %s", got)
	}
}
