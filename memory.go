package engram

import (
	"context"
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
	// SupersededBy names the newer memory that replaced this one.
	SupersededBy string `json:"superseded_by,omitempty"`
}

// Extractor turns a batch of turns into L1 memories. Implementations: the
// offline rules extractor (package pipeline) and an Ollama LLM.
type Extractor interface {
	Extract(ctx context.Context, turns []Turn) ([]Memory, error)
}
