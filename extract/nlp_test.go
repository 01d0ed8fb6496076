package extract_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/extract"
	"github.com/engram-dev/engram/internal/llm"
)

// nlpCase is one fixture of testdata/nlp/cases.json: a turn said at nlpTS
// by speaker, after a turn of other in the same session when other is set
// (so that "you" and "we" have someone to name) and after the speaker's own
// message before when before is set, and the memories the turn must yield,
// in order, no more and no fewer. An empty want is a negative.
type nlpCase struct {
	Name    string       `json:"name"`
	Speaker string       `json:"speaker"`
	Other   string       `json:"other,omitempty"`
	Before  string       `json:"before,omitempty"`
	Content string       `json:"content"`
	Want    []wantMemory `json:"want"`
}

// nlpTS is when the fixtures' turns are said: a Wednesday.
var nlpTS = time.Date(2023, 5, 10, 15, 4, 0, 0, time.UTC)

func loadNLPCases(tb testing.TB) []nlpCase {
	tb.Helper()
	return loadJSON[[]nlpCase](tb, "nlp", "cases.json")
}

// turns returns the case's turns: the other speaker's first, if any.
func (c nlpCase) turns() []engram.Turn {
	var out []engram.Turn
	if c.Other != "" {
		out = append(out, engram.Turn{ID: "t-other", Namespace: "ns1", Session: "s1", Role: engram.RoleUser,
			Speaker: c.Other, Content: "Hi!", TS: nlpTS.Add(-time.Minute)})
	}
	if c.Before != "" {
		out = append(out, engram.Turn{ID: "t-before-" + c.Name, Namespace: "ns1", Session: "s1", Role: engram.RoleUser,
			Speaker: c.Speaker, Content: c.Before, TS: nlpTS.Add(-time.Second)})
	}
	return append(out, engram.Turn{ID: "t-" + c.Name, Namespace: "ns1", Session: "s1", Role: engram.RoleUser,
		Speaker: c.Speaker, Content: c.Content, TS: nlpTS})
}

func TestNLPExtractCases(t *testing.T) {
	cases := loadNLPCases(t)
	var pos, neg int
	x := &extract.NLPExtractor{}
	for _, c := range cases {
		if len(c.Want) == 0 {
			neg++
		} else {
			pos++
		}
		t.Run(c.Name, func(t *testing.T) {
			turns := c.turns()
			got, err := x.Extract(context.Background(), turns)
			if err != nil {
				t.Fatal(err)
			}
			last := turns[len(turns)-1]
			got = slices.DeleteFunc(got, func(m engram.Memory) bool { return !slices.Contains(m.Sources, last.ID) })
			from := last // the turn the memories are of: the one before, when a sentence went on about it
			if c.Before != "" && len(got) > 0 && got[0].Sources[0] != last.ID {
				from = turns[len(turns)-2]
			}
			checkMemories(t, from, got, c.Want, false)
		})
	}
	if pos < 30 || neg < 12 {
		t.Errorf("fixtures hold %d positive and %d negative cases, want at least 30 and 12", pos, neg)
	}
}

// TestNLPExtractDeterministic runs every fixture at once, one turn at a
// time and in parallel, and wants the same memories each time, in turn
// order, with distinct ids.
func TestNLPExtractDeterministic(t *testing.T) {
	var turns []engram.Turn
	for i, c := range loadNLPCases(t) {
		for _, tr := range c.turns() {
			tr.Session = fmt.Sprintf("s%d", i)
			turns = append(turns, tr)
		}
	}
	ctx := context.Background()
	first, err := (&extract.NLPExtractor{Workers: 1}).Extract(ctx, turns)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) < 40 {
		t.Fatalf("%d memories from the fixtures, want at least 40", len(first))
	}
	for _, workers := range []int{0, 3, 16} {
		again, err := (&extract.NLPExtractor{Workers: workers}).Extract(ctx, turns)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(first, again) {
			t.Fatalf("workers=%d gave other memories than one worker", workers)
		}
	}
	ids := map[string]bool{}
	last := -1
	for _, m := range first {
		if ids[m.ID] {
			t.Errorf("memory id %s twice", m.ID)
		}
		ids[m.ID] = true
		i := slices.IndexFunc(turns, func(tr engram.Turn) bool { return tr.ID == m.Sources[0] })
		if i < last {
			t.Errorf("memory of turn %d after one of turn %d: not in turn order", i, last)
		}
		last = i
	}
}

