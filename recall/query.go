package recall

import (
	"time"

	"github.com/engram-dev/engram/internal/timeexpr"
	"github.com/engram-dev/engram/internal/trigger"
)

// TriggerMatcher finds the trigger phrase in a query (see trigger.Matcher).
type TriggerMatcher = trigger.Matcher

// NewTriggerMatcher compiles trigger phrases; see trigger.NewMatcher for
// the errors.
func NewTriggerMatcher(phrases []string) (*TriggerMatcher, error) {
	return trigger.NewMatcher(phrases)
}

// DefaultTriggers returns the built-in English, Chinese and Japanese trigger
// phrases, a fresh slice on each call.
func DefaultTriggers() []string { return trigger.Defaults() }

// TimeRange is the period a temporal expression in a query names.
type TimeRange = timeexpr.Range

// ParseTimeExpr finds the first temporal expression in query and resolves
// it against asOf (see timeexpr.Parse).
func ParseTimeExpr(query string, asOf time.Time) (r TimeRange, rest string, ok bool) {
	return timeexpr.Parse(query, asOf)
}

// FindTimeExprs returns the temporal expressions of a text, resolved
// against when it was said (see timeexpr.Find).
func FindTimeExprs(text string, at time.Time, limit int) []TimeRange {
	return timeexpr.Find(text, at, limit)
}
