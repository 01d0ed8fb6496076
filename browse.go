package engram

import "context"

// TurnQuery lists stored turns: a namespace's timeline, newest first by
// time, one session's turns in the order they arrived, or the turns of IDs.
type TurnQuery struct {
	Namespace string // "" lists every namespace
	// IDs, when set, lists those turns of Namespace, in the order of IDs,
	// each once; an id no turn of Namespace has is left out (so a reader
	// sees which sources were forgotten). Session, Before, After and Limit
	// are unset with it.
	IDs []string
	// Session, when set, lists that session's turns, oldest first, from the
	// turn after the one of seq After; otherwise the timeline, newest first,
	// from the turn before the one of seq Before (0: the newest).
	Session string
	Before  int64
	After   int64
	Limit   int // ListLimit's
}

// EntityQuery lists the entities of the knowledge graph.
type EntityQuery struct {
	Namespace string // "" lists every namespace
	Prefix    string // names (or aliases) starting with it, case folded; "" all
	Limit     int    // ListLimit's
}

// The limits of a listing (TurnQuery, EntityQuery): none asked for
// (0 or less) lists DefaultListLimit, more than MaxListLimit lists that.
const (
	DefaultListLimit = 50
	MaxListLimit     = 1000
)

// ListLimit is the limit a listing asking for n gets.
func ListLimit(n int) int {
	if n <= 0 {
		return DefaultListLimit
	}
	return min(n, MaxListLimit)
}

// EntityCount is an entity of the knowledge graph and the number of triples
// it is the subject or object of, closed ones included.
type EntityCount struct {
	Entity
	Triples int `json:"triples"`
}

// BrowseService lists what a home holds, for GET /v1/turns and
// /v1/entities (the web view's timeline, sessions and graph).
type BrowseService interface {
	ListTurns(ctx context.Context, q TurnQuery) ([]Turn, error)
	Entities(ctx context.Context, q EntityQuery) ([]EntityCount, error)
}

// InNamespace is turns less those of another namespace than ns ("" keeps
// every one), in place: what a listing of ids (TurnQuery.IDs) answers.
func InNamespace(turns []Turn, ns string) []Turn {
	out := turns[:0]
	for _, t := range turns {
		if ns == "" || t.Namespace == ns {
			out = append(out, t)
		}
	}
	return out
}
