package vault

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// MustParse parses content as path with opts, fails the test on error and
// checks the doc's invariants.
func MustParse(tb testing.TB, path, content string, opts Options) Doc {
	tb.Helper()
	d, err := Parse(path, []byte(content), opts)
	if err != nil {
		tb.Fatalf("Parse(%s): %v", path, err)
	}
	if err := checkDoc([]byte(content), d, opts); err != nil {
		tb.Fatalf("Parse(%s): %v", path, err)
	}
	return d
}

// checkDoc verifies what must hold for every parsed doc: chunks numbered in
// order, line ranges inside the file, each chunk's text the source of its
// lines (after the heading prefix of a continuation chunk), runes whole,
// every non-blank body line in some chunk, links pointing at real chunks
// and lines. It returns the first violation.
func checkDoc(content []byte, d Doc, opts Options) error {
	opts = opts.withDefaults()
	kept := content
	if int64(len(kept)) > opts.MaxFileBytes {
		kept = kept[:runeCut(kept, int(opts.MaxFileBytes))]
	}
	src := string(normalize(kept))
	lines := strings.Split(src, "\n")
	_, _, bodyLines, _, _ := splitFrontMatter([]byte(src))
	covered := make([]bool, len(lines)+2)
	prevStart := 0
	for i, c := range d.Chunks {
		if c.Index != i {
			return fmt.Errorf("chunk %d has Index %d", i, c.Index)
		}
		if c.StartLine < 1 || c.EndLine < c.StartLine || c.EndLine > len(lines) {
			return fmt.Errorf("chunk %d: lines %d-%d outside 1-%d", i, c.StartLine, c.EndLine, len(lines))
		}
		if c.StartLine <= bodyLines {
			return fmt.Errorf("chunk %d starts at line %d, in the front matter (%d lines)", i, c.StartLine, bodyLines)
		}
		if c.StartLine < prevStart {
			return fmt.Errorf("chunk %d starts at line %d, before chunk %d", i, c.StartLine, i-1)
		}
		prevStart = c.StartLine
		if !utf8.ValidString(c.Text) {
			return fmt.Errorf("chunk %d: text is not valid UTF-8", i)
		}
		if strings.TrimSpace(c.Text) == "" {
			return fmt.Errorf("chunk %d: empty text", i)
		}
		span := strings.Join(lines[c.StartLine-1:c.EndLine], "\n")
		body := c.Text
		idx := strings.Index(span, body)
		if idx < 0 {
			if _, rest, ok := strings.Cut(c.Text, "\n\n"); ok {
				body = rest
				idx = strings.Index(span, body)
			}
		}
		if idx < 0 {
			return fmt.Errorf("chunk %d (lines %d-%d): text is not the source of its lines:\n%q\nsource:\n%q", i, c.StartLine, c.EndLine, c.Text, span)
		}
		if first := len(lines[c.StartLine-1]); idx > first {
			return fmt.Errorf("chunk %d: text starts after line %d", i, c.StartLine)
		}
		if last := len(span) - len(lines[c.EndLine-1]); idx+len(body) <= last && c.EndLine > c.StartLine {
			return fmt.Errorf("chunk %d: text ends before line %d", i, c.EndLine)
		}
		for l := c.StartLine; l <= c.EndLine; l++ {
			covered[l] = true
		}
	}
	for l := bodyLines + 1; l <= len(lines); l++ {
		if !covered[l] && strings.TrimSpace(lines[l-1]) != "" {
			return fmt.Errorf("line %d (%q) is in no chunk", l, lines[l-1])
		}
	}
	for i, l := range d.Links {
		if l.Chunk < 0 || l.Chunk >= len(d.Chunks) {
			return fmt.Errorf("link %d (%q): chunk %d of %d", i, l.Target, l.Chunk, len(d.Chunks))
		}
		c := d.Chunks[l.Chunk]
		if l.Line < c.StartLine || l.Line > c.EndLine {
			return fmt.Errorf("link %d (%q) on line %d, its chunk %d has lines %d-%d", i, l.Target, l.Line, l.Chunk, c.StartLine, c.EndLine)
		}
		if l.Kind != KindWiki && l.Kind != KindMarkdown {
			return fmt.Errorf("link %d: kind %q", i, l.Kind)
		}
	}
	return nil
}

func TestCheckDocCatchesBadChunks(t *testing.T) {
	content := "# A\n\ntext\n\n## B\n\nmore\n"
	d := MustParse(t, "x.md", content, Options{})
	bad := d
	bad.Chunks = append([]Chunk(nil), d.Chunks...)
	bad.Chunks[1].StartLine = 1
	if err := checkDoc([]byte(content), bad, Options{}); err == nil {
		t.Fatal("checkDoc accepted a chunk whose text is not its lines")
	}
	bad.Chunks = d.Chunks[:1]
	if err := checkDoc([]byte(content), bad, Options{}); err == nil {
		t.Fatal("checkDoc accepted a line in no chunk")
	}
}
