package engram

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"
	"unicode/utf8"
)

// Kinds of retrieval units.
const (
	// UnitSession is a part of a session: its turns in arrival order, up to
	// a bound (a long session has several consecutive parts).
	UnitSession = "session"
	// UnitScene is an L2 scene: consecutive turns of a session on one topic.
	UnitScene = "scene"
)

// The vector kinds of retrieval units (their vectors sit in the same index
// as the turns'), one per kind of unit so that a query asks for the ones it
// weighs.
const (
	KindSessionUnit = "unit-session"
	KindSceneUnit   = "unit-scene"
)

// UnitVectorKind returns the vector kind of a unit of kind (UnitSession or
// UnitScene).
func UnitVectorKind(kind string) string {
	if kind == UnitScene {
		return KindSceneUnit
	}
	return KindSessionUnit
}

// Bounds of retrieval units, the same in every palace, so that a session
// is cut into the same parts, with the same ids, in each.
const (
	// UnitMaxTurns and UnitMaxBytes bound a session part: a session longer
	// than that is indexed as consecutive parts, so that extending a
	// session's document costs the same at its 10th turn and its 10,000th.
	UnitMaxTurns = 64
	UnitMaxBytes = 32 << 10
	// UnitTurnBytes is how much of one turn's content its units hold: a
	// pasted log or file is found through the turn itself.
	UnitTurnBytes = 2 << 10
)

// UnitKinds is kind as a list, both kinds for "": what a palace searches
// and scores units of. Errors: EINVALID for an unknown kind.
func UnitKinds(kind string) ([]string, error) {
	switch kind {
	case "":
		return []string{UnitSession, UnitScene}, nil
	case UnitSession, UnitScene:
		return []string{kind}, nil
	}
	return nil, Errorf(EINVALID, "unknown unit kind %q", kind)
}

// UnitID is the id of a unit: of a session part, from the turn it starts
// with; of a scene, from the scene's id.
func UnitID(kind, namespace, session, first string) string {
	prefix := "ses-"
	if kind == UnitScene {
		prefix = "scu-"
	}
	sum := sha256.Sum256([]byte(kind + "|" + namespace + "|" + session + "|" + first))
	return prefix + hex.EncodeToString(sum[:10])
}

// SessionPartIDs are the ids a session part starting with turn first (of
// seq) may take, in order: UnitID's, or, when an older part holds that id
// (first archived again after its forget, while a part it began keeps
// other turns), one made of the turn's id and seq.
func SessionPartIDs(namespace, session, first string, seq int64) [2]string {
	return [2]string{UnitID(UnitSession, namespace, session, first),
		UnitID(UnitSession, namespace, session, first+"@"+strconv.FormatInt(seq, 10))}
}

// UnitTurnSize is what a turn adds to the size a session part counts
// against UnitMaxBytes.
func UnitTurnSize(speaker, content string) int {
	return len(speaker) + 2 + min(len(content), UnitTurnBytes) + 1
}

// UnitLine is a turn's line in its units' text: "speaker: content\n" (the
// role when the turn has no speaker), the content cut to UnitTurnBytes on
// a rune boundary.
func UnitLine(speaker, role, content string) string {
	if speaker == "" {
		speaker = role
	}
	if n := UnitTurnBytes; len(content) > n {
		for n > 0 && !utf8.RuneStart(content[n]) {
			n--
		}
		content = content[:n]
	}
	return speaker + ": " + content + "\n"
}

// Unit is a retrieval unit: a document made of the full text of several
// turns (a session part or a scene) that deep recall scores as a whole, so
// that a turn whose own words miss a question is found through the
// conversation around it. Units are derived from turns and rebuilt with
// them.
type Unit struct {
	ID        string    `json:"id"`
	Kind      string    `json:"kind"` // UnitSession or UnitScene
	Namespace string    `json:"namespace"`
	Session   string    `json:"session"`
	Start     time.Time `json:"start"`
	End       time.Time `json:"end"`
	Turns     int       `json:"turns"` // how many turns it holds
	// Seq is the unit's change number: it takes the next one whenever it is
	// created or grows.
	Seq int64 `json:"seq"`
}

// UnitHit is a unit found by a search, with its score (higher is better).
type UnitHit struct {
	Unit  Unit
	Score float64
}

// UnitScore is the score of a unit for a query, by the unit's id and kind
// (higher is better): what deep recall needs of the units of its
// candidates, without reading them.
type UnitScore struct {
	ID    string
	Kind  string // UnitSession or UnitScene
	Score float64
}

// UnitDoc is a unit with the text that represents it: "speaker: content"
// per turn, each turn clipped, the whole bounded.
type UnitDoc struct {
	Unit
	Text string
}

// UnitIndex finds retrieval units and the turns they hold.
type UnitIndex interface {
	// SearchUnits ranks the units of kind (UnitSession, UnitScene, or ""
	// for both) overlapping [q.From, q.To) by BM25 over their full text.
	SearchUnits(ctx context.Context, q TextQuery, kind string) ([]UnitHit, error)
	// ScoreUnits returns the BM25 of q.Text over the units of ids (of
	// kind, "" for both) that hold a word of it: the same scores as
	// SearchUnits, without ranking the rest.
	ScoreUnits(ctx context.Context, q TextQuery, ids []string, kind string) ([]UnitScore, error)
	// TurnUnits returns the ids of the units holding each of the turns
	// (by seq); turns in no unit are absent.
	TurnUnits(ctx context.Context, seqs []int64) (map[int64][]string, error)
	// UnitTurnIDs returns the ids of the turns of each unit, in arrival
	// order; unknown units are absent.
	UnitTurnIDs(ctx context.Context, unitIDs []string) (map[string][]string, error)
	// UnitsSince returns up to limit units whose change number is above
	// after, in change-number order, with their text.
	UnitsSince(ctx context.Context, after int64, limit int) ([]UnitDoc, error)
	// SessionStarts returns when each session began (its first turn's
	// time); sessions without a dated turn are absent.
	SessionStarts(ctx context.Context, keys []SessionKey) (map[SessionKey]time.Time, error)
}
