package engram_test

import (
	"testing"

	"github.com/engram-dev/engram"
)

func TestDocRefPlace(t *testing.T) {
	for _, tc := range []struct {
		d    engram.DocRef
		want string
	}{
		{engram.DocRef{Path: "a.md"}, "file a.md"},
		{engram.DocRef{Path: "a.md", StartLine: 4, EndLine: 4}, "file a.md, line 4"},
		{engram.DocRef{Vault: "/notes", Path: "docs/adr/0007.md", Heading: []string{"Decision", "Why"}, StartLine: 12, EndLine: 30,
			LinkedFrom: "docs/incidents/x.md"},
			"file docs/adr/0007.md > Decision > Why, lines 12-30 (vault /notes), linked from docs/incidents/x.md"},
	} {
		if got := tc.d.Place(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.d, got, tc.want)
		}
	}
}
