package llm_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/llm"
	"github.com/engram-dev/engram/internal/llmtest"
)

// What the tests of the extractors share.
var (
	conversation = llmtest.Conversation
	checkMemory  = llmtest.CheckMemory
)

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
	{"truncated before first", `{"memories":[{"type":"fact","te`, -1, llm.ErrTruncated},
	{"truncated before list", `{"memo`, -1, llm.ErrTruncated},
	{"truncated fence", "```json\n{\"memories\": [\n  {\"text\": \"a\"},\n  {\"text\": \"b", 1, nil},
	{"single quotes", `{'memories': [{'type': 'fact', 'text': 'Alice\'s cat is called "Tom"', 'turn': 1}]}`, 1, nil},
	{"apostrophe in single quotes", `{'memories': [{'text': 'it's Bob's'}]}`, 1, nil},
	{"raw newline in string", "{\"memories\":[{\"text\":\"line one\nline two\ttab\"}]}", 1, nil},
	{"bad escape", `{"memories":[{"text":"it\'s \q"}]}`, 1, nil},
	{"wrong closer", `{"memories":[{"text":"a"}}`, 1, nil},
	{"top-level array", `[{"type":"fact","text":"a","turn":1}]`, 1, nil},
	{"other key", `{"facts":[{"text":"a"},{"text":"b"}]}`, 2, nil},
	{"single memory", `{"type":"fact","text":"a","turn":1}`, 1, nil},
	{"not objects", `{"memories":["a","b"]}`, -1, llm.ErrNoMemories},
	{"no list", `{"answer":"nothing here"}`, -1, llm.ErrNoMemories},
	{"plain text", "ok", -1, llm.ErrNoJSON},
	{"empty reply", "", -1, llm.ErrNoJSON},
	{"unquoted keys", `{memories: [{text: "a"}]}`, -1, llm.ErrSyntax},
	{"python literals", `{"memories":[{"text":"a","important":True}]}`, -1, llm.ErrSyntax},
	{"think", "<think>The user wants {memories}.</think>\n{\"memories\":[{\"text\":\"a\"}]}", 1, nil},
}

func TestParseReply(t *testing.T) {
	for _, tc := range brokenReplies {
		t.Run(tc.name, func(t *testing.T) {
			items, fixed, err := llm.ParseReply(tc.in)
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
		items, _, err := llm.ParseReply(in)
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
	items, _, err := llm.ParseReply(`{"memories":[
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
	got := llm.Memories(items, batch)
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
	items, _, _ = llm.ParseReply(`[{"type":"fact","text":"no turn"}]`)
	if got := llm.Memories(items, batch[:1]); len(got) != 1 || got[0].Sources[0] != "t1" {
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
		if got := llm.SnakeCase(in); got != want {
			t.Errorf("SnakeCase(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestExcerpt(t *testing.T) {
	long := strings.Repeat("é", llm.MaxExcerpt) // 2 bytes a rune
	got := llm.Excerpt(long)
	if len(got) > llm.MaxExcerpt+len("…") || !strings.HasSuffix(got, "…") || strings.ContainsRune(got, '\uFFFD') {
		t.Fatalf("excerpt: %d bytes, %q...", len(got), got[:10])
	}
	if llm.Excerpt("ok") != "ok" {
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
		items, fixed, err := llm.ParseReply(s)
		if err != nil {
			if len(items) != 0 || fixed != "" {
				t.Fatalf("ParseReply(%q): items with error %v", s, err)
			}
			if !errors.Is(err, llm.ErrNoJSON) && !errors.Is(err, llm.ErrTruncated) && !errors.Is(err, llm.ErrSyntax) && !errors.Is(err, llm.ErrNoMemories) {
				t.Fatalf("ParseReply(%q): unexpected error %v", s, err)
			}
			return
		}
		if !json.Valid([]byte(fixed)) {
			t.Fatalf("ParseReply(%q) repaired to invalid JSON %q", s, fixed)
		}
		again, fixed2, err := llm.ParseReply(fixed)
		if err != nil || fixed2 != fixed || len(again) != len(items) {
			t.Fatalf("parseReply is not idempotent on %q: %q, %d vs %d items, %v", s, fixed2, len(again), len(items), err)
		}
		for _, m := range llm.Memories(items, batch) {
			checkMemory(t, m, turns)
		}
	})
}
