package vault

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// chunkSummary is what the table tests compare: heading path and lines.
type chunkSummary struct {
	heading    string // path joined with " > "
	start, end int
}

func summarize(d Doc) []chunkSummary {
	var out []chunkSummary
	for _, c := range d.Chunks {
		out = append(out, chunkSummary{strings.Join(c.Heading, " > "), c.StartLine, c.EndLine})
	}
	return out
}

func TestChunkSections(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []chunkSummary
	}{{
		name: "empty",
		in:   "",
		want: nil,
	}, {
		name: "blank only",
		in:   "\n\n  \n",
		want: nil,
	}, {
		name: "no headings",
		in:   "one\n\ntwo\n",
		want: []chunkSummary{{"", 1, 3}},
	}, {
		name: "preamble then nested headings",
		in: "intro\n" + // 1
			"\n" + // 2
			"# Decision\n" + // 3
			"\n" + // 4
			"We decide.\n" + // 5
			"\n" + // 6
			"## Consequences\n" + // 7
			"good\n" + // 8
			"### Risks\n" + // 9
			"some\n" + // 10
			"## Alternatives\n" + // 11
			"none\n" + // 12
			"\n" + // 13
			"\n" + // 14
			"# Appendix\n" + // 15
			"#### Deep\n", // 16
		want: []chunkSummary{
			{"", 1, 1},
			{"Decision", 3, 5},
			{"Decision > Consequences", 7, 8},
			{"Decision > Consequences > Risks", 9, 10},
			{"Decision > Alternatives", 11, 12},
			{"Appendix", 15, 15},
			{"Appendix > Deep", 16, 16},
		},
	}, {
		name: "setext headings and heading markup",
		in: "Title\n" + // 1
			"=====\n" + // 2
			"text\n" + // 3
			"\n" + // 4
			"The `foo` [[bar|Bar]] *thing*\n" + // 5
			"-----------------------------\n" + // 6
			"more\n", // 7
		want: []chunkSummary{{"Title", 1, 3}, {"Title > The foo Bar thing", 5, 7}},
	}, {
		name: "headings in lists, quotes and code are not sections",
		in: "# Top\n" + // 1
			"- # item heading\n" + // 2
			"> ## quoted\n" + // 3
			"\n" + // 4
			"```\n" + // 5
			"# comment\n" + // 6
			"```\n" + // 7
			"\n" + // 8
			"    # indented code\n", // 9
		want: []chunkSummary{{"Top", 1, 9}},
	}, {
		name: "closing hashes and empty heading",
		in:   "## Status ##\nok\n#\nlast\n",
		want: []chunkSummary{{"Status", 1, 2}, {"", 3, 4}},
	}, {
		name: "unclosed fence runs to the end",
		in:   "# A\n```\ncode\n\n# not a heading\n",
		want: []chunkSummary{{"A", 1, 5}},
	}, {
		name: "front matter shifts lines",
		in:   "---\ntitle: t\n---\n\n# A\ntext\n",
		want: []chunkSummary{{"A", 5, 6}},
	}, {
		name: "CRLF",
		in:   "# A\r\n\r\ntext\r\n# B\r\nmore\r\n",
		want: []chunkSummary{{"A", 1, 3}, {"B", 4, 5}},
	}, {
		name: "lone CR",
		in:   "# A\rtext\r# B\rmore",
		want: []chunkSummary{{"A", 1, 2}, {"B", 3, 4}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := MustParse(t, "x.md", tt.in, Options{})
			if got := summarize(d); !slices.Equal(got, tt.want) {
				t.Errorf("chunks:\n got %v\nwant %v", got, tt.want)
			}
		})
	}
}

func TestChunkTextIncludesHeading(t *testing.T) {
	d := MustParse(t, "x.md", "# A\n\nalpha\n\n## B\nbeta\n", Options{})
	want := []string{"# A\n\nalpha", "## B\nbeta"}
	for i, c := range d.Chunks {
		if c.Text != want[i] {
			t.Errorf("chunk %d text %q, want %q", i, c.Text, want[i])
		}
	}
}

// paragraphs returns n numbered paragraphs of about size bytes each.
func paragraphs(n, size int) string {
	var b strings.Builder
	for i := range n {
		p := fmt.Sprintf("Paragraph %d says", i)
		for len(p) < size {
			p += fmt.Sprintf(" word%d", len(p))
		}
		b.WriteString(p + ".\n\n")
	}
	return b.String()
}

