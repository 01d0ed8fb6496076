package vecrow

import (
	"math"
	"testing"
	"time"
)

func TestRange(t *testing.T) {
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	mid := at("2026-05-01T00:00:00Z")
	const lo, hi = math.MinInt64, math.MaxInt64
	for _, c := range []struct {
		name         string
		from, to     time.Time
		wantLo, want int64
		ok           bool
	}{
		{"open", time.Time{}, time.Time{}, lo, hi, true},
		{"from", mid, time.Time{}, mid.UnixNano(), hi, true},
		{"to", time.Time{}, mid, lo, mid.UnixNano() - 1, true},
		{"empty", mid, mid, mid.UnixNano(), mid.UnixNano() - 1, false},
		{"from before 1678, after year 1", at("1500-01-01T00:00:00Z"), time.Time{}, NoTS + 1, hi, true},
		{"from before year 1", at("0000-01-01T00:00:00Z"), time.Time{}, lo, hi, true},
		{"from after 2262", at("2300-01-01T00:00:00Z"), time.Time{}, 0, 0, false},
		{"to after 2262", time.Time{}, at("2300-01-01T00:00:00Z"), lo, hi, true},
		{"to before 1678: only zero times", time.Time{}, at("1500-01-01T00:00:00Z"), lo, NoTS, true},
		{"to before year 1", time.Time{}, at("0000-01-01T00:00:00Z"), 0, 0, false},
	} {
		gotLo, gotHi, ok := Range(c.from, c.to)
		if ok != c.ok || (ok && (gotLo != c.wantLo || gotHi != c.want)) {
			t.Errorf("%s: got %d, %d, %v; want %d, %d, %v", c.name, gotLo, gotHi, ok, c.wantLo, c.want, c.ok)
		}
	}
}
