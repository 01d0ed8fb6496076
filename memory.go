package engram

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"time"
)

// Memory types of the L1 layer.
const (
	MemoryFact       = "fact"
	MemoryDecision   = "decision"
	MemoryPreference = "preference"
	MemoryPlan       = "plan" // plans and todos
	MemoryEvent      = "event"
)

// Memory is an L1 semantic memory extracted from turns: a fact, a decision
// (with its rationale), a preference, a plan or an event, with the turns it
// stems from.
type Memory struct {
	ID         string    `json:"id"`
	Namespace  string    `json:"namespace"`
	Type       string    `json:"type"`
	Text       string    `json:"text"`
	Rationale  string    `json:"rationale,omitempty"` // why, for decisions
	Subject    string    `json:"subject,omitempty"`   // who it is about (a speaker or an entity)
	Entities   []string  `json:"entities,omitempty"`
	Importance float64   `json:"importance"` // 0..1
	TS         time.Time `json:"ts"`         // when it was said
	ValidFrom  time.Time `json:"valid_from,omitzero"`
	Sources    []string  `json:"sources"` // turn ids
	// Relation, when set, is the memory as a knowledge-graph triple; the
	// L4 worker adds it to the graph.
	Relation *Relation `json:"relation,omitempty"`
	// SupersededBy names the newer memory that replaced this one.
	SupersededBy string `json:"superseded_by,omitempty"`
	// Wrong says a correction marked the memory wrong: readers leave it
	// out, and the persona and the graph do not use it.
	Wrong bool `json:"wrong,omitempty"`
	// Corrected, when set, is the id of the correction that set the
	// memory's text or relation; Extracted is the text extraction produced.
	Corrected string `json:"corrected,omitempty"`
	Extracted string `json:"extracted_text,omitempty"`
	// Seq is the memory's change number in the palace: it grows with every
	// insert or update, so workers that read memories keep a watermark on it.
	Seq int64 `json:"seq,omitempty"`
}

// Active reports whether the memory stands: neither superseded nor marked
// wrong.
func (m Memory) Active() bool { return m.SupersededBy == "" && !m.Wrong }

// SearchText is what a keyword index holds of the memory: its text,
// rationale and entities, a line each (the same in every palace).
func (m Memory) SearchText() string {
	parts := []string{m.Text}
	if m.Rationale != "" {
		parts = append(parts, m.Rationale)
	}
	parts = append(parts, m.Entities...)
	return strings.Join(parts, "\n")
}

// Relation is a (subject, predicate, object) statement. Predicates are
// snake_case verbs ("lives_in", "works_at", "likes", "uses"); single-valued
// ones (SingleValued) hold one object at a time, so a new object closes the
// old one.
type Relation struct {
	Subject   string `json:"subject"`
	Predicate string `json:"predicate"`
	Object    string `json:"object"`
}

// singleValued are the predicates whose subject has one object at a time.
var singleValued = map[string]bool{
	"name": true, "lives_in": true, "works_at": true, "works_as": true, "is_from": true, "born_in": true, "age": true,
	"job": true, "role": true, "status": true, "uses": false, "likes": false, "dislikes": false,
	"relationship_status": true, "married_to": true, "partner": true, "favourite": true,
}

// AliasPredicate reports whether a triple (X, predicate, Y) makes Y another
// name of X: the graph resolves Y to X's entity, and recall counts a person
// named by Y as named.
func AliasPredicate(predicate string) bool {
	return predicate == "name" || predicate == "alias" || predicate == "also_known_as"
}

// SingleValued reports whether a predicate holds one object at a time. A
// predicate starting "favourite_" (favourite_book) is single-valued, as are
// "uses_for_*" (uses_for_database: the chosen tool for a purpose).
func SingleValued(predicate string) bool {
	if singleValued[predicate] {
		return true
	}
	return strings.HasPrefix(predicate, "favourite_") || strings.HasPrefix(predicate, "uses_for_")
}

// ErrUnusableOutput is matched (errors.Is) by the errors of an Extractor
// whose model answered, but with output that stayed unusable after its
// repairs and retries: the batch cannot be extracted, and trying again will
// not help. Workers record such a batch as skipped and go on; any other
// error (a server down) is retried later.
var ErrUnusableOutput = errors.New("extractor output unusable")

// Extractor turns a batch of turns into L1 memories. Implementations: the
// offline rules extractor (package pipeline) and an Ollama LLM.
type Extractor interface {
	Extract(ctx context.Context, turns []Turn) ([]Memory, error)
}

// MemoryID is the ID extractors give a memory: "mem-" and the first 20 hex
// digits of the SHA-256 of what makes a memory the same (namespace, type,
// text and source turn), so that extracting the same turn again gives the
// same memory.
func MemoryID(namespace, typ, text, source string) string {
	h := sha256.New()
	for _, s := range []string{namespace, typ, text, source} {
		h.Write([]byte(s))
		h.Write([]byte{'|'})
	}
	return "mem-" + hex.EncodeToString(h.Sum(nil))[:20]
}
