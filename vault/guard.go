package vault

import (
	"sort"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// goldmark has inputs on which it goes quadratic: deep nesting on one line
// (it recounts the line's columns for every open container), "](" with no
// closing parenthesis (each one scans to the end of the paragraph), and
// link reference definitions or failed links in paragraphs of many
// thousand lines. A 4 MiB file of any of them would take minutes to hours.
// No note is written like that, so the guards below change nothing for real
// documents and keep the worst case around a second: the nesting guard
// edits a private copy of the text (same length, so every offset still
// points into the original), and the two parser wrappers stop doing work
// past a budget.

const (
	// maxPrefixMarkers is the most block-quote and list markers a line may
	// open; the next one is escaped in the copy goldmark parses.
	maxPrefixMarkers = 32
	// maxPrefixBytes is the longest leading run of markers and blanks kept.
	maxPrefixBytes = 256
	// maxRefDefLines is the longest paragraph searched for link reference
	// definitions.
	maxRefDefLines = 500
	// maxWikiLinkBytes is the longest [[...]] looked for.
	maxWikiLinkBytes = 1024
)

// linkScanBudget bounds, per document, the bytes goldmark's link parser may
// rescan on failed attempts: about a second of work at most. A variable so
// that the tests of the guard can spend less.
var linkScanBudget = 256 << 20

// guardNesting returns body, or a copy of it in which the container prefix
// of each line (blanks, ">", list markers) is cut short after
// maxPrefixMarkers markers or maxPrefixBytes bytes by a backslash, which
// makes the rest of the line text.
func guardNesting(body []byte) []byte {
	out, copied := body, false
	for i := 0; i < len(body); {
		markers, j := 0, i
	scan:
		for j < len(body) && body[j] != '\n' {
			if markers >= maxPrefixMarkers || j-i >= maxPrefixBytes {
				if !copied {
					out, copied = append([]byte(nil), body...), true
				}
				out[j] = '\\'
				break
			}
			switch c := body[j]; {
			case c == ' ' || c == '\t':
				j++
			case c == '>':
				markers++
				j++
			case c == '-' || c == '*' || c == '+':
				if j+1 < len(body) && (body[j+1] == ' ' || body[j+1] == '\t') {
					markers++
					j++
					continue
				}
				break scan
			case '0' <= c && c <= '9':
				k := j
				for k < len(body) && k-j < 9 && '0' <= body[k] && body[k] <= '9' {
					k++
				}
				if k+1 < len(body) && (body[k] == '.' || body[k] == ')') && (body[k+1] == ' ' || body[k+1] == '\t') {
					markers++
					j = k + 1
					continue
				}
				break scan
			default:
				break scan
			}
		}
		for j < len(body) && body[j] != '\n' {
			j++
		}
		i = j + 1
	}
	return out
}

// linkBudgetKey holds a *int: the scan budget left for the document.
var linkBudgetKey = parser.NewContextKey()

// boundedLinkParser is goldmark's link parser, charged for each failed
// "]" (the rest of the paragraph it may have rescanned) and skipped once
// the document's budget is spent: brackets after that stay text.
type boundedLinkParser struct {
	parser.InlineParser
	closer parser.CloseBlocker
}

func newBoundedLinkParser() boundedLinkParser {
	lp := parser.NewLinkParser()
	return boundedLinkParser{InlineParser: lp, closer: lp.(parser.CloseBlocker)}
}

func (b boundedLinkParser) CloseBlock(parent ast.Node, block text.Reader, pc parser.Context) {
	b.closer.CloseBlock(parent, block, pc)
}

func (b boundedLinkParser) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	line, seg := block.PeekLine()
	budget, _ := pc.Get(linkBudgetKey).(*int)
	if len(line) == 0 || line[0] != ']' || budget == nil {
		return b.InlineParser.Parse(parent, block, pc)
	}
	if *budget <= 0 {
		return nil
	}
	n := b.InlineParser.Parse(parent, block, pc)
	if n == nil {
		*budget -= failedLinkCost(parent, seg.Start, len(line) > 1 && line[1] == '(')
	}
	return n
}

// failedLinkCost estimates what a failed "]" at pos cost: a look-up that
// walks the paragraph's remaining lines and, before "(", a scan of its
// remaining bytes.
func failedLinkCost(parent ast.Node, pos int, paren bool) int {
	lines := parent.Lines()
	n := lines.Len()
	if n == 0 {
		return 1
	}
	i := sort.Search(n, func(i int) bool { return lines.At(i).Stop > pos })
	cost := 16 * (n - i)
	if paren {
		cost += max(lines.At(n-1).Stop-pos, 0)
	}
	return max(cost, 1)
}

// boundedRefDefs is goldmark's link reference definition finder, which
// skips paragraphs over maxRefDefLines lines.
type boundedRefDefs struct{}

func (boundedRefDefs) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	if node.Lines().Len() > maxRefDefLines {
		return
	}
	parser.LinkReferenceParagraphTransformer.Transform(node, reader, pc)
}
