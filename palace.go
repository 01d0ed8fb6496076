package engram

import (
	"context"
	"fmt"
	"time"
)

// The interfaces below are what the engine asks of a palace besides
// TurnIndex, UnitIndex, LayerStore, LayerIndex, LayerService and
// BrowseService: reading turns by id and seq, rewriting them (forget,
// redact), the corrections, the watermarks of the jobs and the in-memory
// keyword indexes. Package palace (SQLite) implements all of them; they
// are the seam a palace on another database implements
// (docs/architecture.md, "The palace's seam").

// TurnLookup reads the palace's turns by id, seq and session.
type TurnLookup interface {
	// TurnSeqs returns the seq of each stored turn of ids; ids not stored
	// are absent.
	TurnSeqs(ctx context.Context, ids []string) (map[string]int64, error)
	// TurnIDs returns the ids of the stored turns of namespace (every
	// namespace when ""), of session only when it is set, in seq order.
	TurnIDs(ctx context.Context, namespace, session string) ([]string, error)
	// TurnIDsHolding returns the ids of the stored turns of namespace and
	// session ("" for every one) whose content, speaker or meta holds one
	// of texts, in seq order; with everywhere, a text in a turn's id,
	// namespace or session finds it too.
	TurnIDsHolding(ctx context.Context, namespace, session string, texts []string, everywhere bool) ([]string, error)
	// TurnAt returns the stored turn of seq; false when none is.
	TurnAt(ctx context.Context, seq int64) (Turn, bool, error)
	// CountTurns counts a namespace's stored turns, every namespace's
	// when namespace is "".
	CountTurns(ctx context.Context, namespace string) (int64, error)
	// TurnSkips counts the archived turns PutTurns did not store and
	// returns the latest limit of them (every one when limit < 0).
	TurnSkips(ctx context.Context, limit int) (TurnSkips, error)
}

// TurnSkip is an archived turn the palace did not store, and why.
type TurnSkip struct {
	Seq       int64     `json:"seq"`
	ID        string    `json:"id"`
	Reason    string    `json:"reason"`
	StoredSeq int64     `json:"stored_seq,omitempty"` // a duplicate's: the seq the palace holds its id under
	At        time.Time `json:"at"`
}

// String describes s for a person: "seq 4 (id "b2"): id "b2" is stored
// under seq 2".
func (s TurnSkip) String() string {
	return fmt.Sprintf("seq %d (id %q): %s", s.Seq, s.ID, s.Reason)
}

// TurnSkips counts the archived turns the palace skipped.
type TurnSkips struct {
	Count int64 // every skip
	// Lost counts the skipped turns the palace holds no copy of (a time it
	// cannot store): missing from recall, unlike a duplicate id.
	Lost   int64
	Latest []TurnSkip // the latest skips, highest seq first
}

// TurnRewriter takes forgotten and redacted turns out of every copy the
// palace made of them.
type TurnRewriter interface {
	// ForgetTurns removes the turns and everything derived only from them
	// in one transaction, and records their ids so that they are never
	// stored again (package palace documents each table it reaches).
	ForgetTurns(ctx context.Context, turns []ForgetTurn, at time.Time, remake SceneRemaker) (ForgetResult, error)
	// ForgottenIDs says which of ids the palace recorded as forgotten.
	ForgottenIDs(ctx context.Context, ids []string) (map[string]bool, error)
	// ForgottenLeft returns up to limit forgotten ids some index of the
	// palace still holds, with where (what engram doctor checks: none
	// should).
	ForgottenLeft(ctx context.Context, limit int) ([]string, error)
	// RedactTurns stores the redacted turns and replaces every span of
	// spans by marker wherever the palace copied their text.
	RedactTurns(ctx context.Context, turns []Turn, spans []string, marker string) (RedactResult, error)
	// CatchUpKeywordIndexes brings the loaded keyword indexes of the
	// units, scenes and memories up to the palace in the caller's
	// goroutine (after the layer jobs' run and after a rewrite).
	CatchUpKeywordIndexes(ctx context.Context) error
}

// ForgetTurn names a forgotten turn: its id and the archive's seq of its
// tombstone.
type ForgetTurn struct {
	ID  string
	Seq int64
}

// ForgetResult says what ForgetTurns removed from the palace.
type ForgetResult struct {
	Turns        int // turn rows deleted
	Memories     int // memories deleted: every source was forgotten
	MemoriesKept int // memories that lost some sources and kept others
	Scenes       int // scenes deleted
	ScenesRemade int // scenes made again of the deleted scenes' other turns
	Facts        int // knowledge-graph statements deleted or changed
	Facets       int // persona facets deleted or changed
	Units        int // retrieval units deleted or re-indexed
	// Removed are the ids of every item deleted whose vectors (of any
	// model) went with it, for an external index to delete too: the turns,
	// memories, scenes, units and triples.
	Removed []string
}

// SceneRemaker groups the turns left of a scene that a forget deleted
// into scenes again (pipeline.SceneConfig.Regroup), in seq order; open says
// that the deleted scene was its session's open one, whose draft the last
// write must carry for the scene job to go on with it.
type SceneRemaker func(turns []Turn, open bool) ([]SceneWrite, error)

