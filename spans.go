package engram

import (
	"slices"
	"strings"
)

// Spans finds a set of spans in a text in one pass, whatever their number:
// a redaction of many spans costs about what one costs, not one scan of
// every text per span. At each place of a text the longest span that
// starts there matches, and the scan goes on after it, so matches never
// overlap.
//
// The spans' first spanTrieDepth bytes are a trie; longer spans hang, longest
// first, under the node of their first spanTrieDepth bytes and are compared
// whole there. So the trie's size is bounded by the number of spans, not by
// their length.
type Spans struct {
	root  spanNode
	empty bool
}

// spanTrieDepth is how many leading bytes of a span the trie holds: enough
// that spans sharing a prefix (tokens of one provider, say) seldom share a
// node's list.
const spanTrieDepth = 16

type spanNode struct {
	next map[byte]*spanNode
	end  bool     // a span ends here (shorter than spanTrieDepth)
	long []string // at depth spanTrieDepth: the spans longer than it, longest first
}

// NewSpans returns the matcher of spans; empty spans are left out.
func NewSpans(spans []string) *Spans {
	m := &Spans{empty: true}
	for _, sp := range spans {
		if sp == "" {
			continue
		}
		m.empty = false
		n := &m.root
		for i := 0; i < len(sp) && i < spanTrieDepth; i++ {
			c := n.next[sp[i]]
			if c == nil {
				if n.next == nil {
					n.next = map[byte]*spanNode{}
				}
				c = &spanNode{}
				n.next[sp[i]] = c
			}
			n = c
		}
		if len(sp) <= spanTrieDepth {
			n.end = true
		} else if !slices.Contains(n.long, sp) {
			n.long = append(n.long, sp)
			slices.SortStableFunc(n.long, func(a, b string) int { return len(b) - len(a) })
		}
	}
	return m
}

// match returns the length of the longest span that starts s, 0 when none.
func (m *Spans) match(s string) int {
	n, best := &m.root, 0
	for i := 0; i < len(s); i++ {
		if n = n.next[s[i]]; n == nil {
			return best
		}
		if n.end {
			best = i + 1
		}
		if i+1 == spanTrieDepth {
			for _, sp := range n.long {
				if strings.HasPrefix(s, sp) {
					return len(sp)
				}
			}
			return best
		}
	}
	return best
}

// Contains reports whether s holds a span.
func (m *Spans) Contains(s string) bool {
	if m.empty {
		return false
	}
	for i := 0; i < len(s); i++ {
		if m.root.next[s[i]] != nil && m.match(s[i:]) > 0 {
			return true
		}
	}
	return false
}

// Replace returns s with every span it holds replaced by marker, and how
// many it replaced; s itself when it holds none.
func (m *Spans) Replace(s, marker string) (string, int) {
	if m.empty {
		return s, 0
	}
	var b strings.Builder
	done, n := 0, 0 // s[:done] is in b
	for i := 0; i < len(s); {
		if m.root.next[s[i]] == nil {
			i++
			continue
		}
		l := m.match(s[i:])
		if l == 0 {
			i++
			continue
		}
		if n == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[done:i])
		b.WriteString(marker)
		n++
		i += l
		done = i
	}
	if n == 0 {
		return s, 0
	}
	b.WriteString(s[done:])
	return b.String(), n
}
