package vault

import (
	"bytes"
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// kindWikiLink is the goldmark node kind of an Obsidian [[wiki link]].
var kindWikiLink = ast.NewNodeKind("WikiLink")

// wikiLink is an inline [[target#heading|alias]] or ![[embed]].
type wikiLink struct {
	ast.BaseInline
	target, heading, alias string
	embed                  bool
}

func (n *wikiLink) Kind() ast.NodeKind { return kindWikiLink }

func (n *wikiLink) Dump(source []byte, level int) {
	ast.DumpHelper(n, source, level, map[string]string{
		"Target": n.target, "Heading": n.heading, "Alias": n.alias,
	}, nil)
}

// text is what the link shows: the alias, else the target (and heading).
func (n *wikiLink) text() string {
	switch {
	case n.alias != "":
		return n.alias
	case n.heading != "" && n.target == "":
		return n.heading
	case n.heading != "":
		return n.target + " > " + n.heading
	}
	return n.target
}

// wikiLinkParser parses [[...]] and ![[...]] before goldmark's own link
// parser sees the brackets. Being an inline parser, it never runs inside
// code spans or code blocks, which is what keeps [[x]] in code from being a
// link.
type wikiLinkParser struct{}

// wikiLinkPriority runs the parser before goldmark's link parser (200).
const wikiLinkPriority = 199

func (wikiLinkParser) Trigger() []byte { return []byte{'!', '['} }

func (wikiLinkParser) Parse(_ ast.Node, block text.Reader, _ parser.Context) ast.Node {
	line, _ := block.PeekLine()
	embed := false
	start := 0
	if len(line) > 0 && line[0] == '!' {
		embed = true
		start = 1
	}
	if !bytes.HasPrefix(line[start:], []byte("[[")) {
		return nil
	}
	body := line[start+2:]
	if len(body) > maxWikiLinkBytes {
		body = body[:maxWikiLinkBytes] // keeps a line of "[[" linear
	}
	end := bytes.Index(body, []byte("]]"))
	if end < 0 {
		return nil
	}
	inner := body[:end]
	// [[a [[b]] c]] is no link in Obsidian; neither is one spanning lines.
	if bytes.Contains(inner, []byte("[[")) || bytes.ContainsAny(inner, "\n\r") {
		return nil
	}
	target, heading, alias := splitWikiLink(string(inner))
	if target == "" && heading == "" {
		return nil
	}
	block.Advance(start + 2 + end + 2)
	return &wikiLink{target: target, heading: heading, alias: alias, embed: embed}
}

// splitWikiLink splits "target#heading|alias". Inside tables Obsidian
// writes the pipe escaped, "[[target\|alias]]", which is read the same.
func splitWikiLink(s string) (target, heading, alias string) {
	s = strings.ReplaceAll(s, `\|`, "|")
	if i := strings.IndexByte(s, '|'); i >= 0 {
		s, alias = s[:i], strings.TrimSpace(s[i+1:])
	}
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s, heading = s[:i], strings.TrimSpace(s[i+1:])
	}
	return strings.TrimSpace(s), heading, alias
}
