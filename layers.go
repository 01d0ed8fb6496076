package engram

import (
	"context"
	"strings"
	"time"
)

// Kinds of layer results, beside KindTurn.
const (
	KindMemory  = "memory"  // an L1 memory
	KindScene   = "scene"   // an L2 scene
	KindFact    = "fact"    // an L4 knowledge-graph triple
	KindPersona = "persona" // a facet of an L3 persona
)

// Scene is an L2 scene: consecutive turns of one session that belong
// together (no long pause, no change of topic), with a title, a summary and
// the turns it holds (its sources).
type Scene struct {
	ID           string    `json:"id"`
	Namespace    string    `json:"namespace"`
	Session      string    `json:"session"`
	Title        string    `json:"title"`
	Summary      string    `json:"summary"`
	Start        time.Time `json:"start"`
	End          time.Time `json:"end"`
	Participants []string  `json:"participants"`
	Turns        []string  `json:"turns"` // turn ids, in order
	// Seq is the scene's change number in the palace (see Memory.Seq).
	Seq int64 `json:"seq,omitempty"`
}

// SearchText is what a keyword index holds of the scene: its title,
// summary and participants, a line each (the same in every palace, so
// that each ranks a scene alike).
func (s Scene) SearchText() string {
	return s.Title + "\n" + s.Summary + "\n" + strings.Join(s.Participants, " ")
}

// Check reports a scene no palace stores: EINVALID naming the field
// (prefix is its path, "scenes[2].") for one without id, namespace or
// turns.
func (s Scene) Check(prefix string) error {
	switch {
	case s.ID == "":
		return FieldError(prefix+"id", "id is required")
	case s.Namespace == "":
		return FieldError(prefix+"namespace", "namespace is required")
	case len(s.Turns) == 0:
		return FieldError(prefix+"turns", "a scene needs at least one turn")
	}
	return nil
}

// Persona facets.
const (
	FacetIdentity     = "identity"
	FacetPreference   = "preference"
	FacetRelationship = "relationship"
	FacetProject      = "project"
	FacetHabit        = "habit"
	// Facets of the actions a speaker tells of (see extract.MemoryFacet):
	// what they do (played, practised), where they went (a place by name),
	// what they got or own, and what they plan.
	FacetActivity   = "activity"
	FacetPlace      = "place"
	FacetPossession = "possession"
	FacetPlan       = "plan"
	// FacetHealth is a condition a speaker tells of having had (an
	// illness, a pain, an injury), read from a memory's words.
	FacetHealth = "health"
	// FacetPet is an animal of the speaker's: named (a dog, a cat) or
	// adopted or bought.
	FacetPet = "pet"
)

// Persona is the L3 profile of one speaker in one namespace.
type Persona struct {
	Namespace string         `json:"namespace"`
	Speaker   string         `json:"speaker"`
	Facets    []PersonaFacet `json:"facets"`
	Updated   time.Time      `json:"updated"`
}

// PersonaFacet is one thing known about a speaker: its kind (FacetIdentity
// and so on), a key within the kind ("lives_in", "likes:jazz") and the
// current value, with the turns that say so and the history of values.
type PersonaFacet struct {
	Facet    string        `json:"facet"`
	Key      string        `json:"key"`
	Value    string        `json:"value"`
	Since    time.Time     `json:"since"`
	Evidence []string      `json:"evidence"` // turn ids
	History  []FacetChange `json:"history,omitempty"`
}

// FacetChange is a past value of a facet, valid in [From, To).
type FacetChange struct {
	Value    string    `json:"value"`
	From     time.Time `json:"from"`
	To       time.Time `json:"to"`
	Evidence []string  `json:"evidence"`
}

// Triple is an L4 knowledge-graph statement, valid from ValidFrom until
// ValidTo (zero: still valid), with the turns it stems from.
type Triple struct {
	ID         string    `json:"id"`
	Namespace  string    `json:"namespace"`
	Subject    string    `json:"subject"`
	Predicate  string    `json:"predicate"`
	Object     string    `json:"object"`
	ValidFrom  time.Time `json:"valid_from"`
	ValidTo    time.Time `json:"valid_to,omitzero"`
	Confidence float64   `json:"confidence"`
	Sources    []string  `json:"sources"` // turn ids
	Memory     string    `json:"memory,omitempty"`
	// Seq is the triple's change number in the palace (see Memory.Seq).
	Seq int64 `json:"seq,omitempty"`
}

