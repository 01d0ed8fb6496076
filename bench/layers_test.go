package bench

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/engram-dev/engram"
)

func TestLightStem(t *testing.T) {
	for _, group := range [][]string{
		{"loses", "lose", "losing"},
		{"dances", "dance", "dancing", "danced"},
		{"studies", "study"},
		{"attends", "attend", "attended", "attending"},
		{"running", "run", "runs"},
		{"planned", "plan", "planning", "plans"},
	} {
		want := lightStem(group[0])
		for _, w := range group[1:] {
			if got := lightStem(w); got != want {
				t.Errorf("lightStem(%q) = %q, lightStem(%q) = %q; want them equal", w, got, group[0], want)
			}
		}
	}
	for _, w := range []string{"class", "bus", "is", "lost"} {
		if got := lightStem(w); got != w && got != strings.TrimSuffix(w, "e") {
			t.Errorf("lightStem(%q) = %q; want it (nearly) unchanged", w, got)
		}
	}
}

func TestContentWords(t *testing.T) {
	got := contentWords("Melanie's son gets in a car accident while on the roadtrip.", "melanie")
	want := []string{"son", "get", "car", "accident", "roadtrip"}
	if !slices.Equal(got, want) {
		t.Errorf("contentWords = %q, want %q", got, want)
	}
	if got := contentWords("I am a", "ana"); len(got) != 0 {
		t.Errorf("stopwords only: %q", got)
	}
}

// TestScoreEvent scores one event against memories that each miss one
// condition, and one that meets them all.
func TestScoreEvent(t *testing.T) {
	turns := map[string]layersTurn{
		"t1": {id: diaID{1, 1}, turn: &engram.Turn{Speaker: "Ana"}},
		"t2": {id: diaID{2, 1}, turn: &engram.Turn{Speaker: "Ana"}},
	}
	ev := locomoEvent{session: 2, speaker: "Ana", text: "Ana adopts a beagle puppy named Biscuit."} // adopt beagl puppy nam biscuit
	mem := func(subject, text, source string) engram.Memory {
		return engram.Memory{Subject: subject, Text: text, Sources: []string{source}}
	}
	for _, tc := range []struct {
		name    string
		mem     engram.Memory
		covered bool
		held    int
	}{
		{"another session", mem("Ana", "Ana adopted a beagle puppy named Biscuit", "t1"), false, -1},
		{"another speaker", mem("Ben", "Ben adopted a beagle puppy named Biscuit", "t2"), false, -1},
		{"too few words", mem("Ana", "Ana has a puppy", "t2"), false, 1},
		{"half the words", mem("Ana", "Ana adopted a puppy last week", "t2"), false, 2},
		{"named in the text", mem("", "Ben and Ana adopted a beagle puppy", "t2"), true, 3},
		{"the subject", mem("Ana", "Adopted Biscuit, a beagle", "t2"), true, 3},
	} {
		e := scoreEvent("f.json", ev, []engram.Memory{tc.mem}, turns)
		if e.Covered != tc.covered || (tc.held >= 0 && len(e.BestWords) != tc.held) || (tc.held < 0 && e.Best != "") {
			t.Errorf("%s: covered %v, best %q holding %v of %v; want covered %v holding %d", tc.name, e.Covered, e.Best, e.BestWords, e.Words, tc.covered, tc.held)
		}
	}
	// Five words: three are half or more.
	if e := scoreEvent("f.json", ev, []engram.Memory{mem("Ana", "Ana adopted a beagle", "t2"), mem("Ana", "a beagle named Biscuit", "t2")}, turns); !e.Covered || e.Best != "a beagle named Biscuit" {
		t.Errorf("best of two: %+v", e)
	}
	// Every memory that covers the event is named, not only the best.
	both := []engram.Memory{mem("Ana", "Ana adopted a beagle puppy", "t2"), mem("Ana", "a beagle named Biscuit", "t2"), mem("Ana", "Ana has a puppy", "t2")}
	both[0].ID, both[1].ID, both[2].ID = "m1", "m2", "m3"
	if e := scoreEvent("f.json", ev, both, turns); !slices.Equal(e.By, []string{"m1", "m2"}) {
		t.Errorf("covered by %v, want m1 and m2", e.By)
	}
}

func TestBenchLayersEvents(t *testing.T) {
	f := locomoFixture(t)
	f["events_session_2"] = map[string]any{"Ben": []string{"Ben starts learning the violin."}, "Ana": []string{}, "date": "27 June, 2023"}
	f["event_summary"] = map[string]any{"events_session_1": map[string]any{"Ana": []string{"Ana adopts a puppy."}}}
	parse := func(f map[string]any) (*locomoConv, error) {
		b, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		return parseLocomo("7.json", b, true)
	}
	c, err := parse(f)
	if err != nil {
		t.Fatal(err)
	}
	want := []locomoEvent{{1, "Ana", "Ana adopts a puppy."}, {2, "Ben", "Ben starts learning the violin."}}
	if !slices.Equal(c.events, want) || !slices.Equal(c.speakers, []string{"Ana", "Ben"}) {
		t.Errorf("events %+v, speakers %q", c.events, c.speakers)
	}
	for _, tc := range []struct {
		key  string
		val  any
		want string
	}{
		{"events_session_3", map[string]any{"Ana": []string{"x"}}, "events_session_3: the conversation has no session_3 with turns"},
		{"events_session_1", map[string]any{"Cy": []string{"x"}}, "events_session_1.Cy: no turn of the conversation has this speaker"},
		{"events_session_1", map[string]any{"Ana": "x"}, "events_session_1.Ana: want a list of strings, got a string"},
		{"events_session_1", []string{}, "events_session_1: want a JSON object, got a list"},
	} {
		g := locomoFixture(t)
		g[tc.key] = tc.val
		if _, err := parse(g); err == nil || err.Error() != tc.want {
			t.Errorf("%s = %v: error %v, want %q", tc.key, tc.val, err, tc.want)
		}
	}
}
