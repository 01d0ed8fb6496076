package palace

import "testing"

func TestMatchExpr(t *testing.T) {
	got := matchExpr([]term{{Text: "port"}, {Text: `a"b`}, {Text: "会議"}})
	if want := `"port" OR "a""b" OR "会議"`; got != want {
		t.Fatalf("matchExpr = %s, want %s", got, want)
	}
}
