package vecrow

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/engram-dev/engram"
)

// NoTS stands for a zero time in Row.TS. A vector's time must lie after
// minTime, whose Unix nanoseconds are math.MinInt64, so NoTS is free.
const NoTS = math.MinInt64

// The range of times a vector may carry: they are kept as int64 Unix
// nanoseconds.
var (
	minTime = time.Unix(0, math.MinInt64).UTC()
	maxTime = time.Unix(0, math.MaxInt64).UTC()
)

// OutsideRange says that t lies outside the range of what (the times a
// store keeps), Unix nanoseconds in an int64: a few months wider than the
// years engram accepts (engram.MinYear to engram.MaxYear).
func OutsideRange(t time.Time, what string) string {
	return fmt.Sprintf("time %s is outside the range of %s (%s to %s, Unix nanoseconds in an int64; engram accepts the years %d to %d)",
		t.Format(time.RFC3339), what, minTime.Format(time.DateOnly), maxTime.Format(time.DateOnly), engram.MinYear, engram.MaxYear)
}

// Row is a vector as a store keeps it: Vec holds it encoded (Encode), TS
// is Unix nanoseconds or NoTS.
type Row struct {
	ID, Kind, Namespace string
	TS                  int64
	Vec                 []byte
}

// Range turns a query's time range [from, to) (zero: open) into an
// inclusive range of stored times, where a zero time is stored as NoTS and
// every other lies in (minTime, maxTime]. ok is false when nothing can
// match.
func Range(from, to time.Time) (lo, hi int64, ok bool) {
	lo, hi = math.MinInt64, math.MaxInt64
	var zero time.Time
	if !from.IsZero() {
		switch {
		case from.After(maxTime):
			return 0, 0, false
		case !from.After(minTime):
			// Every stored non-zero time is at or after from; a zero time
			// is only if from is not after it.
			if from.After(zero) {
				lo = NoTS + 1
			}
		default:
			lo = from.UnixNano()
		}
	}
	if !to.IsZero() {
		switch {
		case to.After(maxTime):
			// Every stored time is before to.
		case !to.After(minTime):
			// No stored non-zero time is before to; a zero time is if to
			// is after it.
			if !to.After(zero) {
				return 0, 0, false
			}
			hi = NoTS
		default:
			hi = to.UnixNano() - 1
		}
	}
	return lo, hi, lo <= hi
}

// Follower is an in-memory copy of a store's rows of one model (a
// vecindex.Index) that the store keeps up to date. The store calls its
// methods with its writer lock held, one call at a time, so that the copy
// applies the writes in the store's commit order.
type Follower interface {
	// Fill builds the copy from the n stored rows, which read passes to
	// add in change order (a row's Vec is valid only during the call).
	Fill(ctx context.Context, n int, read func(add func(Row) error) error) error
	// Apply applies a committed write: rows put (replacing by ID; IDs
	// distinct) and the IDs removed.
	Apply(put []Row, remove []string)
	// Release drops the copy: the follower is detached, or the model
	// dropped.
	Release()
	// Len returns the number of rows held, and Holds the row of id, -1
	// when absent, and whether it holds raw (as stored): what a check of
	// the copy against the store compares.
	Len() int
	Holds(id string, raw []byte) (row int, same bool)
}
