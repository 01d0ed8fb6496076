package vault

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"path"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// mdParser is CommonMark plus wiki links, with goldmark's link parser and
// link reference definitions bounded (see guard.go). The priorities are
// goldmark's defaults. A goldmark parser is safe for concurrent use once
// built.
var mdParser = parser.NewParser(
	parser.WithBlockParsers(parser.DefaultBlockParsers()...),
	parser.WithInlineParsers(
		util.Prioritized(parser.NewCodeSpanParser(), 100),
		util.Prioritized(wikiLinkParser{}, wikiLinkPriority),
		util.Prioritized(newBoundedLinkParser(), 200),
		util.Prioritized(parser.NewAutoLinkParser(), 300),
		util.Prioritized(parser.NewRawHTMLParser(), 400),
		util.Prioritized(parser.NewEmphasisParser(), 500),
	),
	parser.WithParagraphTransformers(util.Prioritized(boundedRefDefs{}, 100)),
)

// Parse parses one file's content; path is slash-separated and relative to
// the vault root, and decides the fallback title and the inferred type.
// Content over opts.MaxFileBytes is parsed up to it, with a warning; the
// hash and size are still those of all of content.
//
// Parse returns an error wrapping ErrBinary for content with NUL bytes,
// ErrNotUTF8 for content that is not valid UTF-8, and ErrInternal if the
// parser failed (a bug; it never panics). Every other problem is a warning
// in Doc.Warnings.
func Parse(path string, content []byte, opts Options) (Doc, error) {
	if err := checkText(content); err != nil {
		return Doc{}, fmt.Errorf("%s: %w", path, err)
	}
	opts = opts.withDefaults()
	sum := sha256.Sum256(content)
	kept := content
	if int64(len(kept)) > opts.MaxFileBytes {
		kept = kept[:runeCut(kept, int(opts.MaxFileBytes))]
	}
	return parseText(path, kept, hex.EncodeToString(sum[:]), int64(len(content)), opts)
}

// sniffBytes is how far a NUL byte makes content binary even after
// invalid UTF-8 (Git looks as far): a PNG is binary, not bad UTF-8.
const sniffBytes = 8 << 10

// checkText returns ErrBinary or ErrNotUTF8 (wrapped with the offset) for
// content that is not text: binary if a NUL comes in the first sniffBytes
// or before any invalid UTF-8, else not UTF-8 if any is invalid.
func checkText(b []byte) error {
	nul := bytes.IndexByte(b, 0)
	if nul >= 0 && nul < sniffBytes {
		return fmt.Errorf("%w at byte %d", ErrBinary, nul)
	}
	bad := -1
	if !utf8.Valid(b) {
		bad = firstInvalid(b)
	}
	switch {
	case nul >= 0 && (bad < 0 || nul < bad):
		return fmt.Errorf("%w at byte %d", ErrBinary, nul)
	case bad >= 0:
		return fmt.Errorf("%w at byte %d", ErrNotUTF8, bad)
	}
	return nil
}

