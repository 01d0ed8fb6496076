package engram

import (
	"context"
	"time"
)

// Appended reports what the archive did with one turn of an Append call.
type Appended struct {
	ID        string `json:"id"`
	Seq       int64  `json:"seq"`
	Duplicate bool   `json:"duplicate,omitempty"` // the id was archived before; nothing was written
	// Forgotten says that the duplicate's id was forgotten: nothing was
	// written, and recall does not know it (send it with resurrect to
	// archive it again).
	Forgotten bool `json:"forgotten,omitempty"`
}

// Archive is the append-only L0 log of turns, the source every other index
// is rebuilt from.
type Archive interface {
	// Append assigns ids (where missing), sequence numbers and receive times,
	// writes the turns and returns only after they are on stable storage.
	// A turn whose id is already archived is not written again. Append
	// returns ENOSPACE when the disk is full and EUNAVAILABLE once closed.
	Append(ctx context.Context, turns []Turn) ([]Appended, error)
	// Stream calls fn for every archived turn with Seq > afterSeq, in Seq
	// order, and stops at the first error fn returns.
	Stream(ctx context.Context, afterSeq int64, fn func(Turn) error) error
	// ScanTime calls fn for every turn whose TS lies in [from, to), in Seq order.
	ScanTime(ctx context.Context, from, to time.Time, fn func(Turn) error) error
	// LastSeq returns the highest sequence number archived so far.
	LastSeq() int64
	// Close flushes and releases the archive and its lock.
	Close() error
}

// TextQuery asks a full-text index for the best matches of Text.
type TextQuery struct {
	Namespace string // "" searches every namespace
	Text      string
	Limit     int
	// From and To, when set, keep turns whose TS lies in [From, To).
	From, To time.Time
}

// TurnHit is a turn found by a search, with its score (higher is better).
type TurnHit struct {
	Turn  Turn
	Score float64
}

// TurnIndex is the palace's table of turns: a derived, rebuildable copy of
// the archive with full-text search.
type TurnIndex interface {
	// PutTurns stores turns; a turn already stored (same Seq) is left as is.
	PutTurns(ctx context.Context, turns []Turn) error
	// IndexedSeq returns the highest Seq up to which every archived turn is
	// stored (the indexer's watermark).
	IndexedSeq(ctx context.Context) (int64, error)
	// GetTurns returns the stored turns with the given ids, in the order of
	// ids; ids not stored are skipped.
	GetTurns(ctx context.Context, ids []string) ([]Turn, error)
	// SearchTurns runs a keyword (BM25) search.
	SearchTurns(ctx context.Context, q TextQuery) ([]TurnHit, error)
	// TurnsAround returns, for each turn of ts, up to n turns of its
	// session on each side of it, in time order: the context of hits, read
	// together.
	TurnsAround(ctx context.Context, ts []Turn, n int) ([]Around, error)
	// Stats counts what is stored, per namespace and layer.
	Stats(ctx context.Context) (Stats, error)
}

// Around is the context of a turn: turns of its session before it and
// after it, each in time order.
type Around struct {
	Before, After []Turn
}

// Stats counts stored items: Layers[namespace][layer] = count. The layer of
// turns is "turns"; later layers add "memories", "scenes" and so on.
type Stats struct {
	Layers  map[string]map[string]int64 `json:"namespaces"`
	Archive ArchiveStats                `json:"archive"`
}

// ArchiveStats describes the L0 archive.
type ArchiveStats struct {
	Turns    int64 `json:"turns"`
	LastSeq  int64 `json:"last_seq"`
	Files    int   `json:"files"`
	Bytes    int64 `json:"bytes"`
	Corrupt  int64 `json:"corrupt_lines,omitempty"`
	IndexLag int64 `json:"index_lag"`
	// Forgotten counts the tombstones of forgotten turns, Redacted the
	// turns whose content was redacted; Secrets counts the spans the ingest
	// filter replaced, by rule.
	Forgotten int64            `json:"forgotten,omitempty"`
	Redacted  int64            `json:"redacted_turns,omitempty"`
	Secrets   map[string]int64 `json:"secrets_redacted,omitempty"`
}
