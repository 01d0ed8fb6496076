package vault

import (
	"bytes"
	"fmt"
	"strings"
	"time"
	"unicode"

	"go.yaml.in/yaml/v3"
)

// frontMatter is what Parse reads from the YAML between the --- lines.
type frontMatter struct {
	title   string
	tags    []string
	aliases []string
	date    time.Time
	typ     string
}

// splitFrontMatter finds YAML front matter in src (BOM already stripped,
// line endings "\n"): a first line "---", then lines up to a closing "---"
// or "...". It returns the YAML, the offset where the body starts and the
// number of lines before it. A "---" anywhere but the first line is a
// thematic break, not front matter. An opening line without a closing one
// leaves everything as body, with a warning.
func splitFrontMatter(src []byte) (yml []byte, bodyOff, bodyLines int, found bool, warning string) {
	first, rest, ok := bytes.Cut(src, []byte("\n"))
	if !ok || !isDelimiter(first, false) {
		return nil, 0, 0, false, ""
	}
	off := len(first) + 1
	line := 1
	for len(rest) > 0 {
		l, after, _ := bytes.Cut(rest, []byte("\n"))
		line++
		if isDelimiter(l, true) {
			end := off + len(l)
			if end < len(src) {
				end++ // the newline after the closing line
			}
			return src[len(first)+1 : off], end, line, true, ""
		}
		off += len(l) + 1
		rest = after
	}
	return nil, 0, 0, false, "front matter: opening --- has no closing --- line; read as body"
}

// isDelimiter reports whether line is "---" (or, closing, "..."), with
// trailing blanks allowed.
func isDelimiter(line []byte, closing bool) bool {
	l := bytes.TrimRight(line, " \t")
	return string(l) == "---" || closing && string(l) == "..."
}

// parseFrontMatter reads the fields engram uses from yml and returns them
// with warnings for what it could not read. Unknown keys are ignored.
func parseFrontMatter(yml []byte) (frontMatter, []string) {
	var fm frontMatter
	var warns []string
	if len(bytes.TrimSpace(yml)) == 0 {
		return fm, nil
	}
	var root yaml.Node
	if err := yaml.Unmarshal(yml, &root); err != nil {
		return fm, []string{fmt.Sprintf("front matter: invalid YAML, ignored (%v; its line numbers count from the line after the opening ---)", err)}
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) == 0 {
		return fm, nil
	}
	m := deref(root.Content[0])
	if m.Kind != yaml.MappingNode {
		if isNull(m) {
			return fm, nil
		}
		return fm, []string{"front matter: not a mapping of keys to values, ignored"}
	}
	seen := map[string]bool{}
	var dateNode, createdNode *yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		key := strings.ToLower(strings.TrimSpace(m.Content[i].Value))
		val := deref(m.Content[i+1])
		// Obsidian's singular spellings count as the plural key.
		switch key {
		case "tag":
			key = "tags"
		case "alias":
			key = "aliases"
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		switch key {
		case "title":
			s, ok := scalar(val)
			if !ok {
				warns = append(warns, fmt.Sprintf("front matter: title (line %d) is not a string, ignored", val.Line+1))
				continue
			}
			fm.title = strings.TrimSpace(s)
		case "type":
			s, ok := scalar(val)
			if !ok {
				warns = append(warns, fmt.Sprintf("front matter: type (line %d) is not a string, ignored", val.Line+1))
				continue
			}
			fm.typ = strings.ToLower(strings.TrimSpace(s))
		case "tags":
			items, ok := stringList(val)
			if !ok {
				warns = append(warns, fmt.Sprintf("front matter: tags (line %d) are not a list or a string, ignored", val.Line+1))
				continue
			}
			for _, it := range items {
				fm.tags = append(fm.tags, splitTags(it)...)
			}
		case "aliases":
			items, ok := stringList(val)
			if !ok {
				warns = append(warns, fmt.Sprintf("front matter: aliases (line %d) are not a list or a string, ignored", val.Line+1))
				continue
			}
			if val.Kind == yaml.ScalarNode && len(items) == 1 {
				items = strings.Split(items[0], ",")
			}
			for _, it := range items {
				if it = strings.TrimSpace(it); it != "" {
					fm.aliases = append(fm.aliases, it)
				}
			}
		case "date":
			dateNode = val
		case "created":
			createdNode = val
		}
	}
	if dateNode == nil {
		dateNode = createdNode
	}
	if dateNode != nil && !isNull(dateNode) {
		s, ok := scalar(dateNode)
		var t time.Time
		if ok {
			t, ok = parseDate(s)
		}
		if ok {
			fm.date = t
		} else {
			warns = append(warns, fmt.Sprintf("front matter: date %q (line %d) is not a date I can read, ignored", truncateForWarning(dateNode.Value), dateNode.Line+1))
		}
	}
	fm.tags = dedupeFold(fm.tags)
	fm.aliases = dedupeFold(fm.aliases)
	return fm, warns
}

// deref follows one YAML alias (*anchor); it never expands further, so a
// "billion laughs" document costs nothing.
func deref(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null" || n.Kind == 0
}

// scalar returns a scalar's text; null is "".
func scalar(n *yaml.Node) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		return "", false
	}
	if n.Tag == "!!null" {
		return "", true
	}
	return n.Value, true
}

// stringList reads a scalar as a one-item list and a sequence of scalars as
// a list; nulls are dropped.
func stringList(n *yaml.Node) ([]string, bool) {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return nil, true
		}
		return []string{n.Value}, true
	case yaml.SequenceNode:
		var out []string
		for _, c := range n.Content {
			c = deref(c)
			s, ok := scalar(c)
			if !ok {
				return nil, false
			}
			if s != "" {
				out = append(out, s)
			}
		}
		return out, true
	}
	return nil, false
}

// splitTags splits "a, b", "a b" and "#a #b" into tags without "#".
func splitTags(s string) []string {
	f := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
	out := f[:0]
	for _, t := range f {
		t = strings.TrimLeft(t, "#")
		if t != "" {
			out = append(out, t)
		}
	}
	return out
}

// dedupeFold drops case-insensitive duplicates, keeping the first spelling.
func dedupeFold(in []string) []string {
	if len(in) < 2 {
		return in
	}
	seen := make(map[string]bool, len(in))
	out := in[:0]
	for _, s := range in {
		k := strings.ToLower(s)
		if !seen[k] {
			seen[k] = true
			out = append(out, s)
		}
	}
	return out
}

// dateLayouts are the date forms accepted in front matter, tried in order.
// Layouts without a zone are read as UTC.
var dateLayouts = []string{
	"2006-01-02",
	time.RFC3339Nano,
	"2006-01-02T15:04:05",
	"2006-01-02T15:04",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05 -0700",
	"2006-01-02 15:04:05 -07:00",
	"2006-01-02 15:04:05",
	"2006-01-02 15:04",
	"2006/01/02",
	"2006/1/2",
	"2006/01/02 15:04:05",
	"2006/01/02 15:04",
	"2006.01.02",
	"2006-1-2",
	"2006年1月2日",
	"2006年01月02日",
	"2 January 2006",
	"2 Jan 2006",
	"January 2, 2006",
	"Jan 2, 2006",
	"Mon, 02 Jan 2006 15:04:05 -0700",
}

// parseDate reads s with the first matching layout of dateLayouts.
func parseDate(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 64 {
		return time.Time{}, false
	}
	for _, layout := range dateLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

func truncateForWarning(s string) string {
	const max = 40
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && !utf8RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
