package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engram-dev/engram"
)

var day = time.Date(2026, 5, 1, 14, 3, 0, 0, time.UTC)

// conversation returns n user turns t1..tn by Alice, one a minute.
func conversation(n int) []engram.Turn {
	out := make([]engram.Turn, n)
	for i := range out {
		out[i] = engram.Turn{ID: fmt.Sprintf("t%d", i+1), Namespace: "work", Session: "s1", Role: engram.RoleUser,
			Speaker: "Alice", Content: fmt.Sprintf("Note %d: we moved the weekly sync to room %d.", i+1, i%7), TS: day.Add(time.Duration(i) * time.Minute)}
	}
	return out
}

// checkMemory fails the test unless m is a memory Memories may return for
// turns.
func checkMemory(tb testing.TB, m engram.Memory, turns []engram.Turn) {
	tb.Helper()
	if len(m.Sources) != 1 {
		tb.Fatalf("memory %+v: sources %q, want one turn", m, m.Sources)
	}
	i := slices.IndexFunc(turns, func(t engram.Turn) bool { return t.ID == m.Sources[0] })
	if i < 0 {
		tb.Fatalf("memory %+v: source %q is not one of the turns", m, m.Sources[0])
	}
	t := turns[i]
	ns := t.Namespace
	if ns == "" {
		ns = engram.DefaultNamespace
	}
	switch {
	case t.Role == engram.RoleTool || t.Role == engram.RoleSystem:
		tb.Fatalf("memory %+v comes from a %s turn", m, t.Role)
	case m.ID != engram.MemoryID(ns, m.Type, m.Text, t.ID):
		tb.Fatalf("memory %+v: id is not engram.MemoryID(namespace, type, text, source)", m)
	case m.Namespace != ns || !m.TS.Equal(t.TS) || m.ValidFrom.After(t.TS) || m.ValidFrom.IsZero():
		tb.Fatalf("memory %+v: namespace, ts or valid_from do not fit turn %+v", m, t)
	case !engram.ValidMemoryType(m.Type):
		tb.Fatalf("memory %+v: unknown type", m)
	case strings.TrimSpace(m.Text) == "" || m.Subject == "":
		tb.Fatalf("memory %+v: empty text or subject", m)
	case m.Importance < 0 || m.Importance > 1:
		tb.Fatalf("memory %+v: importance out of 0..1", m)
	}
	if r := m.Relation; r != nil && (r.Subject == "" || r.Object == "" || r.Predicate == "" || SnakeCase(r.Predicate) != r.Predicate) {
		tb.Fatalf("memory %+v: bad relation %+v", m, *r)
	}
	if len(m.Entities) > MaxEntities || slices.Contains(m.Entities, "") {
		tb.Fatalf("memory %+v: bad entities %q", m, m.Entities)
	}
}