func TestNLPExtractSkips(t *testing.T) {
	ctx := context.Background()
	x := &extract.NLPExtractor{}
	turns := []engram.Turn{
		{ID: "tool", Namespace: "ns1", Session: "s1", Role: engram.RoleTool, Content: "I moved to Berlin.", TS: nlpTS},
		{ID: "system", Namespace: "ns1", Session: "s1", Role: engram.RoleSystem, Content: "I moved to Berlin.", TS: nlpTS},
		{ID: "empty", Namespace: "ns1", Session: "s1", Role: engram.RoleUser, Content: "  ", TS: nlpTS},
		{ID: "bad-utf8", Namespace: "ns1", Session: "s1", Role: engram.RoleUser, Content: "I moved to Berlin. \xff\xfe", TS: nlpTS},
	}
	got, err := x.Extract(ctx, turns)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Sources[0] != "bad-utf8" || !utf8.ValidString(got[0].Text) {
		t.Errorf("got %+v; want one memory, of the user turn, in valid UTF-8", got)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := x.Extract(canceled, turns); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: err %v", err)
	}
	if got, err := x.Extract(ctx, nil); err != nil || len(got) != 0 {
		t.Errorf("no turns: %v, %v", got, err)
	}
}

// TestNLPSpeakers checks who "you" and "we" name across a session: the
// other speaker nearest before the turn, else after it; a turn of another
// session does not count.
func TestNLPSpeakers(t *testing.T) {
	turn := func(id, session, speaker, content string) engram.Turn {
		return engram.Turn{ID: id, Namespace: "ns1", Session: session, Role: engram.RoleUser, Speaker: speaker, Content: content, TS: nlpTS}
	}
	turns := []engram.Turn{
		turn("1", "a", "Ana", "I'll call you tomorrow about the lease."),
		turn("2", "b", "Cy", "Hello."),
		turn("3", "a", "Ben", "Sure."),
		turn("4", "a", "Ana", "We should book the venue for the party."),
		turn("5", "c", "Dee", "I'll call you tomorrow about the lease."),
	}
	got, err := (&extract.NLPExtractor{}).Extract(context.Background(), turns)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, m := range got {
		texts = append(texts, m.Text)
	}
	want := []string{"Ana will call Ben on 11 May 2023 about the lease", "Ana and Ben should book the venue for the party",
		"Dee will call you on 11 May 2023 about the lease"}
	if !slices.Equal(texts, want) {
		t.Errorf("got %q\nwant %q", texts, want)
	}
}

func FuzzNLPExtract(f *testing.F) {
	for _, c := range loadNLPCases(f) {
		f.Add(c.Content)
	}
	f.Add("I i I'd 'd 'cause gonna - - ? , , and and I")
	f.Add("Lost\x00my job, I I I we we let's let's")
	x := &extract.NLPExtractor{Workers: 1}
	f.Fuzz(func(t *testing.T, content string) {
		turns := []engram.Turn{{ID: "t", Namespace: "ns", Session: "s", Role: engram.RoleUser, Speaker: "Ana", Content: content, TS: nlpTS}}
		got, err := x.Extract(context.Background(), turns)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range got {
			if m.Text == "" || !utf8.ValidString(m.Text) || m.Subject != "Ana" || len(m.Sources) != 1 {
				t.Fatalf("%q gave %+v", content, m)
			}
		}
	})
}

// TestPromptNamesOfflinePredicates keeps the LLM extractors' prompt in step
// with the offline extractor: every predicate and memory type the
// offline extractor gives on its fixtures is one the prompt asks a model
// for (a relative's predicate among the relatives it lists).
func TestPromptNamesOfflinePredicates(t *testing.T) {
	var turns []engram.Turn
	for _, c := range loadNLPCases(t) {
		turns = append(turns, c.turns()...)
	}
	for _, c := range loadRulesFile(t, "relations.json") {
		turns = append(turns, c.turn(len(turns)))
	}
	got, err := (&extract.NLPExtractor{}).Extract(context.Background(), turns)
	if err != nil {
		t.Fatal(err)
	}
	preds := map[string]string{} // predicate: a memory's text
	for _, m := range got {
		if !strings.Contains(llm.SystemPrompt, `"`+m.Type+`"`) {
			t.Errorf("memory type %q is not in the prompt", m.Type)
		}
		if m.Relation != nil {
			preds[m.Relation.Predicate] = m.Text
		}
	}
	// An action's predicate is its verb as said (with its particle and its
	// preposition: "signed_up_for", "grew_up_in"): the prompt names it
	// <verb>; the verb must be in the memory's text.
	action := regexp.MustCompile(`^(?:plans_to_)?([a-z]+)(?:_[a-z]+){0,2}$`)
	if len(preds) < 15 {
		t.Errorf("only %d predicates from the fixtures: %v", len(preds), preds)
	}
	for p := range preds {
		name := p
		if strings.HasPrefix(p, "favourite_") {
			name = "favourite_<thing>"
		} else if strings.HasPrefix(p, "uses_for_") {
			name = "uses_for_<purpose>"
		}
		if regexp.MustCompile(`(^|[^a-z_])` + regexp.QuoteMeta(name) + `([^a-z_]|$)`).MatchString(llm.SystemPrompt) {
			continue
		}
		if v := action.FindStringSubmatch(p); v != nil && strings.Contains(strings.ToLower(preds[p]), v[1]) &&
			strings.Contains(llm.SystemPrompt, "<verb>") {
			continue
		}
		t.Errorf("the offline extractor gives predicate %s, which the prompt does not name", p)
	}
}