func firstInvalid(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

// runeCut returns the largest n' <= n that does not cut a UTF-8 rune of b.
func runeCut(b []byte, n int) int {
	if n >= len(b) {
		return len(b)
	}
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return n
}

// parseText parses kept, which is valid UTF-8 and may be a prefix of the
// file (size is the whole file's).
func parseText(docPath string, kept []byte, hash string, size int64, opts Options) (doc Doc, err error) {
	defer func() {
		if r := recover(); r != nil {
			doc, err = Doc{}, fmt.Errorf("%s: %w: %v", docPath, ErrInternal, r)
		}
	}()
	doc = Doc{Path: docPath, Hash: hash, Size: size}
	if int64(len(kept)) < size {
		doc.Warnings = append(doc.Warnings, fmt.Sprintf("truncated: the file is %d bytes, only the first %d were parsed", size, len(kept)))
	}
	src := normalize(kept)

	yml, bodyOff, bodyLines, found, warn := splitFrontMatter(src)
	if warn != "" {
		doc.Warnings = append(doc.Warnings, warn)
	}
	var fm frontMatter
	if found {
		var warns []string
		fm, warns = parseFrontMatter(yml)
		doc.Warnings = append(doc.Warnings, warns...)
	}
	body := src[bodyOff:]
	p := newDocParser(body, bodyLines, opts)
	p.parse()

	doc.Title = fm.title
	if doc.Title == "" {
		doc.Title = p.h1
	}
	if doc.Title == "" {
		doc.Title = baseName(docPath)
	}
	doc.Tags = dedupeFold(append(fm.tags, p.tags...))
	doc.Aliases = fm.aliases
	doc.Date = fm.date
	doc.Type = fm.typ
	if doc.Type == "" {
		doc.Type = inferType(docPath)
	}
	doc.Chunks = p.chunks
	doc.Links = p.links
	return doc, nil
}

// normalize strips a UTF-8 byte order mark and turns "\r\n" and lone "\r"
// into "\n", which keeps line numbers as editors count them.
func normalize(b []byte) []byte {
	b = bytes.TrimPrefix(b, []byte("\xEF\xBB\xBF"))
	if bytes.IndexByte(b, '\r') < 0 {
		return b
	}
	b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	return bytes.ReplaceAll(b, []byte("\r"), []byte("\n"))
}

// baseName is the file name without .md or .markdown.
func baseName(p string) string {
	b := path.Base(p)
	ext := path.Ext(b)
	if e := strings.ToLower(ext); e == ".md" || e == ".markdown" {
		b = b[:len(b)-len(ext)]
	}
	return b
}

// folderTypes maps folder names (lower case) to the doc type they imply.
var folderTypes = map[string]string{
	"adr": "adr", "adrs": "adr", "decisions": "adr",
	"incident": "incident", "incidents": "incident", "postmortems": "incident", "post-mortems": "incident",
	"rule": "rule", "rules": "rule",
	"runbook": "runbook", "runbooks": "runbook",
}

// inferType returns the type implied by the nearest folder of p with a
// name in folderTypes, or "".
func inferType(p string) string {
	dir := path.Dir(p)
	for dir != "." && dir != "/" && dir != "" {
		if t, ok := folderTypes[strings.ToLower(path.Base(dir))]; ok {
			return t
		}
		dir = path.Dir(dir)
	}
	return ""
}

// docParser holds the state of parsing one body.
type docParser struct {
	body       []byte
	lineStarts []int // byte offset of each line of body; lineStarts[0] == 0
	lineBase   int   // lines of the file before body (front matter)
	opts       Options

	h1     string
	tags   []string
	chunks []Chunk
	spans  []span // body byte range of each chunk, parallel to chunks
	links  []Link

	linkOffs []int // body offset of each link, parallel to links
	tagBuf   []byte
	tagEnd   int
}

func newDocParser(body []byte, lineBase int, opts Options) *docParser {
	starts := make([]int, 1, bytes.Count(body, []byte("\n"))+1)
	for i, c := range body {
		if c == '\n' && i+1 < len(body) {
			starts = append(starts, i+1)
		}
	}
	return &docParser{body: body, lineStarts: starts, lineBase: lineBase, opts: opts}
}

// line is the 0-based body line holding byte off.
func (p *docParser) line(off int) int {
	return sort.Search(len(p.lineStarts), func(i int) bool { return p.lineStarts[i] > off }) - 1
}

// lineEnd is the offset just past line l's newline (or the end of body).
func (p *docParser) lineEnd(l int) int {
	if l+1 < len(p.lineStarts) {
		return p.lineStarts[l+1]
	}
	return len(p.body)
}

func (p *docParser) blankLine(l int) bool {
	return len(bytes.TrimSpace(p.body[p.lineStarts[l]:p.lineEnd(l)])) == 0
}

// trimBlank moves end (a line) up over blank lines, not above start.
func (p *docParser) trimBlank(start, end int) int {
	for end > start && p.blankLine(end) {
		end--
	}
	return end
}

func (p *docParser) parse() {
	pc := parser.NewContext()
	budget := linkScanBudget
	pc.Set(linkBudgetKey, &budget)
	// The AST's offsets point into p.body too: guardNesting keeps lengths.
	root := mdParser.Parse(text.NewReader(guardNesting(p.body)), parser.WithContext(pc))
	p.collectInline(root)
	p.chunkBody(root)
	p.assignLinks()
}

// walk visits n and its descendants in document order without recursion,
// so deeply nested input cannot exhaust the stack. fn returns false to skip
// a node's children.
func walk(n ast.Node, fn func(ast.Node) bool) {
	root := n
	for n != nil {
		if fn(n) && n.FirstChild() != nil {
			n = n.FirstChild()
			continue
		}
		for n != root && n.NextSibling() == nil {
			n = n.Parent()
		}
		if n == root {
			return
		}
		n = n.NextSibling()
	}
}

// collectInline gathers links and inline tags. Code spans, code blocks and
// raw HTML are skipped: what is in them is not a link or a tag.
func (p *docParser) collectInline(root ast.Node) {
	walk(root, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CodeSpan, *ast.FencedCodeBlock, *ast.CodeBlock, *ast.HTMLBlock, *ast.RawHTML, *ast.AutoLink:
			p.flushTags()
			return false
		case *wikiLink:
			p.flushTags()
			// [[#heading]] points into the same doc; ![[x.png]] at a file.
			if n.target == "" || isAttachment(n.target) {
				return false
			}
			p.addLink(n.Pos(), Link{Target: n.target, Heading: n.heading, Alias: n.alias, Kind: KindWiki, Embed: n.embed})
			return false
		case *ast.Link:
			p.flushTags()
			if t, h, ok := markdownTarget(string(n.Destination)); ok {
				p.addLink(n.Pos(), Link{Target: t, Heading: h, Alias: plainText(n, p.body), Kind: KindMarkdown})
			}
			return true
		case *ast.Image:
			p.flushTags()
			if t, h, ok := markdownTarget(string(n.Destination)); ok {
				p.addLink(n.Pos(), Link{Target: t, Heading: h, Alias: plainText(n, p.body), Kind: KindMarkdown, Embed: true})
			}
			return false
		case *ast.Text:
			seg := n.Segment
			if seg.Start != p.tagEnd {
				p.flushTags()
			}
			p.tagBuf = append(p.tagBuf, seg.Value(p.body)...)
			p.tagEnd = seg.Stop
			if n.SoftLineBreak() || n.HardLineBreak() {
				p.flushTags()
			}
			return false
		}
		return true
	})
	p.flushTags()
}