// RedactResult says what RedactTurns changed.
type RedactResult struct {
	Turns, Memories, Scenes, Facets, Units int
	// Entities counts the graph entities renamed, or deleted when nothing
	// named them.
	Entities int
	// Removed are the ids of the vectors deleted (of every model): the
	// turns' own, to be embedded again from the redacted text, and those
	// of the units holding them and of the triples naming a renamed
	// entity, which their vector jobs make again.
	Removed []string
	// TurnVectors maps each vector model to the redacted turns whose
	// vectors of it were deleted, for the caller to embed them again.
	// Their watermarks (embedded_seq) are moved back before the first of
	// them, so that the model's next catch-up embeds them, should the
	// caller not (a crash, an embedder down); Watermarks holds the ones
	// they had, which PutTurnVectors restores with the new vectors.
	TurnVectors map[string][]string
	Watermarks  map[string]int64
}

// CorrectionStore keeps the corrections applied to the layers.
type CorrectionStore interface {
	// ApplyCorrections records the corrections not held yet (by id, in
	// order), applies each to what it names and returns how many were
	// new; one whose memory or fact is not held yet is applied when
	// extraction writes it.
	ApplyCorrections(ctx context.Context, cs []Correction) (int, error)
	// DropCorrections deletes the corrections of ids (what they corrected
	// was forgotten) and leaves no trace of their text.
	DropCorrections(ctx context.Context, ids []string) error
	// CorrectionIDs lists the ids of the corrections held, in the order
	// they were given.
	CorrectionIDs(ctx context.Context) ([]string, error)
	// MemoryToCorrect returns the memory of id with the text extraction
	// gave it; ENOTFOUND when none.
	MemoryToCorrect(ctx context.Context, id string) (Memory, error)
	// FactToCorrect returns the triple of id as a correction names it,
	// its key and the memories behind it; ENOTFOUND when none.
	FactToCorrect(ctx context.Context, id string) (Triple, string, []string, error)
	// ResetPersonas deletes every persona facet and the watermark of
	// worker, which then folds every memory again.
	ResetPersonas(ctx context.Context, worker string) error
}

// WorkerMarks keeps the watermarks of the jobs and the ranges they gave
// up on.
type WorkerMarks interface {
	// WorkerSeq returns the worker's watermark, 0 if it never ran.
	WorkerSeq(ctx context.Context, worker string) (int64, error)
	// SetWorkerSeq sets a worker's watermark (it never moves back).
	SetWorkerSeq(ctx context.Context, worker string, seq int64) error
	// ResetWorkerSeqs deletes the watermark of every worker whose name
	// starts with prefix and returns how many it deleted.
	ResetWorkerSeqs(ctx context.Context, prefix string) (int64, error)
	// Skips lists the ranges workers skipped, newest first, at most limit.
	Skips(ctx context.Context, limit int) ([]Skipped, error)
}

// Skipped is a source range a worker skipped.
type Skipped struct {
	Worker   string    `json:"worker"`
	From, To int64     `json:"-"`
	Error    string    `json:"error"`
	At       time.Time `json:"at"`
}

// KeywordIndexes are a palace's in-memory keyword indexes.
type KeywordIndexes interface {
	// LoadKeywordIndex builds them if they are not loaded and keeps them
	// current from then on.
	LoadKeywordIndex(ctx context.Context) error
	// WarmKeywordIndex starts loading them in the background.
	WarmKeywordIndex()
	// KeywordIndexStates reports the warm indexes' states by what they
	// index ("turns", "units", ...); nil when none is warm.
	KeywordIndexStates() map[string]string
}

// BadVector is a stored vector that cannot be used: its bytes are not the
// model's dimension, or it holds a NaN, an infinity or only zeros. Load
// refuses a model with one, so vector recall stays off until it is dropped
// (the vector store's DropBad) and its text embedded again.
type BadVector struct {
	ID     string
	Kind   string
	Reason string
}

// String formats b as "id (kind): reason".
func (b BadVector) String() string {
	return fmt.Sprintf("%s (%s): %s", b.ID, b.Kind, b.Reason)
}

// VectorCheck is what a check of a model's stored vectors found (engram
// doctor): the rows, their use, and the in-memory index against them.
type VectorCheck struct {
	Model       string
	Dim         int
	State       string         // "active", "building" or "retired"
	EmbeddedSeq int64          // the turn watermark
	LastChange  int64          // the newest change number
	SyncedSeq   int64          // the change number an external index has seen
	Stored      int            // rows of the model stored
	ByKind      map[string]int // the rows by kind
	Bad         int            // unusable rows
	BadSample   []BadVector    // the first few of them
	Loaded      bool           // an in-memory index is attached (loaded)
	InMemory    int            // its rows, when loaded
	OnlyInStore int            // stored rows the matrix lacks, when loaded
	OnlyInMem   int            // rows of the matrix not stored, when loaded
	Differ      int            // rows whose matrix copy is not the stored vector, when loaded
	Missing     int64          // turns up to the check's seq with no vector
	MissingIDs  []string       // the first few of them
	Orphans     int64          // turn vectors whose turn is not in the palace
}
