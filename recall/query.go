package recall

import (
	"time"

	"github.com/engram-dev/engram/internal/querytext"
)

// TriggerMatcher finds the trigger phrase in a query (see
// querytext.TriggerMatcher).
type TriggerMatcher = querytext.TriggerMatcher

// NewTriggerMatcher compiles trigger phrases; see
// querytext.NewTriggerMatcher for the errors.
func NewTriggerMatcher(phrases []string) (*TriggerMatcher, error) {
	return querytext.NewTriggerMatcher(phrases)
}

// DefaultTriggers returns the built-in English, Chinese and Japanese trigger
// phrases, a fresh slice on each call.
func DefaultTriggers() []string { return querytext.DefaultTriggers() }

// TimeRange is the period a temporal expression in a query names.
type TimeRange = querytext.TimeRange

// ParseTimeExpr finds the first temporal expression in query and resolves
// it against asOf (see querytext.ParseTimeExpr).
func ParseTimeExpr(query string, asOf time.Time) (r TimeRange, rest string, ok bool) {
	return querytext.ParseTimeExpr(query, asOf)
}

// FindTimeExprs returns the temporal expressions of a text, resolved
// against when it was said (see querytext.FindTimeExprs).
func FindTimeExprs(text string, at time.Time, limit int) []TimeRange {
	return querytext.FindTimeExprs(text, at, limit)
}
