package vault

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestFrontMatter(t *testing.T) {
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
	tests := []struct {
		name    string
		path    string
		in      string
		title   string
		tags    []string
		aliases []string
		date    time.Time
		typ     string
		warn    string // substring of a warning; "" means no warnings
		first   int    // StartLine of the first chunk
	}{{
		name: "none", path: "notes/plain.md",
		in:    "Just text.\n",
		title: "plain", first: 1,
	}, {
		name: "full", path: "x.md",
		in:    "---\ntitle: Hello\ntags: [a, b]\naliases: [Hi, Hey]\ndate: 2026-03-01\ntype: ADR\n---\n# H1\n",
		title: "Hello", tags: []string{"a", "b"}, aliases: []string{"Hi", "Hey"}, date: day(2026, 3, 1), typ: "adr", first: 8,
	}, {
		name: "empty", path: "docs/rules/r.md",
		in:    "---\n---\n# Rule one\n",
		title: "Rule one", typ: "rule", first: 3,
	}, {
		name: "only blank and comment", path: "x.md",
		in:    "---\n\n# just a comment\n---\nbody\n",
		title: "x", first: 5,
	}, {
		name: "thematic break later is not front matter", path: "x.md",
		in:    "# Title\n\ntext\n\n---\n\ntitle: no\n---\n",
		title: "Title", first: 1,
	}, {
		name: "invalid YAML keeps the body", path: "x.md",
		in:    "---\ntitle: [unclosed\n---\n# Body title\n\n[[link]]\n",
		title: "Body title", warn: "invalid YAML", first: 4,
	}, {
		name: "not closed is body", path: "x.md",
		in:    "---\ntitle: x\n\n# Heading\n",
		title: "Heading", warn: "no closing", first: 1,
	}, {
		name: "not a mapping", path: "x.md",
		in:    "---\n- a\n- b\n---\ntext\n",
		title: "x", warn: "not a mapping", first: 5,
	}, {
		name: "BOM", path: "x.md",
		in:    "\ufeff---\ntitle: With BOM\n---\ntext\n",
		title: "With BOM", first: 4,
	}, {
		name: "CRLF", path: "x.md",
		in:    "---\r\ntitle: Windows\r\ntags: a, b\r\n---\r\n\r\n# H\r\n\r\ntext\r\n",
		title: "Windows", tags: []string{"a", "b"}, first: 6,
	}, {
		name: "closing dots", path: "x.md",
		in:    "---\ntitle: Dots\n...\ntext\n",
		title: "Dots", first: 4,
	}, {
		name: "tags string with spaces and hashes", path: "x.md",
		in:    "---\ntags: \"#ops postgres, #Review ops\"\n---\n",
		title: "x", tags: []string{"ops", "postgres", "Review"},
	}, {
		name: "tags list with hashes, singular key", path: "x.md",
		in:    "---\ntag:\n  - \"#a\"\n  - b/c\n  -\n---\n",
		title: "x", tags: []string{"a", "b/c"},
	}, {
		name: "tags not a list", path: "x.md",
		in:    "---\ntags: {a: 1}\n---\n",
		title: "x", warn: "tags", first: 0,
	}, {
		name: "aliases string, singular key", path: "x.md",
		in:    "---\nalias: One, Two\n---\n",
		title: "x", aliases: []string{"One", "Two"},
	}, {
		name: "null aliases and tags", path: "x.md",
		in:    "---\naliases:\ntags: ~\n---\n",
		title: "x",
	}, {
		name: "date quoted slashes", path: "x.md",
		in:    "---\ndate: '2026/03/01'\n---\n",
		title: "x", date: day(2026, 3, 1),
	}, {
		name: "date RFC 3339", path: "x.md",
		in:    "---\ndate: 2026-03-01T10:00:00Z\n---\n",
		title: "x", date: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC),
	}, {
		name: "date and time without zone", path: "x.md",
		in:    "---\ndate: 2026-03-01 10:30\n---\n",
		title: "x", date: time.Date(2026, 3, 1, 10, 30, 0, 0, time.UTC),
	}, {
		name: "date Japanese", path: "x.md",
		in:    "---\ndate: 2026年3月1日\n---\n",
		title: "x", date: day(2026, 3, 1),
	}, {
		name: "created when no date", path: "x.md",
		in:    "---\ncreated: 2025-12-24\n---\n",
		title: "x", date: day(2025, 12, 24),
	}, {
		name: "date unparsable", path: "x.md",
		in:    "---\ndate: next tuesday\n---\n",
		title: "x", warn: "not a date",
	}, {
		name: "date null", path: "x.md",
		in:    "---\ndate:\ntitle:\n---\n# From H1\n",
		title: "From H1", first: 5,
	}, {
		name: "title not a string", path: "x.md",
		in:    "---\ntitle: [a, b]\n---\n",
		title: "x", warn: "title",
	}, {
		name: "keys case-insensitive, first wins", path: "x.md",
		in:    "---\nTitle: First\ntitle: Second\n---\n",
		title: "First",
	}, {
		name: "anchor and alias", path: "x.md",
		in:    "---\nbase: &t [x, y]\ntags: *t\n---\n",
		title: "x", tags: []string{"x", "y"},
	}, {
		name: "type from folder", path: "docs/incidents/2026/outage.md",
		in:    "# Outage\n",
		title: "Outage", typ: "incident", first: 1,
	}, {
		name: "setext H1 title", path: "x.md",
		in:    "Setext title\n============\n\ntext\n",
		title: "Setext title", first: 1,
	}, {
		name: "H2 is not a title", path: "notes/n.markdown",
		in:    "## Only H2\n",
		title: "n", first: 1,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := MustParse(t, tt.path, tt.in, Options{})
			if d.Title != tt.title {
				t.Errorf("Title = %q, want %q", d.Title, tt.title)
			}
			if !slices.Equal(d.Tags, tt.tags) {
				t.Errorf("Tags = %q, want %q", d.Tags, tt.tags)
			}
			if !slices.Equal(d.Aliases, tt.aliases) {
				t.Errorf("Aliases = %q, want %q", d.Aliases, tt.aliases)
			}
			if !d.Date.Equal(tt.date) {
				t.Errorf("Date = %v, want %v", d.Date, tt.date)
			}
			if d.Type != tt.typ {
				t.Errorf("Type = %q, want %q", d.Type, tt.typ)
			}
			warns := strings.Join(d.Warnings, "\n")
			if tt.warn == "" && warns != "" || !strings.Contains(warns, tt.warn) {
				t.Errorf("Warnings = %q, want one with %q", d.Warnings, tt.warn)
			}
			if tt.first > 0 && (len(d.Chunks) == 0 || d.Chunks[0].StartLine != tt.first) {
				t.Errorf("first chunk = %+v, want it at line %d", d.Chunks, tt.first)
			}
		})
	}
}

func TestParseDate(t *testing.T) {
	for _, s := range []string{"2026-03-01", "2026-03-01T10:00:00+02:00", "2026-03-01T10:00:00.123Z",
		"2026/3/1", "2026.03.01", "1 March 2026", "March 1, 2026", "2026年03月01日"} {
		got, ok := parseDate(s)
		if !ok || got.Year() != 2026 || got.Month() != 3 || got.Day() != 1 {
			t.Errorf("parseDate(%q) = %v, %v", s, got, ok)
		}
	}
	for _, s := range []string{"", "soon", "2026-13-01", "01/03/2026", strings.Repeat("2", 100)} {
		if got, ok := parseDate(s); ok {
			t.Errorf("parseDate(%q) = %v, want failure", s, got)
		}
	}
}