func (p *docParser) addLink(off int, l Link) {
	if off < 0 {
		off = 0
	}
	l.Line = p.lineBase + p.line(off) + 1
	p.links = append(p.links, l)
	p.linkOffs = append(p.linkOffs, off)
}

func (p *docParser) flushTags() {
	if bytes.IndexByte(p.tagBuf, '#') >= 0 {
		p.tags = append(p.tags, scanTags(p.tagBuf)...)
	}
	p.tagBuf = p.tagBuf[:0]
	p.tagEnd = -1
}

// scanTags finds Obsidian inline tags in s: "#" at the start or after a
// space, then letters, digits, marks, "_", "-" and "/", not all digits.
func scanTags(s []byte) []string {
	var out []string
	prevSpace := true
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRune(s[i:])
		if r != '#' || !prevSpace {
			prevSpace = unicode.IsSpace(r)
			i += n
			continue
		}
		j := i + n
		nonDigit := false
		for j < len(s) {
			r, m := utf8.DecodeRune(s[j:])
			if !isTagRune(r) {
				break
			}
			if !unicode.IsDigit(r) && r != '/' && r != '-' {
				nonDigit = true
			}
			j += m
		}
		tag := strings.Trim(string(s[i+n:j]), "/")
		if nonDigit && tag != "" {
			out = append(out, tag)
		}
		prevSpace = false
		i = j
	}
	return out
}

func isTagRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || r == '_' || r == '-' || r == '/'
}

// attachmentExts are the file types Obsidian embeds that are not notes:
// ![[diagram.png]] is no link to a document.
var attachmentExts = map[string]bool{
	".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".bmp": true, ".svg": true, ".webp": true, ".avif": true,
	".mp3": true, ".wav": true, ".m4a": true, ".ogg": true, ".flac": true, ".3gp": true,
	".mp4": true, ".webm": true, ".ogv": true, ".mov": true, ".mkv": true,
	".pdf": true, ".canvas": true, ".base": true,
}

func isAttachment(target string) bool {
	return attachmentExts[strings.ToLower(path.Ext(target))]
}

// markdownTarget returns the document a Markdown link destination points
// to: a relative path ending in .md or .markdown, URL-decoded, with its
// #fragment as heading. Links with a scheme (http:, mailto:, obsidian:),
// protocol-relative ones and same-document anchors are not document links.
func markdownTarget(dest string) (target, heading string, ok bool) {
	dest = strings.TrimSpace(dest)
	if dest == "" || dest[0] == '#' || strings.HasPrefix(dest, "//") || hasScheme(dest) {
		return "", "", false
	}
	p, frag, _ := strings.Cut(dest, "#")
	p, _, _ = strings.Cut(p, "?")
	if d, err := url.PathUnescape(p); err == nil {
		p = d
	}
	if d, err := url.PathUnescape(frag); err == nil {
		frag = d
	}
	if e := strings.ToLower(path.Ext(p)); e != ".md" && e != ".markdown" {
		return "", "", false
	}
	return p, frag, true
}

// hasScheme reports whether s starts with a URL scheme ("https:").
func hasScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ':':
			return i > 1 // "C:" is a Windows drive, not a scheme
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return false
}

// plainText is the text a node shows, Markdown stripped.
func plainText(n ast.Node, src []byte) string {
	var b strings.Builder
	walk(n, func(c ast.Node) bool {
		switch c := c.(type) {
		case *ast.Text:
			b.Write(util.UnescapePunctuations(c.Segment.Value(src)))
			if c.SoftLineBreak() || c.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(c.Value)
		case *wikiLink:
			b.WriteString(c.text())
		case *ast.RawHTML:
			return false
		}
		return true
	})
	return strings.Join(strings.Fields(b.String()), " ")
}

// assignLinks sets each link's chunk: the first chunk whose source holds
// the link.
func (p *docParser) assignLinks() {
	for i, off := range p.linkOffs {
		j := sort.Search(len(p.spans), func(k int) bool { return p.spans[k].e > off })
		if j == len(p.spans) {
			j = len(p.spans) - 1
		}
		if j < 0 {
			j = 0 // no chunks: cannot happen when there is a link
		}
		p.links[i].Chunk = j
	}
}