// Sentence reads the triple as a sentence: "Alice lives in Lisbon", "Bob
// uses Postgres for billing service", "Bob's favourite book is Dune".
func (tr Triple) Sentence() string {
	words := func(s string) string { return strings.ReplaceAll(s, "_", " ") }
	switch {
	case strings.HasPrefix(tr.Predicate, "uses_for_"):
		return tr.Subject + " uses " + tr.Object + " for " + words(strings.TrimPrefix(tr.Predicate, "uses_for_"))
	case strings.HasPrefix(tr.Predicate, "favourite_"):
		return tr.Subject + "'s favourite " + words(strings.TrimPrefix(tr.Predicate, "favourite_")) + " is " + tr.Object
	}
	return tr.Subject + " " + words(tr.Predicate) + " " + tr.Object
}

// ValidAt reports whether the triple holds at t.
func (tr Triple) ValidAt(t time.Time) bool {
	return !tr.ValidFrom.After(t) && (tr.ValidTo.IsZero() || tr.ValidTo.After(t))
}

// Entity is a node of the knowledge graph: a canonical name and the other
// names it was mentioned by.
type Entity struct {
	Namespace string   `json:"namespace"`
	Name      string   `json:"name"`
	Aliases   []string `json:"aliases,omitempty"`
}

// MemoryQuery filters memories. Zero fields do not filter.
type MemoryQuery struct {
	Namespace string
	Type      string
	Subject   string
	Text      string // a keyword search (BM25) when set
	// Superseded includes memories a newer one replaced.
	Superseded bool
	// Wrong includes memories a correction marked wrong.
	Wrong    bool
	From, To time.Time // TS in [From, To)
	Limit    int
}

// SceneQuery filters scenes. Zero fields do not filter.
type SceneQuery struct {
	Namespace string
	Session   string
	Text      string
	From, To  time.Time // scenes overlapping [From, To)
	Limit     int
}

// GraphQuery asks the knowledge graph about an entity: its neighbourhood
// (every triple it is the subject or object of), as of a moment (zero: now,
// the currently valid triples), or its whole timeline (every triple, closed
// ones included, in time order).
type GraphQuery struct {
	Namespace string
	Entity    string
	AsOf      time.Time
	Timeline  bool
	Limit     int
}

// GraphResult is the answer to a GraphQuery: the entity as resolved and its
// triples.
type GraphResult struct {
	Entity  Entity   `json:"entity"`
	Triples []Triple `json:"triples"`
}

// LayerService reads the derived layers, for /v1/memories, /v1/scenes,
// /v1/persona and /v1/kg.
type LayerService interface {
	Memories(ctx context.Context, q MemoryQuery) ([]Memory, error)
	Scenes(ctx context.Context, q SceneQuery) ([]Scene, error)
	// Persona returns the profile of speaker, or of every speaker of the
	// namespace when speaker is "".
	Persona(ctx context.Context, namespace, speaker string) ([]Persona, error)
	// Graph answers q; ENOTFOUND when the entity is not in the graph.
	Graph(ctx context.Context, q GraphQuery) (GraphResult, error)
}

// MemoryResult says what a LayerStore did with a batch of memories.
type MemoryResult struct {
	Inserted, Merged, Superseded int
}

// SceneWrite is a scene as the scene worker writes it: Draft is the
// segmenter's state (JSON) while the scene is the open, last one of its
// session, nil once it is closed.
type SceneWrite struct {
	Scene Scene
	Draft []byte
}

// SessionKey names a session within a namespace.
type SessionKey struct{ Namespace, Session string }

// FacetUpdate is one observation of a persona facet: at At, the speaker's
// facet Key had Value, as the turns of Evidence say.
type FacetUpdate struct {
	Namespace, Speaker string
	Facet, Key, Value  string
	At                 time.Time
	Evidence           []string
}

