package engram

import (
	"slices"
	"testing"
)

// TestRemovedSpans: what a redaction removed is read back from a turn's
// text before and after it, the spans between the parts the marker left.
func TestRemovedSpans(t *testing.T) {
	for _, tc := range []struct {
		before, after, marker string
		want                  []string
		ok                    bool
	}{
		{"the key is abc1 ok", "the key is [x] ok", "[x]", []string{"abc1"}, true},
		{"abc1 and abc1", "[x] and [x]", "[x]", []string{"abc1", "abc1"}, true},
		{"secret", "[x]", "[x]", []string{"secret"}, true},
		{"a pw: hunter2", "a pw: [x]", "[x]", []string{"hunter2"}, true},
		{"same", "same", "[x]", nil, true},
		{"one two", "one [x] three", "[x]", nil, false},
		{"one two", "one two [x]", "[x]", nil, false},
		{"xx", "other", "", nil, false},
	} {
		got, ok := RemovedSpans(tc.before, tc.after, tc.marker)
		if ok != tc.ok || !slices.Equal(got, tc.want) {
			t.Errorf("RemovedSpans(%q, %q, %q) = %q, %v; want %q, %v", tc.before, tc.after, tc.marker, got, ok, tc.want, tc.ok)
		}
	}
}
