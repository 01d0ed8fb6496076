package engram

import "testing"

func TestListLimit(t *testing.T) {
	for _, c := range []struct{ n, want int }{{0, DefaultListLimit}, {-3, DefaultListLimit}, {7, 7}, {MaxListLimit + 1, MaxListLimit}} {
		if got := ListLimit(c.n); got != c.want {
			t.Errorf("ListLimit(%d) = %d, want %d", c.n, got, c.want)
		}
	}
}
