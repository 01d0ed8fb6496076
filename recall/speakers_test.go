package recall

import (
	"testing"

	"github.com/engram-dev/engram"
)

func TestSameName(t *testing.T) {
	for _, c := range []struct {
		q, n string
		want bool
	}{
		{"Kate", "kate", true},
		{"elise", "elise", true}, // lower case, as people type
		{"Muhammad", "muhhamed", true},
		{"Mohamed", "muhhamed", true},
		{"Mohammed", "muhhamed", true},
		{"Akim", "akib", true}, // one letter off
		{"Nicholas", "nicolas", true},
		{"else", "elise", false}, // a common word is no name written loosely
		{"Else", "elise", true},  // ... but a capital says it is one
		{"Jo", "jon", false},     // too short to match loosely
		{"Emi", "kate", false},
		{"Mark", "mike", false},
		{"Kate", "kevin", false},
	} {
		if got := sameName(c.q, c.n); got != c.want {
			t.Errorf("sameName(%q, %q) = %v, want %v", c.q, c.n, got, c.want)
		}
	}
}

func TestNamedSpeakers(t *testing.T) {
	cands := func(speakers ...string) []*candidate {
		var out []*candidate
		for _, s := range speakers {
			out = append(out, &candidate{turn: engram.Turn{Speaker: s}})
		}
		return out
	}
	two := cands("Fahim Khan", "Muhhamed", "Fahim Khan")
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"What are Fahim's hobbies?", []string{"fahim khan"}},
		{"when did muhhamed cancel plans", []string{"muhhamed"}},
		{"When did Mohamed cancel plans", []string{"muhhamed"}},
		{"What games do Fahim Khan and Muhammad play together?", nil}, // both named: nothing told apart
		{"what games do people play", nil},
	} {
		got := namedSpeakers(c.query, two)
		if len(got) != len(c.want) {
			t.Errorf("%q: named %v, want %v", c.query, got, c.want)
			continue
		}
		for _, w := range c.want {
			if !got[w] {
				t.Errorf("%q: named %v, want %v", c.query, got, c.want)
			}
		}
	}
	if got := namedSpeakers("王芳说了什么", cands("王芳", "李雷")); !got["王芳"] || len(got) != 1 {
		t.Errorf("a Chinese name: named %v, want 王芳", got)
	}
}