// Replies as local models break them. want is the number of memory objects
// read, or -1 for an unusable reply.
var brokenReplies = []struct {
	name, in string
	want     int
	err      error
}{
	{"valid", `{"memories":[{"type":"fact","text":"a","turn":1},{"type":"plan","text":"b","turn":2}]}`, 2, nil},
	{"empty", `{"memories":[]}`, 0, nil},
	{"white space", " \n {\n \"memories\" : [ ] }\n\n", 0, nil},
	{"fence", "```json\n{\"memories\":[{\"type\":\"fact\",\"text\":\"a\",\"turn\":1}]}\n```", 1, nil},
	{"prose around", "Sure! Here is the JSON you asked for:\n{\"memories\":[{\"text\":\"a\"}]}\nLet me know if you need more.", 1, nil},
	{"bracket in prose", "I found [2] memories: {\"memories\":[{\"text\":\"a\"},{\"text\":\"b\"}]}", 2, nil},
	{"trailing text brace", `{"memories":[{"text":"a"}]} } ]`, 1, nil},
	{"trailing commas", `{"memories":[{"text":"a","turn":1,},{"text":"b"},],}`, 2, nil},
	{"truncated in string", `{"memories":[{"text":"a"},{"text":"b","ent`, 1, nil},
	{"truncated after comma", `{"memories":[{"text":"a"},{"text":"b"},`, 2, nil},
	{"truncated in nested", `{"memories":[{"text":"a","relation":{"subject":"x"}},{"text":"b","relation":{"subject":"y"},"entities":["p",`, 1, nil},
	{"truncated in escape", `{"memories":[{"text":"a \"q\""},{"text":"b \`, 1, nil},
	{"missing last brace", `{"memories":[{"text":"a"}]`, 1, nil},
	{"empty list missing brace", `{"memories":[]`, 0, nil},
	{"truncated before first", `{"memories":[{"type":"fact","te`, -1, ErrTruncated},
	{"truncated before list", `{"memo`, -1, ErrTruncated},
	{"truncated fence", "```json\n{\"memories\": [\n  {\"text\": \"a\"},\n  {\"text\": \"b", 1, nil},
	{"single quotes", `{'memories': [{'type': 'fact', 'text': 'Alice\'s cat is called "Tom"', 'turn': 1}]}`, 1, nil},
	{"apostrophe in single quotes", `{'memories': [{'text': 'it's Bob's'}]}`, 1, nil},
	{"raw newline in string", "{\"memories\":[{\"text\":\"line one\nline two\ttab\"}]}", 1, nil},
	{"bad escape", `{"memories":[{"text":"it\'s \q"}]}`, 1, nil},
	{"wrong closer", `{"memories":[{"text":"a"}}`, 1, nil},
	{"top-level array", `[{"type":"fact","text":"a","turn":1}]`, 1, nil},
	{"other key", `{"facts":[{"text":"a"},{"text":"b"}]}`, 2, nil},
	{"single memory", `{"type":"fact","text":"a","turn":1}`, 1, nil},
	{"not objects", `{"memories":["a","b"]}`, -1, ErrNoMemories},
	{"no list", `{"answer":"nothing here"}`, -1, ErrNoMemories},
	{"plain text", "ok", -1, ErrNoJSON},
	{"empty reply", "", -1, ErrNoJSON},
	{"unquoted keys", `{memories: [{text: "a"}]}`, -1, ErrSyntax},
	{"python literals", `{"memories":[{"text":"a","important":True}]}`, -1, ErrSyntax},
	{"think", "<think>The user wants {memories}.</think>\n{\"memories\":[{\"text\":\"a\"}]}", 1, nil},
}

func TestParseReply(t *testing.T) {
	for _, tc := range brokenReplies {
		t.Run(tc.name, func(t *testing.T) {
			items, fixed, err := ParseReply(tc.in)
			if tc.want < 0 {
				if !errors.Is(err, tc.err) {
					t.Fatalf("ParseReply(%q) = %d items (%s), %v; want %v", tc.in, len(items), fixed, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseReply(%q): %v", tc.in, err)
			}
			if len(items) != tc.want || !json.Valid([]byte(fixed)) {
				t.Fatalf("ParseReply(%q) = %d items from %s, want %d", tc.in, len(items), fixed, tc.want)
			}
		})
	}
	// The repaired strings keep their text.
	for in, want := range map[string]string{
		`{'memories': [{'text': 'Alice\'s cat is called "Tom"'}]}`: `Alice's cat is called "Tom"`,
		`{'memories': [{'text': 'it's Bob's'}]}`:                   `it's Bob's`,
		"{\"memories\":[{\"text\":\"a\nb\"}]}":                     "a\nb",
		`{"memories":[{"text":"it\'s \q"}]}`:                       `it's \q`,
	} {
		items, _, err := ParseReply(in)
		if err != nil || len(items) != 1 || items[0].Get("text").String() != want {
			t.Errorf("ParseReply(%q) = %v, %v: want text %q", in, items, err, want)
		}
	}
}

func TestMemories(t *testing.T) {
	turns := conversation(3)
	turns[1].Speaker = ""
	turns[1].Role = engram.RoleAssistant
	batch := []*engram.Turn{&turns[0], &turns[1], &turns[2]}
	items, _, err := ParseReply(`{"memories":[
		{"type":"fact","text":"  Alice   works at\nAcme ","turn":1,"importance":0.42,"relation":{"subject":"Alice","predicate":"works-at","object":"Acme"}},
		{"type":"fact","text":"Alice works at Acme","turn":1},
		{"type":"opinion","text":"unknown type","turn":1},
		{"type":"fact","text":"   ","turn":1},
		{"type":"fact","text":"no turn"},
		{"type":"fact","text":"turn 0","turn":0},
		{"type":"fact","text":"turn 4","turn":4},
		{"type":"fact","text":"turn 1.5","turn":1.5},
		{"type":"event","text":"the assistant booked it","turn":"[2]","importance":-3,"relation":{"subject":"x","predicate":"","object":"y"}},
		{"type":"TODO","text":"Alice will call Bob","turn":3,"importance":"0.333","subject":"Alice","entities":["Bob",3,"Bob"," Acme "],"relation":{"subject":"Alice","predicate":"plansToCall","object":"Bob"}},
		{"type":"decision","text":"defaults","turn":3,"importance":"high","subject":42}
	]}`)
	if err != nil {
		t.Fatal(err)
	}
	got := Memories(items, batch)
	type row struct {
		typ, text, subject string
		source             string
		imp                float64
		entities           []string
		rel                *engram.Relation
	}
	want := []row{
		{"fact", "Alice works at Acme", "Alice", "t1", 0.42, nil, &engram.Relation{Subject: "Alice", Predicate: "works_at", Object: "Acme"}},
		{"event", "the assistant booked it", "assistant", "t2", 0, nil, nil},
		{"plan", "Alice will call Bob", "Alice", "t3", 0.33, []string{"Bob", "Acme"}, &engram.Relation{Subject: "Alice", Predicate: "plans_to_call", Object: "Bob"}},
		{"decision", "defaults", "Alice", "t3", 0.9, nil, nil},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d memories, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		m := got[i]
		checkMemory(t, m, turns)
		if m.Type != w.typ || m.Text != w.text || m.Subject != w.subject || m.Sources[0] != w.source ||
			m.Importance != w.imp || !slices.Equal(m.Entities, w.entities) ||
			(m.Relation == nil) != (w.rel == nil) || m.Relation != nil && *m.Relation != *w.rel {
			t.Errorf("memory %d = %+v (relation %v), want %+v", i, m, m.Relation, w)
		}
	}

	// One turn: the turn number may be left out.
	items, _, _ = ParseReply(`[{"type":"fact","text":"no turn"}]`)
	if got := Memories(items, batch[:1]); len(got) != 1 || got[0].Sources[0] != "t1" {
		t.Fatalf("single turn without a number: %+v", got)
	}
}

func TestMemoryID(t *testing.T) {
	// The rules extractor's ID for the same memory (pipeline.memoryID).
	if got := engram.MemoryID("default", "decision", "Alice decided to use SQLite", "t1"); got != "mem-7f407aea0743e2d9ee3f" {
		t.Fatalf("memoryID = %s", got)
	}
}

func TestSnakeCase(t *testing.T) {
	for in, want := range map[string]string{
		"lives_in": "lives_in", "Lives In": "lives_in", "lives-in": "lives_in", "livesIn": "lives_in",
		"  works  at ": "works_at", "uses_for__DB": "uses_for_db", "favourite book!": "favourite_book",
		"has2Cats": "has2_cats", "喜欢": "喜欢", "--": "", "": "",
	} {
		if got := SnakeCase(in); got != want {
			t.Errorf("SnakeCase(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestExcerpt(t *testing.T) {
	long := strings.Repeat("é", maxExcerpt) // 2 bytes a rune
	got := Excerpt(long)
	if len(got) > maxExcerpt+len("…") || !strings.HasSuffix(got, "…") || strings.ContainsRune(got, '\uFFFD') {
		t.Fatalf("excerpt: %d bytes, %q...", len(got), got[:10])
	}
	if Excerpt("ok") != "ok" {
		t.Fatal("a short reply must be kept whole")
	}
}

func FuzzParseReply(f *testing.F) {
	for _, tc := range brokenReplies {
		f.Add(tc.in)
	}
	turns := conversation(3)
	batch := []*engram.Turn{&turns[0], &turns[1], &turns[2]}
	f.Fuzz(func(t *testing.T, s string) {
		items, fixed, err := ParseReply(s)
		if err != nil {
			if len(items) != 0 || fixed != "" {
				t.Fatalf("ParseReply(%q): items with error %v", s, err)
			}
			if !errors.Is(err, ErrNoJSON) && !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrSyntax) && !errors.Is(err, ErrNoMemories) {
				t.Fatalf("ParseReply(%q): unexpected error %v", s, err)
			}
			return
		}
		if !json.Valid([]byte(fixed)) {
			t.Fatalf("ParseReply(%q) repaired to invalid JSON %q", s, fixed)
		}
		again, fixed2, err := ParseReply(fixed)
		if err != nil || fixed2 != fixed || len(again) != len(items) {
			t.Fatalf("parseReply is not idempotent on %q: %q, %d vs %d items, %v", s, fixed2, len(again), len(items), err)
		}
		for _, m := range Memories(items, batch) {
			checkMemory(t, m, turns)
		}
	})
}
