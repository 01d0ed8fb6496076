package engram_test

import (
	"testing"
	"time"

	"github.com/engram-dev/engram"
)

func TestParseTimeOrDate(t *testing.T) {
	berlin := time.FixedZone("CET", 3600)
	for _, tc := range []struct {
		s        string
		loc      *time.Location
		endOfDay bool
		want     time.Time
		ok       bool
	}{
		{"2025-03-11T14:03:00Z", berlin, true, time.Date(2025, 3, 11, 14, 3, 0, 0, time.UTC), true},
		{"2025-03-11", time.UTC, false, time.Date(2025, 3, 11, 0, 0, 0, 0, time.UTC), true},
		{"2025-03-11", time.UTC, true, time.Date(2025, 3, 12, 0, 0, 0, 0, time.UTC).Add(-time.Nanosecond), true},
		{"2025-03-11", berlin, true, time.Date(2025, 3, 11, 23, 0, 0, 0, time.UTC).Add(-time.Nanosecond), true},
		{"March 11", time.UTC, true, time.Time{}, false},
		{"", time.UTC, false, time.Time{}, false},
	} {
		got, ok := engram.ParseTimeOrDate(tc.s, tc.loc, tc.endOfDay)
		if ok != tc.ok || !got.Equal(tc.want) {
			t.Errorf("ParseTimeOrDate(%q, %s, %v) = %v, %v; want %v, %v", tc.s, tc.loc, tc.endOfDay, got, ok, tc.want, tc.ok)
		}
	}
}
