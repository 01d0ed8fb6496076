package vault

import (
	"slices"
	"strings"
	"testing"
)

func TestLinks(t *testing.T) {
	wiki := func(target, heading, alias string, line int) Link {
		return Link{Target: target, Heading: heading, Alias: alias, Kind: KindWiki, Line: line}
	}
	md := func(target, heading, alias string, line int) Link {
		return Link{Target: target, Heading: heading, Alias: alias, Kind: KindMarkdown, Line: line}
	}
	embed := func(l Link) Link { l.Embed = true; return l }
	tests := []struct {
		name string
		in   string
		want []Link
	}{
		{"wiki", "See [[ADR-0007]].", []Link{wiki("ADR-0007", "", "", 1)}},
		{"wiki alias", "[[ADR-0007 Use Postgres for billing|the ADR]]", []Link{wiki("ADR-0007 Use Postgres for billing", "", "the ADR", 1)}},
		{"wiki heading", "[[0007-use-postgres#Consequences]]", []Link{wiki("0007-use-postgres", "Consequences", "", 1)}},
		{"wiki heading alias", "[[a#Sizing rules|sizing]]", []Link{wiki("a", "Sizing rules", "sizing", 1)}},
		{"wiki block ref", "[[a#^b1c2]]", []Link{wiki("a", "^b1c2", "", 1)}},
		{"wiki path", "[[docs/rules/db-migrations.md]]", []Link{wiki("docs/rules/db-migrations.md", "", "", 1)}},
		{"wiki spaces trimmed", "[[ a | b ]]", []Link{wiki("a", "", "b", 1)}},
		{"wiki escaped pipe in a table", "| [[a\\|b]] | x |", []Link{wiki("a", "", "b", 1)}},
		{"embed", "![[rules/db-migrations]]", []Link{embed(wiki("rules/db-migrations", "", "", 1))}},
		{"embed of an attachment is no link", "![[diagram.png]] ![[spec.PDF]] [[board.canvas]]", nil},
		{"two on a line, one on the next", "[[a]] and [[b]]\n[[c]]", []Link{wiki("a", "", "", 1), wiki("b", "", "", 1), wiki("c", "", "", 2)}},
		{"same-doc heading only is no link to another doc", "[[#Decision]]", nil},
		{"empty", "[[]] [[ ]] [[|x]]", nil},
		{"unclosed", "[[a] and [[b", nil},
		{"nested", "[[a [[b]] c]]", []Link{wiki("b", "", "", 1)}},
		{"CJK", "参见[[缓存策略|缓存]]。", []Link{wiki("缓存策略", "", "缓存", 1)}},

		{"markdown", "[pool rules](../rules/connection-pools.md)", []Link{md("../rules/connection-pools.md", "", "pool rules", 1)}},
		{"markdown anchor", "[s](connection-pools.md#Sizing)", []Link{md("connection-pools.md", "Sizing", "s", 1)}},
		{"markdown URL-encoded", "[c](../adrs/0008-%E7%BC%93%E5%AD%98.md#%E8%83%8C%E6%99%AF)", []Link{md("../adrs/0008-缓存.md", "背景", "c", 1)}},
		{"markdown space encoded", "[n](my%20note.markdown)", []Link{md("my note.markdown", "", "n", 1)}},
		{"markdown angle brackets", "[n](<my note.md>)", []Link{md("my note.md", "", "n", 1)}},
		{"markdown query dropped", "[n](n.md?plain=1)", []Link{md("n.md", "", "n", 1)}},
		{"markdown reference", "[the rules][r]\n\n[r]: rules/r1.md", []Link{md("rules/r1.md", "", "the rules", 1)}},
		{"markdown text with markup", "[**the** `rules`](r.md)", []Link{md("r.md", "", "the rules", 1)}},
		{"markdown embed of a note", "![note](n.md)", []Link{embed(md("n.md", "", "note", 1))}},
		{"web, mail, app and images are no links",
			"[a](https://x.org/a.md) [b](http://x.org/) [c](mailto:a@b.c) [d](obsidian://open?file=a.md) " +
				"![e](img.png) [f](//cdn.x/a.md) [g](#local) <https://x.org/h.md> [i](notes/foo) [j](file.txt)", nil},
		{"wiki inside markdown link text", "[see [[a]]](b.md)", []Link{md("b.md", "", "see a", 1), wiki("a", "", "", 1)}},

		{"inline code", "`[[a]]` and ``[b](b.md)``", nil},
		{"fenced code", "```\n[[a]]\n[b](b.md)\n```\n[[c]]", []Link{wiki("c", "", "", 5)}},
		{"indented code", "text\n\n    [[a]]\n\n[[b]]", []Link{wiki("b", "", "", 5)}},
		{"html block", "<div>\n[[a]]\n</div>\n\n[[b]]", []Link{wiki("b", "", "", 5)}},
		{"escaped brackets", `\[\[a]]`, nil},
		{"in heading, list and quote", "# T [[a]]\n- [[b]]\n> [[c]]", []Link{wiki("a", "", "", 1), wiki("b", "", "", 2), wiki("c", "", "", 3)}},
		{"after front matter", "---\ntitle: t\nrelated: \"[[not-read]]\"\n---\n\n[[a]]", []Link{wiki("a", "", "", 6)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := MustParse(t, "x.md", tt.in, Options{})
			got := slices.Clone(d.Links)
			for i := range got {
				got[i].Chunk = 0
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("links:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestLinkChunks(t *testing.T) {
	in := "intro [[a]]\n\n# One\n\n[[b]]\n\n## Two\n\n```\n[[no]]\n```\n[[c]]\n"
	d := MustParse(t, "x.md", in, Options{})
	want := map[string]int{"a": 0, "b": 1, "c": 2}
	for _, l := range d.Links {
		if want[l.Target] != l.Chunk {
			t.Errorf("link %q in chunk %d, want %d", l.Target, l.Chunk, want[l.Target])
		}
	}
	// With overlap a link may be repeated in the next chunk's text; it
	// belongs to the first.
	long := "# L\n\n" + paragraphs(3, 100) + "end [[x]].\n\n" + paragraphs(3, 100)
	d = MustParse(t, "x.md", long, Options{ChunkBytes: 250, OverlapBytes: 100})
	if len(d.Links) != 1 {
		t.Fatalf("links %+v", d.Links)
	}
	l := d.Links[0]
	if !strings.Contains(d.Chunks[l.Chunk].Text, "[[x]]") {
		t.Errorf("link's chunk %d does not hold it", l.Chunk)
	}
	for _, c := range d.Chunks[:l.Chunk] {
		if strings.Contains(c.Text, "[[x]]") {
			t.Errorf("chunk %d before the link's chunk %d holds it", c.Index, l.Chunk)
		}
	}
}

func TestInlineTags(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"#postmortem", []string{"postmortem"}},
		{"text #a and #b/c-d_e.", []string{"a", "b/c-d_e"}},
		{"#決策記録 与 #再発防止", []string{"決策記録", "再発防止"}},
		{"issue #123, C# and a#b, url x.org/#frag", nil},
		{"# Heading\n\n## Notes #todo", []string{"todo"}},
		{"`#code` and\n\n```\n#fenced\n```", nil},
		{"#a #A #a", []string{"a"}},
		{"#snake_case_tag", []string{"snake_case_tag"}},
		{"[#link-text](x.md) #after-link", []string{"link-text", "after-link"}},
		{"---\ntags: [fm]\n---\n#inline #fm", []string{"fm", "inline"}},
	}
	for _, tt := range tests {
		d := MustParse(t, "x.md", tt.in, Options{})
		if !slices.Equal(d.Tags, tt.want) {
			t.Errorf("tags of %q = %q, want %q", tt.in, d.Tags, tt.want)
		}
	}
}