func TestChunkSplitLongSection(t *testing.T) {
	opts := Options{ChunkBytes: 300, OverlapBytes: 80}
	in := "# Long\n\n" + paragraphs(8, 120) + "## Next\nshort\n"
	d := MustParse(t, "x.md", in, opts)
	var long []Chunk
	for _, c := range d.Chunks {
		if len(c.Heading) == 1 {
			long = append(long, c)
		}
	}
	if len(long) < 3 {
		t.Fatalf("section of ~1000 bytes with ChunkBytes 300 gave %d chunks", len(long))
	}
	for i, c := range long {
		if !strings.HasPrefix(c.Text, "# Long\n\n") {
			t.Errorf("chunk %d does not start with its heading: %q", i, c.Text)
		}
		if len(c.Text) > opts.ChunkBytes {
			t.Errorf("chunk %d is %d bytes, over %d", i, len(c.Text), opts.ChunkBytes)
		}
		if i == 0 {
			continue
		}
		prev := strings.TrimPrefix(long[i-1].Text, "# Long\n\n")
		cur := strings.TrimPrefix(c.Text, "# Long\n\n")
		ov := overlapLen(prev, cur)
		if ov == 0 || ov > opts.OverlapBytes {
			t.Errorf("chunk %d overlaps the previous one by %d bytes, want 1..%d\nprev %q\ncur  %q", i, ov, opts.OverlapBytes, prev, cur)
		}
		if long[i-1].EndLine < c.StartLine {
			t.Errorf("chunk %d starts at line %d after the previous ended at %d: no overlap in lines", i, c.StartLine, long[i-1].EndLine)
		}
	}
	// Paragraph boundaries: overlap starts at a line start, so no chunk
	// starts mid-paragraph when paragraphs are shorter than the overlap.
	short := MustParse(t, "x.md", "# S\n\n"+paragraphs(10, 60), opts)
	for _, c := range short.Chunks[1:] {
		body := strings.TrimPrefix(c.Text, "# S\n\n")
		if !strings.HasPrefix(body, "Paragraph ") {
			t.Errorf("chunk %d starts mid-paragraph: %q", c.Index, body)
		}
	}
}

// overlapLen is the length of the longest prefix of b that ends a.
func overlapLen(a, b string) int {
	for n := min(len(a), len(b)); n > 0; n-- {
		if strings.HasSuffix(a, b[:n]) {
			return n
		}
	}
	return 0
}

func TestChunkNoOverlap(t *testing.T) {
	d := MustParse(t, "x.md", "# L\n\n"+paragraphs(6, 100), Options{ChunkBytes: 250, OverlapBytes: -1})
	for i := 1; i < len(d.Chunks); i++ {
		if d.Chunks[i].StartLine <= d.Chunks[i-1].EndLine {
			t.Errorf("chunk %d (lines %d-%d) overlaps chunk %d (lines %d-%d) with overlap off", i,
				d.Chunks[i].StartLine, d.Chunks[i].EndLine, i-1, d.Chunks[i-1].StartLine, d.Chunks[i-1].EndLine)
		}
	}
}

