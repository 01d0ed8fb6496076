package vault

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
)

// span is the body byte range [s, e) of a chunk; cont marks the second and
// later chunks of a split section, which get the heading line prepended.
type span struct {
	s, e int
	cont bool
}

// unit is a top-level block with its body lines (0-based, inclusive, blank
// lines after it dropped).
type unit struct {
	node        ast.Node
	first, last int
	code        bool
}

// section is a heading and the blocks up to the next heading, or the
// blocks before the first heading.
type section struct {
	path    []string
	heading bool // units[0] is the heading
	units   []unit
}

// piece is an unsplittable byte range when packing a long section: a
// block, a line of a long block, a rune-safe part of a long line, or a
// whole code block.
type piece struct {
	s, e int
	code bool
}

type headingEntry struct {
	level int
	text  string
}

// chunkBody cuts body into sections at top-level headings (headings in
// lists or block quotes are no section starts) and each section into
// chunks.
func (p *docParser) chunkBody(root ast.Node) {
	type block struct {
		n     ast.Node
		first int
	}
	var blocks []block
	for n := root.FirstChild(); n != nil; n = n.NextSibling() {
		if pos := nodeStart(n); pos >= 0 {
			blocks = append(blocks, block{n, p.line(pos)})
		}
	}
	lastLine := len(p.lineStarts) - 1
	var (
		secs  []*section
		cur   *section
		stack []headingEntry
	)
	for i, b := range blocks {
		end := lastLine
		if i+1 < len(blocks) {
			end = blocks[i+1].first - 1
		}
		end = max(p.trimBlank(b.first, end), b.first)
		u := unit{node: b.n, first: b.first, last: end, code: isCode(b.n)}
		if h, ok := b.n.(*ast.Heading); ok {
			txt := plainText(h, p.body)
			if h.Level == 1 && p.h1 == "" {
				p.h1 = txt
			}
			for len(stack) > 0 && stack[len(stack)-1].level >= h.Level {
				stack = stack[:len(stack)-1]
			}
			stack = append(stack, headingEntry{h.Level, txt})
			path := make([]string, len(stack))
			for j, e := range stack {
				path[j] = e.text
			}
			cur = &section{path: path, heading: true}
			secs = append(secs, cur)
		} else if cur == nil {
			cur = &section{}
			secs = append(secs, cur)
		}
		cur.units = append(cur.units, u)
	}
	for _, s := range secs {
		p.chunkSection(s)
	}
}

// nodeStart is the byte offset where a block starts, or -1.
func nodeStart(n ast.Node) int {
	if pos := n.Pos(); pos >= 0 {
		return pos
	}
	if n.Type() == ast.TypeBlock && n.Lines().Len() > 0 {
		return n.Lines().At(0).Start
	}
	return -1
}

func isCode(n ast.Node) bool {
	switch n.(type) {
	case *ast.FencedCodeBlock, *ast.CodeBlock:
		return true
	}
	return false
}

// chunkSection appends the chunks of one section. A section that fits in
// ChunkBytes is one chunk. A longer one is cut into pieces (blocks; lines
// of blocks over ChunkBytes; rune-safe parts of lines over the limit; code
// blocks always whole) packed greedily into chunks, each after the first
// starting with up to OverlapBytes of the end of the previous one, taken
// from a line start, else a word or sentence boundary, else a rune boundary,
// and never from a code block.
func (p *docParser) chunkSection(sec *section) {
	units := sec.units
	start := p.lineStarts[units[0].first]
	end := p.lineEnd(units[len(units)-1].last)
	budget := p.opts.ChunkBytes
	var prefix string
	headEnd := start
	if sec.heading {
		headEnd = p.lineEnd(units[0].last)
		prefix = strings.TrimRight(string(p.body[start:headEnd]), "\n")
	}
	if end-start <= budget {
		p.emit(sec, span{s: start, e: end}, prefix)
		return
	}
	prefixCost := len(prefix) + 2
	overlap := p.opts.OverlapBytes
	// Parts of a long line leave room for the overlap and the prefix.
	limit := max(budget-overlap-prefixCost, budget/2)

	var pieces []piece
	for _, u := range units {
		s, e := p.lineStarts[u.first], p.lineEnd(u.last)
		if u.code || e-s <= budget {
			pieces = append(pieces, piece{s, e, u.code})
			continue
		}
		pieces = p.splitUnit(pieces, u, limit)
	}

	cur := span{s: pieces[0].s, e: pieces[0].e}
	codeEnd := -1 // end of the last code piece in cur
	if pieces[0].code {
		codeEnd = pieces[0].e
	}
	lastCode := pieces[0].code
	for _, pc := range pieces[1:] {
		cost := 0
		if cur.cont {
			cost = prefixCost
		}
		if pc.e-cur.s+cost <= budget {
			cur.e = pc.e
			if pc.code {
				codeEnd = pc.e
			}
			lastCode = pc.code
			continue
		}
		p.emit(sec, cur, prefix)
		next := pc.s
		if !lastCode && overlap > 0 {
			lo := max(cur.e-overlap, cur.s, headEnd, codeEnd)
			if q := p.overlapStart(lo, cur.e); q >= 0 && pc.e-q+prefixCost <= budget {
				next = q
			}
		}
		cur = span{s: next, e: pc.e, cont: true}
		codeEnd = -1
		if pc.code {
			codeEnd = pc.e
		}
		lastCode = pc.code
	}
	p.emit(sec, cur, prefix)
}

