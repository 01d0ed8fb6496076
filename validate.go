package engram

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// AllNamespaces, given as the namespace of a recall or of a memory or scene
// listing, means every namespace. Where one namespace is needed (a persona,
// the knowledge graph, a vault) it is refused with ErrAllNamespaces's text.
const AllNamespaces = "*"

// AllNamespacesRefused is the message for AllNamespaces where one namespace
// is needed.
const AllNamespacesRefused = `"*" is not allowed here: name one namespace`

// MemoryTypes are the types of an L1 memory, in the order help texts list
// them.
func MemoryTypes() []string {
	return []string{MemoryFact, MemoryDecision, MemoryPreference, MemoryPlan, MemoryEvent}
}

// ValidMemoryType reports whether t is one of MemoryTypes.
func ValidMemoryType(t string) bool { return slices.Contains(MemoryTypes(), t) }

// UnknownMemoryType is the error for a memory type that is none of
// MemoryTypes, on field.
func UnknownMemoryType(field, t string) *Error {
	return FieldError(field, "unknown %s %q (want one of %s)", field, t, strings.Join(MemoryTypes(), ", "))
}

// The years engram accepts in a timestamp, a time range or as_of: every
// instant from the start of MinYear to the end of MaxYear (UTC) fits in
// int64 nanoseconds since 1970, the form the palace stores.
const (
	MinYear = 1678
	MaxYear = 2261
)

var (
	minTS = time.Date(MinYear, 1, 1, 0, 0, 0, 0, time.UTC)
	maxTS = time.Date(MaxYear+1, 1, 1, 0, 0, 0, 0, time.UTC)
)

// The times a store can hold: Unix nanoseconds in an int64, a few months
// wider than the years engram accepts. An archived line may hold a time
// outside them (a hand edit, a line written by an older engram).
var (
	MinStoredTime = time.Unix(0, math.MinInt64).UTC()
	MaxStoredTime = time.Unix(0, math.MaxInt64).UTC()
)

// Storable reports whether t is zero or lies strictly between
// MinStoredTime and MaxStoredTime: the times every index can hold (the
// vector index keeps the smallest int64 for "no time").
func Storable(t time.Time) bool {
	return t.IsZero() || t.After(MinStoredTime) && !t.After(MaxStoredTime)
}

// InTimeRange reports whether t lies within the years MinYear to MaxYear.
func InTimeRange(t time.Time) bool { return !t.Before(minTS) && t.Before(maxTS) }

// ParseTimeOrDate reads s as an RFC 3339 time, else as a date (2006-01-02)
// in loc, meaning the end of that day when endOfDay ("as of March 11"
// includes that day) and its start otherwise. It reports false for
// anything else.
func ParseTimeOrDate(s string, loc *time.Location, endOfDay bool) (time.Time, bool) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, true
	}
	d, err := time.ParseInLocation(time.DateOnly, s, loc)
	if err != nil {
		return time.Time{}, false
	}
	if endOfDay {
		d = d.AddDate(0, 0, 1).Add(-time.Nanosecond)
	}
	return d, true
}

// OutOfRange is the error for a time outside InTimeRange on field; what
// names the value in the message (the field's name, or the value quoted).
func OutOfRange(field, what string) *Error {
	return FieldError(field, "%s is out of range (years %d to %d)", what, MinYear, MaxYear)
}

// CheckQueryText refuses a keyword query over MaxQueryBytes, on field.
func CheckQueryText(field, s string) error {
	if len(s) > MaxQueryBytes {
		return &Error{Code: ETOOLARGE, Field: field,
			Message: fmt.Sprintf("%s is %d bytes, over the limit of %d", field, len(s), MaxQueryBytes)}
	}
	return nil
}

// NamespaceProblem says what keeps ns from being a namespace that turns are
// written to, or the one namespace of a vault ("" when nothing does):
// empty or AllNamespaces (which means every namespace where one is read),
// not UTF-8, over DefaultMaxFieldBytes, white space around it, a control
// character or a path separator in it (namespaces name folders and
// collections outside the palace).
func NamespaceProblem(ns string) string {
	switch {
	case ns == "" || ns == AllNamespaces:
		return "name one namespace (\"*\" means every namespace where one is read)"
	case !utf8.ValidString(ns):
		return "it is not valid UTF-8"
	case len(ns) > DefaultMaxFieldBytes:
		return fmt.Sprintf("it is over %d bytes", DefaultMaxFieldBytes)
	case strings.TrimSpace(ns) != ns:
		return "it begins or ends with white space"
	case strings.IndexFunc(ns, unicode.IsControl) >= 0:
		return "it holds a control character"
	case strings.ContainsAny(ns, `/\`):
		return "it holds a path separator (/ or \\)"
	}
	return ""
}

// CheckReadNamespace refuses, on field, a namespace to read that no turn
// can have: over DefaultMaxFieldBytes (ETOOLARGE), not UTF-8, a control
// character in it. AllNamespaces passes; so does a namespace written
// before separators were refused.
func CheckReadNamespace(field, ns string) error {
	switch {
	case len(ns) > DefaultMaxFieldBytes:
		return &Error{Code: ETOOLARGE, Field: field,
			Message: fmt.Sprintf("%s is %d bytes, over the limit of %d", field, len(ns), DefaultMaxFieldBytes)}
	case !utf8.ValidString(ns):
		return FieldError(field, "%s is not valid UTF-8", field)
	case strings.IndexFunc(ns, unicode.IsControl) >= 0:
		return FieldError(field, "%s holds a control character", field)
	}
	return nil
}

// Bounds of a path a client names (a backup folder, a vault): Linux's
// PATH_MAX and NAME_MAX, which macOS's are below.
const (
	MaxPathBytes = 4096
	MaxNameBytes = 255
)

// CheckPath refuses, on field, a path no file system takes: not UTF-8, a
// NUL or another control character in it, over MaxPathBytes, or a name in
// it over MaxNameBytes. It does not require the path to exist or to be
// absolute.
func CheckPath(field, p string) error {
	switch {
	case !utf8.ValidString(p):
		return FieldError(field, "%s is not valid UTF-8", field)
	case strings.IndexFunc(p, unicode.IsControl) >= 0:
		return FieldError(field, "%s holds a control character (a NUL, a newline...): no file name does", field)
	case len(p) > MaxPathBytes:
		return FieldError(field, "%s is %d bytes, over the %d a path may have", field, len(p), MaxPathBytes)
	}
	for name := range strings.SplitSeq(p, "/") {
		if len(name) > MaxNameBytes {
			return FieldError(field, "%s holds a name of %d bytes, over the %d a file name may have", field, len(name), MaxNameBytes)
		}
	}
	return nil
}