// LayerStore is where the pipeline's layer workers keep their results and
// watermarks (package palace implements it). Every write takes the
// worker's new watermark and applies both in one transaction, so a worker
// killed mid-batch resumes where the last committed batch ended.
type LayerStore interface {
	// WorkerSeq returns the worker's watermark, 0 if it never ran.
	WorkerSeq(ctx context.Context, worker string) (int64, error)
	// Skip records that the worker gave up on the range [from, to] and
	// advances its watermark to to.
	Skip(ctx context.Context, worker string, from, to int64, reason string) error
	// PutMemories stores L1 memories, merging near-duplicates and marking
	// contradicted memories superseded.
	PutMemories(ctx context.Context, worker string, mems []Memory, throughSeq int64) (MemoryResult, error)
	// MemoriesSince returns memories whose change number (Memory.Seq) is
	// above after, in that order.
	MemoriesSince(ctx context.Context, after int64, limit int) ([]Memory, error)
	// MemorySeq returns the highest change number of the memories.
	MemorySeq(ctx context.Context) (int64, error)
	// TriplesSince returns triples whose change number (Triple.Seq) is
	// above after, in that order.
	TriplesSince(ctx context.Context, after int64, limit int) ([]Triple, error)
	// ScenesSince returns scenes whose change number (Scene.Seq) is above
	// after, in that order.
	ScenesSince(ctx context.Context, after int64, limit int) ([]Scene, error)
	// OpenScenes returns the drafts of the sessions' open scenes.
	OpenScenes(ctx context.Context, keys []SessionKey) (map[SessionKey][]byte, error)
	// PutScenes upserts scenes by ID.
	PutScenes(ctx context.Context, worker string, scenes []SceneWrite, throughSeq int64) error
	// ApplyTriples adds triples to the knowledge graph, closing the ones a
	// new value of a single-valued predicate replaces.
	ApplyTriples(ctx context.Context, worker string, triples []Triple, throughSeq int64) error
	// ApplyFacets folds observations into the personas.
	ApplyFacets(ctx context.Context, worker string, updates []FacetUpdate, throughSeq int64) error
}

// MemoryHit is a memory found by a keyword search, with its BM25 score
// (higher is better).
type MemoryHit struct {
	Memory Memory
	Score  float64
}

// SceneHit is a scene found by a keyword search, with its BM25 score.
type SceneHit struct {
	Scene Scene
	Score float64
}

// TripleHit is a knowledge-graph triple found by a keyword search.
type TripleHit struct {
	Triple Triple
	Score  float64
}

// LayerIndex is what deep recall searches in the derived layers.
type LayerIndex interface {
	// SearchMemories ranks active memories by BM25 over their text,
	// rationale and entities.
	SearchMemories(ctx context.Context, q TextQuery) ([]MemoryHit, error)
	// SearchScenes ranks scenes by BM25 over title and summary.
	SearchScenes(ctx context.Context, q TextQuery) ([]SceneHit, error)
	// GetMemories and GetScenes return the items with the given ids, in the
	// order of ids; unknown ids are skipped.
	GetMemories(ctx context.Context, ids []string) ([]Memory, error)
	GetScenes(ctx context.Context, ids []string) ([]Scene, error)
	GetTriples(ctx context.Context, ids []string) ([]Triple, error)
	// SearchTriples ranks the triples valid at asOf by BM25 over their
	// sentence ("Alice lives in Lisbon").
	SearchTriples(ctx context.Context, q TextQuery, asOf time.Time) ([]TripleHit, error)
	// Persona returns the profile of speaker (case-insensitive) in the
	// namespace; none when the namespace has no such speaker.
	Persona(ctx context.Context, namespace, speaker string) ([]Persona, error)
	// EntityTriples returns the triples valid at asOf of the entities the
	// names resolve to (names not in the graph are skipped).
	EntityTriples(ctx context.Context, namespace string, names []string, asOf time.Time, limit int) ([]Triple, error)
}
