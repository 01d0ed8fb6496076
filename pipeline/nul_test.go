package pipeline

import (
	"strings"
	"testing"

	engram "github.com/engram-dev/engram"
)

// TestNUL: the extractor reads turns without their NUL bytes (the turns
// themselves are left as sent), and what it wrote is stored without any.
func TestNUL(t *testing.T) {
	turns := []engram.Turn{{ID: "t1", Content: "Lis\x00bon", Speaker: "Ana"}}
	got := extractable(turns)
	if got[0].Content != "Lisbon" || turns[0].Content != "Lis\x00bon" {
		t.Errorf("extractable: %q (the turn: %q); want the copy without NUL, the turn as sent", got[0].Content, turns[0].Content)
	}
	mems := []engram.Memory{{Text: "a\x00b", Rationale: "\x00", Subject: "A\x00na", Type: "fact\x00", Entities: []string{"Lis\x00bon"},
		Relation: &engram.Relation{Subject: "A\x00na", Predicate: "lives\x00_in", Object: "Lis\x00bon"}}}
	withoutNUL(mems)
	m := mems[0]
	for _, s := range []string{m.Text, m.Rationale, m.Subject, m.Type, m.Entities[0], m.Relation.Subject, m.Relation.Predicate, m.Relation.Object} {
		if strings.Contains(s, "\x00") {
			t.Errorf("a NUL left in %q: %+v %+v", s, m, *m.Relation)
		}
	}
	if m.Text != "ab" || m.Relation.Predicate != "lives_in" {
		t.Errorf("text %q, predicate %q; want only the NUL bytes taken out", m.Text, m.Relation.Predicate)
	}
}
