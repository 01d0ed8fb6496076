package termtext_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/engram-dev/engram/internal/termtext"
	"github.com/engram-dev/engram/internal/testutil"
)

func TestEscape(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text, 中文\n\tindented", "plain text, 中文\n\tindented"},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"\x1b]0;t\x07", `\x1b]0;t\x07`},
		{"\x1b]8;;u\x1b\\x", `\x1b]8;;u\x1b\x`},
		{"\u009b2J", `\u009b2J`},
		{"a\x9bb", `a\x9bb`},
		{"a\rb", `a\x0db`},
		{"\x00\x7f", `\x00\x7f`},
	} {
		if got := termtext.Escape(tc.in); got != tc.want {
			t.Errorf("Escape(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, h := range testutil.Hostile {
		if r := testutil.RawControl(termtext.Escape(h)); r >= 0 {
			t.Errorf("Escape(%q) keeps %U", h, r)
		}
	}
	// JSON output: DEL and the C1 controls, which encoding/json leaves raw,
	// are escaped, and the JSON means the same.
	js, _ := json.Marshal(map[string]string{"t": strings.Join(testutil.Hostile, " ")})
	esc := termtext.JSON(js)
	if r := testutil.RawControl(string(esc)); r >= 0 {
		t.Errorf("JSON keeps %U: %s", r, esc)
	}
	var back map[string]string
	if err := json.Unmarshal(esc, &back); err != nil || back["t"] != strings.ToValidUTF8(strings.Join(testutil.Hostile, " "), "\uFFFD") {
		t.Errorf("JSON changed the JSON: %q, %v", back["t"], err)
	}
}
