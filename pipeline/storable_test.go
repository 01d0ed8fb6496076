package pipeline

import (
	"strings"
	"testing"
	"unicode/utf8"

	engram "github.com/engram-dev/engram"
)

// TestStorable: the extractor reads turns without their NUL bytes (the
// turns themselves are left as sent), and what it wrote is stored without
// any, its text cut and its over-long names left out.
func TestStorable(t *testing.T) {
	turns := []engram.Turn{{ID: "t1", Content: "Lis\x00bon", Speaker: "Ana"}}
	got := extractable(turns)
	if got[0].Content != "Lisbon" || turns[0].Content != "Lis\x00bon" {
		t.Errorf("extractable: %q (the turn: %q); want the copy without NUL, the turn as sent", got[0].Content, turns[0].Content)
	}
	long := strings.Repeat("név ", maxNameBytes)
	mems := []engram.Memory{
		{Text: "a\x00b", Rationale: "\x00", Subject: "A\x00na", Type: "fact\x00", Entities: []string{"Lis\x00bon", long},
			Relation: &engram.Relation{Subject: "A\x00na", Predicate: "lives\x00_in", Object: "Lis\x00bon"}},
		{Text: strings.Repeat("é", maxMemoryText), Subject: long, Relation: &engram.Relation{Subject: "Ana", Predicate: "likes", Object: long}},
		{Text: strings.Repeat("word ", maxMemoryText/4)},
	}
	storable(mems)
	m := mems[0]
	for _, s := range []string{m.Text, m.Rationale, m.Subject, m.Type, m.Entities[0], m.Relation.Subject, m.Relation.Predicate, m.Relation.Object} {
		if strings.Contains(s, "\x00") {
			t.Errorf("a NUL left in %q: %+v %+v", s, m, *m.Relation)
		}
	}
	if m.Text != "ab" || m.Relation.Predicate != "lives_in" || len(m.Entities) != 1 {
		t.Errorf("text %q, predicate %q, entities %q; want only the NUL bytes and the long name taken out", m.Text, m.Relation.Predicate, m.Entities)
	}
	if m := mems[1]; len(m.Text) > maxMemoryText || !utf8.ValidString(m.Text) || m.Subject != "" || m.Relation != nil {
		t.Errorf("a long memory: text of %d bytes (valid %v), subject %q, relation %+v; want the text cut within a character, the long names out",
			len(m.Text), utf8.ValidString(m.Text), m.Subject, m.Relation)
	}
	if m := mems[2]; len(m.Text) > maxMemoryText || strings.HasSuffix(m.Text, " ") || !strings.HasSuffix(m.Text, "word") {
		t.Errorf("a long text cut to %q...; want it cut at a space", m.Text[max(0, len(m.Text)-20):])
	}
}