func TestChunkCodeBlocksWhole(t *testing.T) {
	code := "```go\n" + strings.Repeat("fmt.Println(\"a line of code\") // [[x]]\n", 20) + "```\n"
	indented := strings.Repeat("    indented code line number something\n", 12)
	tests := []struct {
		name, in string
	}{
		{"fenced larger than a chunk", "# C\n\n" + paragraphs(3, 100) + code + "\n" + paragraphs(3, 100)},
		{"fenced first", "# C\n\n" + code + "\n" + paragraphs(4, 100)},
		{"indented", "# C\n\n" + paragraphs(3, 100) + indented + "\n" + paragraphs(3, 100)},
		{"fenced in a long list", "# C\n\n" + strings.Repeat("- item with some words in it to fill\n", 8) +
			"- item with code:\n\n  ```sh\n" + strings.Repeat("  echo a line of shell in a list\n", 10) + "  ```\n" +
			strings.Repeat("- more items after the code block\n", 8)},
		{"tilde fence in a quote", "# C\n\n" + strings.Repeat("> quoted line of text here and there\n", 8) +
			"> ~~~\n" + strings.Repeat("> quoted code line that goes on\n", 10) + "> ~~~\n" +
			strings.Repeat("> more quoted text after the code\n", 8)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := Options{ChunkBytes: 200, OverlapBytes: 60}
			d := MustParse(t, "x.md", tt.in, opts)
			if len(d.Chunks) < 2 {
				t.Fatalf("expected a split, got %d chunks", len(d.Chunks))
			}
			whole := 0
			for _, c := range d.Chunks {
				fences := 0
				codeLines := 0
				for _, l := range strings.Split(c.Text, "\n") {
					l = strings.TrimLeft(l, " >")
					if strings.HasPrefix(l, "```") || strings.HasPrefix(l, "~~~") {
						fences++
					}
					if strings.Contains(l, "code line") || strings.Contains(l, "Println") || strings.Contains(l, "echo a line") {
						codeLines++
					}
				}
				if fences%2 != 0 {
					t.Errorf("chunk %d holds half a fenced block:\n%s", c.Index, c.Text)
				}
				switch {
				case codeLines == 0:
				case codeLines == strings.Count(tt.in, "code line")+strings.Count(tt.in, "Println")+strings.Count(tt.in, "echo a line"):
					whole++
				default:
					t.Errorf("chunk %d holds %d lines of a code block, not all:\n%s", c.Index, codeLines, c.Text)
				}
			}
			if whole != 1 {
				t.Errorf("the code block is whole in %d chunks, want 1", whole)
			}
		})
	}
}

func TestChunkCJK(t *testing.T) {
	zh := strings.Repeat("缓存的键设计、失效方式和降级策略都必须在上线前定下来，否则问题只会换一个地方出现。", 20)
	ja := strings.Repeat("ロック待ちの接続が積み上がり、決済APIの応答時間が上限を超えた", 30) // no punctuation at the end of a sentence
	emoji := strings.Repeat("👩‍💻🚀", 200)
	for name, in := range map[string]string{
		"chinese one line":    "# 背景\n\n" + zh + "\n",
		"japanese no periods": "# 原因\n\n" + ja + "\n\n## 対応\n\n" + ja + "\n",
		"emoji":               emoji,
	} {
		for _, size := range []int{64, 100, 301, 1500} {
			t.Run(fmt.Sprintf("%s/%d", name, size), func(t *testing.T) {
				opts := Options{ChunkBytes: size}
				d := MustParse(t, "x.md", in, opts)
				for _, c := range d.Chunks {
					if !utf8.ValidString(c.Text) {
						t.Fatalf("chunk %d cuts a rune", c.Index)
					}
					if len(c.Text) > size+len("# 背景\n\n")+4 {
						t.Errorf("chunk %d is %d bytes for ChunkBytes %d", c.Index, len(c.Text), size)
					}
				}
			})
		}
	}
	// Sentence boundaries are preferred to rune boundaries.
	d := MustParse(t, "x.md", "# 背景\n\n"+zh+"\n", Options{ChunkBytes: 400})
	for _, c := range d.Chunks[:len(d.Chunks)-1] {
		if !strings.HasSuffix(c.Text, "。") && !strings.HasSuffix(c.Text, "，") && !strings.HasSuffix(c.Text, "、") {
			t.Errorf("chunk %d does not end at a sentence or clause mark: …%s", c.Index, lastRunes(c.Text, 5))
		}
	}
}

func lastRunes(s string, n int) string {
	r := []rune(s)
	return string(r[max(0, len(r)-n):])
}

func TestOptionsDefaults(t *testing.T) {
	o := Options{}.withDefaults()
	if o.MaxFileBytes != DefaultMaxFileBytes || o.ChunkBytes != DefaultChunkBytes || o.OverlapBytes != DefaultOverlapBytes {
		t.Errorf("defaults = %+v", o)
	}
	o = Options{ChunkBytes: 10, OverlapBytes: 1000}.withDefaults()
	if o.ChunkBytes != 64 || o.OverlapBytes != 32 {
		t.Errorf("clamped = %+v", o)
	}
	if o := (Options{OverlapBytes: -5}).withDefaults(); o.OverlapBytes != 0 {
		t.Errorf("negative overlap = %+v", o)
	}
}
