package llm_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/llm"
)

// replyCase is one fixture of testdata/replies.json: a batch of turns, the
// reply a model that follows SystemPrompt gives for it (hand-written; raw
// when it is not valid JSON), and the memories Memories must read from it.
type replyCase struct {
	Name  string `json:"name"`
	Doc   string `json:"doc"`
	Turns []struct {
		Speaker string    `json:"speaker"`
		TS      time.Time `json:"ts"`
		Content string    `json:"content"`
	} `json:"turns"`
	Reply json.RawMessage `json:"reply"`
	Raw   string          `json:"raw"`
	Want  []struct {
		Type       string   `json:"type"`
		Text       string   `json:"text"`
		Rationale  string   `json:"rationale"`
		Subject    string   `json:"subject"`
		Turn       int      `json:"turn"` // from 1
		Importance float64  `json:"importance"`
		Relation   []string `json:"relation"`
		ValidFrom  string   `json:"valid_from"` // RFC 3339; "": the turn's time
	} `json:"want"`
}

func loadReplyCases(tb testing.TB) []replyCase {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "replies.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var cases []replyCase
	if err := json.Unmarshal(b, &cases); err != nil {
		tb.Fatal(err)
	}
	return cases
}

// TestReplyCases reads each hand-written reply: it must fit ReplySchema
// (when it is JSON), and give exactly the memories the case wants.
func TestReplyCases(t *testing.T) {
	var schema jsonschema.Schema
	if err := json.Unmarshal(llm.ReplySchema, &schema); err != nil {
		t.Fatal(err)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	cases := loadReplyCases(t)
	if len(cases) < 5 {
		t.Fatalf("%d cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			turns := make([]engram.Turn, len(c.Turns))
			batch := make([]*engram.Turn, len(c.Turns))
			for i, tr := range c.Turns {
				turns[i] = engram.Turn{ID: fmt.Sprintf("%s-%d", c.Name, i+1), Namespace: "ns", Session: "s", Role: engram.RoleUser,
					Speaker: tr.Speaker, Content: tr.Content, TS: tr.TS}
				batch[i] = &turns[i]
			}
			reply := c.Raw
			if c.Reply != nil {
				var v any
				if err := json.Unmarshal(c.Reply, &v); err != nil {
					t.Fatal(err)
				}
				if err := resolved.Validate(v); err != nil {
					t.Fatalf("the reply does not fit ReplySchema: %v", err)
				}
				reply = string(c.Reply)
			}
			items, _, err := llm.ParseReply(reply)
			if err != nil {
				t.Fatalf("ParseReply: %v", err)
			}
			got := llm.Memories(items, batch)
			if len(got) != len(c.Want) {
				t.Fatalf("%d memories, want %d: %+v", len(got), len(c.Want), got)
			}
			for i, w := range c.Want {
				m := got[i]
				checkMemory(t, m, turns)
				src := turns[w.Turn-1]
				from := src.TS
				if w.ValidFrom != "" {
					if from, err = time.Parse(time.RFC3339, w.ValidFrom); err != nil {
						t.Fatal(err)
					}
				}
				var rel *engram.Relation
				if w.Relation != nil {
					rel = &engram.Relation{Subject: w.Relation[0], Predicate: w.Relation[1], Object: w.Relation[2]}
				}
				if m.Type != w.Type || m.Text != w.Text || m.Rationale != w.Rationale || m.Subject != w.Subject ||
					m.Sources[0] != src.ID || m.Importance != w.Importance || !m.ValidFrom.Equal(from) ||
					(m.Relation == nil) != (rel == nil) || rel != nil && *m.Relation != *rel {
					t.Errorf("memory %d = %+v (relation %v)\nwant %+v", i, m, m.Relation, w)
				}
			}
		})
	}
}

// TestPrompt checks what the model is told: every memory type is in the
// schema's enum and described in the instructions, each turn is shown
// numbered with its date, speaker and role, and a retry adds the reminder.
func TestPrompt(t *testing.T) {
	var schema struct {
		Properties struct {
			Memories struct {
				Items struct {
					Properties struct {
						Type struct {
							Enum []string `json:"enum"`
						} `json:"type"`
					} `json:"properties"`
					Required []string `json:"required"`
				} `json:"items"`
			} `json:"memories"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(llm.ReplySchema, &schema); err != nil {
		t.Fatal(err)
	}
	enum := schema.Properties.Memories.Items.Properties.Type.Enum
	for _, typ := range engram.MemoryTypes() {
		if !strings.Contains(strings.Join(enum, ","), typ) || !strings.Contains(llm.SystemPrompt, `"`+typ+`"`) {
			t.Errorf("memory type %q missing from the schema's enum %q or the prompt", typ, enum)
		}
	}
	if len(enum) != len(engram.MemoryTypes()) {
		t.Errorf("schema enum %q, memory types %q", enum, engram.MemoryTypes())
	}
	turns := conversation(2)
	turns[1].Speaker, turns[1].Role = "", engram.RoleAssistant
	turns[0].Content = "line one\n\nline   two " + strings.Repeat("x", 3000)
	msgs := llm.Prompt([]*engram.Turn{&turns[0], &turns[1]}, false)
	if len(msgs) != 2 || msgs[0].Role != "system" || msgs[0].Content != llm.SystemPrompt || msgs[1].Role != "user" {
		t.Fatalf("messages %+v", msgs)
	}
	user := msgs[1].Content
	for _, want := range []string{"[1] 2026-05-01 Alice (user): line one line two xxx", "…\n[2] 2026-05-01 assistant: Note 2"} {
		if !strings.Contains(user, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, user)
		}
	}
	if again := llm.Prompt([]*engram.Turn{&turns[0], &turns[1]}, true); again[1].Content != user+llm.RetryReminder {
		t.Error("a retry must add the reminder")
	}
}
