package qnorm_test

import (
	"strings"
	"testing"

	"github.com/engram-dev/engram/internal/qnorm"
)

// TestNormalize: full-width letters, case, white space runs, apostrophes
// and spaces between CJK characters are folded, and each rune still knows
// the bytes of the original it came from.
func TestNormalize(t *testing.T) {
	for _, tc := range []struct {
		in       string
		dropApos bool
		want     string
	}{
		{"Do  You\tREMEMBER", false, "do you remember"},
		{"ＡＢＣ don’t", false, "abc don't"},
		{"ＡＢＣ don’t", true, "abc dont"},
		{"认真 回忆", false, "认真回忆"},
		{"a\u200bb", false, "ab"},
	} {
		got := qnorm.Normalize(tc.in, tc.dropApos)
		if string(got.R) != tc.want {
			t.Errorf("Normalize(%q) = %q, want %q", tc.in, string(got.R), tc.want)
		}
		if len(got.Lo) != len(got.R) || len(got.Hi) != len(got.R) || len(got.Upper) != len(got.R) {
			t.Fatalf("Normalize(%q): spans of %d, %d, %d for %d runes", tc.in, len(got.Lo), len(got.Hi), len(got.Upper), len(got.R))
		}
	}
	s := "Do ＹＯＵ remember"
	got := qnorm.Normalize(s, false)
	if i := 3; s[got.Lo[i]:got.Hi[i+2]] != "ＹＯＵ" || !got.Upper[i] || got.Upper[len(got.R)-1] {
		t.Fatalf("the span of %q is %q, upper %v", string(got.R[3:6]), s[got.Lo[3]:got.Hi[5]], got.Upper)
	}
}

// TestCut: a span cut out of a query takes the punctuation that tied it to
// the sentence, and brackets that held only it.
func TestCut(t *testing.T) {
	for _, tc := range []struct {
		s, cut, want string
	}{
		{"What port did we choose, do you remember?", "do you remember", "What port did we choose?"},
		{"Do you remember, what port we chose?", "Do you remember", "what port we chose?"},
		{"the port (do you remember?) we chose", "do you remember", "the port we chose"},
		{"认真回忆 端口", "认真回忆", "端口"},
	} {
		lo := strings.Index(tc.s, tc.cut)
		if got := qnorm.Cut(tc.s, lo, lo+len(tc.cut)); got != tc.want {
			t.Errorf("Cut(%q, %q) = %q, want %q", tc.s, tc.cut, got, tc.want)
		}
	}
}
