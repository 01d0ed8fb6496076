package vault

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse feeds Parse arbitrary bytes and chunk sizes: it must never
// panic (nor report ErrInternal, which is a recovered panic), must reject
// only non-text, and must return docs whose invariants hold.
func FuzzParse(f *testing.F) {
	filepath.WalkDir(testVault, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b, uint16(200), uint16(40))
			}
		}
		return nil
	})
	for _, s := range []string{
		"", "---", "---\n", "---\n---", "---\r\n---\r\n", "\ufeff---\ntitle: x\n---\n",
		"---\ntitle: [\n---\n", "---\na: &a [*a]\n---\n", "---\n? [a]\n: b\n---\n",
		"# H\n```\n", "[[", "![[", "[[a|", "[[a#", "[[]]", "![[x]]]]", "[a](b.md", "[a](%zz.md)",
		"> ```\n> code\n", "- ```\n  x\n- y", "    code\n\n# h", "Title\n===", "#\n##\n###",
		"\r\r\r", "a\rb\r\nc\n", strings.Repeat(">", 500) + " x", strings.Repeat("- ", 300) + "x",
		strings.Repeat("[", 1000), strings.Repeat("*a", 500), "缓存策略。" + strings.Repeat("决", 300),
		"#tag #数字 #123 #a/b", "<div>\n[[a]]\n</div>", "[x]: y.md\n\n[x]",
	} {
		f.Add([]byte(s), uint16(64), uint16(16))
	}
	f.Fuzz(func(t *testing.T, content []byte, chunk, overlap uint16) {
		opts := Options{ChunkBytes: int(chunk), OverlapBytes: int(overlap) - 100, MaxFileBytes: 1 << 16}
		// Not timed: a wall-clock limit fails on a loaded machine.
		// BenchmarkParseHostile measures the inputs that were quadratic.
		d, err := Parse("fuzz/doc.md", content, opts)
		if err != nil {
			if errors.Is(err, ErrInternal) {
				t.Fatalf("parser failed: %v", err)
			}
			if checkText(content) == nil {
				t.Fatalf("valid text rejected: %v", err)
			}
			return
		}
		if err := checkDoc(content, d, opts); err != nil {
			t.Fatal(err)
		}
	})
}

// hostileUnits are inputs whose repetition is quadratic to a naive
// CommonMark parser.
func hostileUnits() map[string]string {
	indented := func() string {
		var b strings.Builder
		for i := range 500 {
			b.WriteString(strings.Repeat(" ", i*2) + "- x\n")
		}
		return b.String()
	}()
	return map[string]string{
		"nested quotes":       strings.Repeat(">", 20_000) + " deep\n",
		"nested lists":        strings.Repeat("- ", 20_000) + "deep\n",
		"nested ordered":      strings.Repeat("1. ", 20_000) + "deep\n",
		"indented lists":      indented,
		"open brackets":       "[",
		"open wiki links":     "[[a",
		"unclosed link dests": "[a](",
		"unclosed dest lines": "[a](\n",
		"ref defs":            "[a]: b\n",
		"emphasis":            "*a _b ",
		"many headings":       "# h\n",
		"long line":           "word ",
		"many links":          "[[a]] [b](b.md) ",
		"backticks":           "`a ",
		"image opens":         "![",
	}
}

func hostileInput(unit string, size int) []byte {
	return []byte(strings.Repeat(unit, size/len(unit)+1)[:size])
}

// TestParseHostile parses inputs on which goldmark alone goes quadratic
// (deep nesting, unclosed link destinations, long runs of link reference
// definitions, a line of "[["; see guard.go) and checks what comes out, with
// a link-scan budget a sixteenth of the real one so that the guard is spent
// within the test. BenchmarkParseHostile measures the real budget: each
// parses in about a second, whatever its size.
func TestParseHostile(t *testing.T) {
	defer func(b int) { linkScanBudget = b }(linkScanBudget)
	linkScanBudget /= 16
	for name, unit := range hostileUnits() {
		t.Run(name, func(t *testing.T) {
			in := hostileInput(unit, 64<<10)
			d, err := Parse("x.md", in, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := checkDoc(in, d, Options{}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// BenchmarkParseHostile: each hostile input at 64 and 256 KiB, with the
// real budget (go test -run '^$' -bench ParseHostile ./vault/;
// docs/benchmarks.md).
func BenchmarkParseHostile(b *testing.B) {
	for name, unit := range hostileUnits() {
		for _, size := range []int{64 << 10, 256 << 10} {
			in := hostileInput(unit, size)
			b.Run(fmt.Sprintf("%s/%dKiB", strings.ReplaceAll(name, " ", "_"), size>>10), func(b *testing.B) {
				b.SetBytes(int64(size))
				for b.Loop() {
					if _, err := Parse("x.md", in, Options{}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func TestGuardNesting(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"> > quote\n- list\n1. one\n", "> > quote\n- list\n1. one\n"},
		{"----------------------------------------\n", "----------------------------------------\n"},
		{strings.Repeat(">", 40) + " x", strings.Repeat(">", 32) + "\\" + strings.Repeat(">", 7) + " x"},
		{strings.Repeat("- ", 40) + "x", strings.Repeat("- ", 31) + "-\\" + strings.Repeat("- ", 8) + "x"},
		{strings.Repeat(" ", 300) + "x", strings.Repeat(" ", 256) + "\\" + strings.Repeat(" ", 43) + "x"},
	} {
		got := string(guardNesting([]byte(tt.in)))
		if got != tt.want {
			t.Errorf("guardNesting(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if len(got) != len(tt.in) {
			t.Errorf("guardNesting changed the length")
		}
	}
	// Real documents are not copied.
	in := []byte("# A\n\n> quote\n")
	if out := guardNesting(in); &out[0] != &in[0] {
		t.Error("guardNesting copied a document it did not change")
	}
}

// chunkReader returns at most n bytes a read.
type chunkReader struct {
	b []byte
	n int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), r.n)], r.b)
	r.b = r.b[k:]
	return k, nil
}

// FuzzReadText checks the streaming text check of Scan against the
// one-shot one of Parse, whatever the read sizes.
func FuzzReadText(f *testing.F) {
	for _, s := range []string{"", "abc", "a\x00", "caf\xe9", "缓存", "\xe7\xbc", "\xf0\x9f\x91\xa9\xe2\x80\x8d"} {
		f.Add([]byte(s), uint8(1))
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, content []byte, n uint8) {
		sum, kept, size, err := readText(&chunkReader{content, int(n%16) + 1}, 5, make([]byte, 8))
		want := checkText(content)
		if (err == nil) != (want == nil) || want != nil && !errors.Is(err, errors.Unwrap(want)) {
			t.Fatalf("readText: %v; checkText: %v", err, want)
		}
		if err == nil && (sum != sha(content) || size != int64(len(content)) || string(kept) != string(content[:min(5, len(content))])) {
			t.Fatalf("sum %s size %d kept %q", sum, size, kept)
		}
	})
}
