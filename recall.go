package engram

import (
	"encoding/json"
	"time"
)

// Recall modes. auto runs deep when the query holds a trigger phrase ("do
// you remember", "认真回忆", "覚えてる") and hybrid otherwise; hybrid fuses
// BM25 and vector search of single turns with the evidence of their
// sessions; shallow is embed-the-query then vector search; deep fuses vector
// search, BM25, session, scene and neighbour context, the derived layers and
// time decay; keyword is BM25 alone.
const (
	ModeAuto    = "auto"
	ModeHybrid  = "hybrid"
	ModeShallow = "shallow"
	ModeDeep    = "deep"
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
	// AsOf answers as of that moment: only turns dated (TS) at or before it
	// count, and relative times in the query ("last week") resolve against
	// it. Zero means now.
	AsOf time.Time `json:"as_of,omitzero"`
	// BudgetTokens, when positive, asks for a packed context block of at
	// most that many tokens (estimated) in the response.
	BudgetTokens int `json:"budget_tokens,omitempty"`
	// Kinds are the kinds of results wanted: KindTurn and KindDoc (the
	// default), KindMemory, KindScene, KindFact, KindPersona. Layer results carry the turns they
	// stem from as their sources.
	Kinds []string `json:"kinds,omitempty"`
}

// Wants reports whether the request asks for results of kind. The default
// is turns and, where vaults are indexed, document chunks.
func (r RecallRequest) Wants(kind string) bool {
	if len(r.Kinds) == 0 {
		return kind == KindTurn || kind == KindDoc
	}
	for _, k := range r.Kinds {
		if k == kind {
			return true
		}
	}
	return false
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
	// Path and Lines name the file and line range of a document source
	// (a vault chunk) instead of a turn.
	Path  string `json:"path,omitempty"`
	Lines string `json:"lines,omitempty"` // "12-30"
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
	// Signals says why a deep result ranked where it did.
	Signals *Signals `json:"signals,omitempty"`
	// Context holds the turns around a deep hit, in time order, the hit
	// itself excluded.
	Context []ContextTurn `json:"context,omitempty"`
	// Doc places a result of kind doc in its file.
	Doc *DocRef `json:"doc,omitempty"`
	// SessionStart is when the result's session began (its first turn):
	// the day a conversation's relative times are read against.
	SessionStart time.Time `json:"session_start,omitzero"`
	// Times are the expressions of time in the text resolved against when
	// it was said: "last week", said on 2023-05-08, is 2023-05-01 to
	// 2023-05-08 (To exclusive), so an agent can answer "when did...".
	Times []TimeRange `json:"times,omitempty"`
}

// Signals are the normalised scores deep recall fused for a result.
type Signals struct {
	Vector    float64 `json:"vector"`    // cosine similarity, min-max normalised over the candidates
	BM25      float64 `json:"bm25"`      // BM25, divided by the best candidate's
	Session   float64 `json:"session"`   // the evidence of the result's session as a whole (its text by BM25 and vector)
	Scene     float64 `json:"scene"`     // the evidence of the result's scene as a whole
	Neighbour float64 `json:"neighbour"` // the best adjacent turn's relevance
	Layer     float64 `json:"layer"`     // the best memory or scene citing the turn, divided by the best match's
	KG        float64 `json:"kg"`        // confidence of the best knowledge-graph triple about a queried entity citing the turn
	Persona   float64 `json:"persona"`   // 1 when a persona facet of the set the query asks for ("What are Kate's hobbies?") cites the turn
	Speaker   float64 `json:"speaker"`   // 1 when the query names the result's speaker
	Decay     float64 `json:"decay"`     // time decay by the turn's age at as_of
	InRange   bool    `json:"in_range,omitempty"`
	Final     float64 `json:"final"`
}

// ContextTurn is a turn shown around a hit.
type ContextTurn struct {
	ID      string    `json:"id"`
	Speaker string    `json:"speaker,omitempty"`
	Role    Role      `json:"role"`
	Text    string    `json:"text"`
	TS      time.Time `json:"ts"`
}

// RecallResponse is what recall returns: the mode that ran, the results in
// rank order, and how long it took. Warnings tell the caller when recall ran
// degraded (an index lagging behind the archive, say).
type RecallResponse struct {
	Mode     string   `json:"mode"`
	Results  []Result `json:"results"`
	TookMS   float64  `json:"took_ms"`
	Warnings []string `json:"warnings,omitempty"`
	// Trigger is the phrase that made auto run deep, removed from the
	// search text.
	Trigger string `json:"trigger,omitempty"`
	// TimeRange is the period a temporal expression in the query named.
	TimeRange *TimeRange `json:"time_range,omitempty"`
	// Context is the packed block for BudgetTokens, ContextTokens its
	// estimated size.
	Context       string `json:"context,omitempty"`
	ContextTokens int    `json:"context_tokens,omitempty"`
}

// TimeRange is a period [From, To) named in a query by Expr.
type TimeRange struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	Expr string    `json:"expr"`
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
