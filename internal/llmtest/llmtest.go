// Package llmtest holds what the tests of the LLM extractors (packages
// ollama and openai) and of their protocol (package llm, from the external
// test package llm_test) share: a conversation to send and the check of a
// memory read from a model's reply. Only tests import it.
package llmtest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/llm"
)

// Day is when the turns of Conversation start.
var Day = time.Date(2026, 5, 1, 14, 3, 0, 0, time.UTC)

// Conversation returns n user turns t1..tn by Alice, one a minute from Day.
func Conversation(n int) []engram.Turn {
	out := make([]engram.Turn, n)
	for i := range out {
		out[i] = engram.Turn{ID: fmt.Sprintf("t%d", i+1), Namespace: "work", Session: "s1", Role: engram.RoleUser,
			Speaker: "Alice", Content: fmt.Sprintf("Note %d: we moved the weekly sync to room %d.", i+1, i%7), TS: Day.Add(time.Duration(i) * time.Minute)}
	}
	return out
}

// CheckMemory fails the test unless m is a memory an LLM extractor may
// return for turns: one source among them, not a tool's or the system's,
// the id of engram.MemoryID, the turn's namespace and time, a valid_from
// no later than it, a known type, text and subject, importance in 0..1, a
// snake_case relation and at most llm.MaxEntities entities.
func CheckMemory(tb testing.TB, m engram.Memory, turns []engram.Turn) {
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
	if r := m.Relation; r != nil && (r.Subject == "" || r.Object == "" || r.Predicate == "" || llm.SnakeCase(r.Predicate) != r.Predicate) {
		tb.Fatalf("memory %+v: bad relation %+v", m, *r)
	}
	if len(m.Entities) > llm.MaxEntities || slices.Contains(m.Entities, "") {
		tb.Fatalf("memory %+v: bad entities %q", m, m.Entities)
	}
}