// splitUnit appends the pieces of a block too long for one chunk: its
// lines, except that a code block nested in it (in a list item or a block
// quote) stays one piece, and a line over limit is cut at rune boundaries.
func (p *docParser) splitUnit(out []piece, u unit, limit int) []piece {
	type lineRange struct{ first, last int }
	var codes []lineRange
	walk(u.node, func(n ast.Node) bool {
		if n != u.node && isCode(n) {
			if pos := nodeStart(n); pos >= 0 {
				first := p.line(pos)
				codes = append(codes, lineRange{first, max(first, p.nodeLastLine(n, u))})
			}
			return false
		}
		return n.Type() == ast.TypeBlock || n.Type() == ast.TypeDocument
	})
	ci := 0
	for l := u.first; l <= u.last; {
		for ci < len(codes) && codes[ci].last < l {
			ci++
		}
		if ci < len(codes) && codes[ci].first <= l {
			out = append(out, piece{p.lineStarts[l], p.lineEnd(codes[ci].last), true})
			l = codes[ci].last + 1
			continue
		}
		if p.blankLine(l) {
			l++
			continue
		}
		s, e := p.lineStarts[l], p.lineEnd(l)
		if e-s > limit {
			out = p.splitLine(out, s, e, limit)
		} else {
			out = append(out, piece{s, e, false})
		}
		l++
	}
	return out
}

// nodeLastLine is the last line of a block nested in u: the line before
// the next block after it (blank lines dropped), or u's last line.
func (p *docParser) nodeLastLine(n ast.Node, u unit) int {
	first := p.line(nodeStart(n))
	for m := n; m != nil && m != u.node; m = m.Parent() {
		if next := m.NextSibling(); next != nil {
			if pos := nodeStart(next); pos >= 0 {
				return min(p.trimBlank(first, p.line(pos)-1), u.last)
			}
		}
	}
	return u.last
}

// splitLine cuts the line [s, e) into parts of at most limit bytes, at a
// space or CJK punctuation in the second half of a part if there is one,
// else at a rune boundary.
func (p *docParser) splitLine(out []piece, s, e, limit int) []piece {
	for e-s > limit {
		cut := runeCut(p.body[:e], s+limit)
		for q := cut; q > s+limit/2; {
			r, n := utf8.DecodeLastRune(p.body[s:q])
			if isBreak(r) {
				cut = q
				break
			}
			q -= n
		}
		if cut <= s { // cannot happen with limit >= 32; never loop forever
			cut = s + limit
			for cut < e && !utf8.RuneStart(p.body[cut]) {
				cut++
			}
		}
		out = p.addText(out, s, cut)
		s = cut
	}
	return p.addText(out, s, e)
}

// addText appends the text piece [s, e) unless it is blank: a blank piece
// would make a chunk of nothing.
func (p *docParser) addText(out []piece, s, e int) []piece {
	for i := s; i < e; i++ {
		if c := p.body[i]; c != ' ' && c != '\t' && c != '\n' {
			return append(out, piece{s, e, false})
		}
	}
	return out
}

// overlapStart picks where the overlap into [lo, b) starts: the first line
// start with text after it, else the first word or sentence boundary, else
// the first rune boundary. It returns -1 where there is none.
func (p *docParser) overlapStart(lo, b int) int {
	body := p.body
	// Text after q exists iff q <= last, the last non-blank byte.
	last := b - 1
	for last >= lo && (body[last] == ' ' || body[last] == '\t' || body[last] == '\n') {
		last--
	}
	if last < lo {
		return -1
	}
	for q := lo; q <= last; q++ {
		if (q == 0 || body[q-1] == '\n') && body[q] != '\n' {
			return q
		}
	}
	for q := lo; q <= last; {
		r, n := utf8.DecodeRune(body[q:b])
		q += n
		if !isBreak(r) {
			continue
		}
		c := q
		for c <= last && (body[c] == ' ' || body[c] == '\t') {
			c++
		}
		if c <= last && body[c] != '\n' && utf8.RuneStart(body[c]) {
			return c
		}
	}
	for q := lo; q <= last; q++ {
		if utf8.RuneStart(body[q]) {
			return q
		}
	}
	return -1
}

// isBreak reports whether a text may be cut after r: a space or a
// sentence or clause mark, Latin or CJK.
func isBreak(r rune) bool {
	if unicode.IsSpace(r) {
		return true
	}
	switch r {
	case '.', ',', ';', ':', '!', '?', '。', '、', '，', '．', '！', '？', '；', '：', '」', '』', '）':
		return true
	}
	return false
}

// emit appends the chunk for sp, unless sp is only white space (which
// goldmark can read as a paragraph: "\v").
func (p *docParser) emit(sec *section, sp span, prefix string) {
	txt := strings.TrimRight(string(p.body[sp.s:sp.e]), "\n")
	if strings.TrimSpace(txt) == "" {
		return
	}
	if sp.cont && prefix != "" {
		txt = prefix + "\n\n" + txt
	}
	p.chunks = append(p.chunks, Chunk{
		Index:     len(p.chunks),
		Heading:   sec.path,
		Text:      txt,
		StartLine: p.lineBase + p.line(sp.s) + 1,
		EndLine:   p.lineBase + p.line(max(sp.e-1, sp.s)) + 1,
	})
	p.spans = append(p.spans, sp)
}
