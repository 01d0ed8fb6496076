package engram

import "testing"

func TestPiecesReplace(t *testing.T) {
	p := NewPieces([]string{"Grimblethorp-11", "青龙偃月刀", "redacted word"}, "[redacted]")
	for _, c := range []struct{ in, want string }{
		{"Grimblethorp", "[redacted]"},
		{"grimblethorp, rest", "[redacted], rest"},
		{"Grimblethorps", "Grimblethorps"}, // another word
		{"room 11 and 12", "room [redacted] and 12"},
		{"偃月", "[redacted]"},
		{"我的青龙偃月刀法", "我的[redacted]法"},
		{"月亮", "月亮"},                                        // one character of a span is no piece
		{"the code is Grimble…", "the code is [redacted]…"}, // clipped inside the span
		{"the code is Grimblethorp-1…", "the code is [redacted]…"},
		{"the code is agrim…", "the code is agrim…"}, // not at a word's start
		{"密码是青龙偃…", "密码是[redacted]…"},
		{"a [redacted] word", "a [redacted] [redacted]"}, // the marker's words stay
		{"nothing here", "nothing here"},
	} {
		if got := p.Replace(c.in, "[redacted]"); got != c.want {
			t.Errorf("Replace(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := p.Holds(c.in); got != (c.in != c.want) {
			t.Errorf("Holds(%q) = %v", c.in, got)
		}
	}
	if NewPieces(nil, "x").Holds("anything") {
		t.Error("no spans, yet a piece")
	}
}
