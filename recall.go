package engram

import (
	"encoding/json"
	"time"
)

// Recall modes. auto picks the best mode available for a query (shallow
// while the deep path does not exist yet); shallow is embed-the-query then
// vector search; keyword is BM25 over the full-text indexes.
const (
	ModeAuto    = "auto"
	ModeShallow = "shallow"
	ModeKeyword = "keyword"
)

// Result kinds.
const (
	KindTurn = "turn"
)

// RecallRequest is a recall query. Zero values mean the defaults.
type RecallRequest struct {
	Namespace string `json:"namespace,omitempty"`
	Query     string `json:"query"`
	K         int    `json:"k,omitempty"`
	Mode      string `json:"mode,omitempty"`
}

// Recall limits and defaults.
const (
	DefaultK      = 10
	MaxK          = 200
	MaxQueryBytes = 4096
)

// Source is an archived turn a result stems from, with the turn's meta
// returned unchanged.
type Source struct {
	ID      string          `json:"id"`
	Session string          `json:"session"`
	TS      time.Time       `json:"ts"`
	Meta    json.RawMessage `json:"meta,omitempty"`
}

// Result is one recalled item. Every result carries Sources: the archived
// turns it stems from (a turn lists itself). Clients rely on this contract:
// fields are added, never removed or renamed.
type Result struct {
	ID        string          `json:"id"`
	Kind      string          `json:"kind"`
	Text      string          `json:"text"`
	Score     float64         `json:"score"`
	TS        time.Time       `json:"ts"`
	Namespace string          `json:"namespace"`
	Session   string          `json:"session"`
	Role      Role            `json:"role,omitempty"`
	Speaker   string          `json:"speaker,omitempty"`
	Meta      json.RawMessage `json:"meta,omitempty"`
	Sources   []Source        `json:"sources"`
}

// RecallResponse is what recall returns: the mode that ran, the results in
// rank order, and how long it took. Warnings tell the caller when recall ran
// degraded (an index lagging behind the archive, say).
type RecallResponse struct {
	Mode     string   `json:"mode"`
	Results  []Result `json:"results"`
	TookMS   float64  `json:"took_ms"`
	Warnings []string `json:"warnings,omitempty"`
}

// TurnResult returns the recall result for a single turn, which is its own
// source.
func TurnResult(t Turn, score float64) Result {
	return Result{
		ID:        t.ID,
		Kind:      KindTurn,
		Text:      t.Content,
		Score:     score,
		TS:        t.TS,
		Namespace: t.Namespace,
		Session:   t.Session,
		Role:      t.Role,
		Speaker:   t.Speaker,
		Meta:      t.Meta,
		Sources:   []Source{{ID: t.ID, Session: t.Session, TS: t.TS, Meta: t.Meta}},
	}
}
