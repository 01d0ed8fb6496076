package archive

import (
	"sort"

	"github.com/engram-dev/engram"
)

// tailCache is a ring of the most recent readable turns, in seq order.
type tailCache struct {
	buf   []engram.Turn
	start int // index of the oldest turn
	n     int
	// from is the lowest seq s such that every readable turn with a seq of
	// s or more is in the ring. It moves up as turns are evicted.
	from int64
}

func newTailCache(size int) tailCache {
	return tailCache{buf: make([]engram.Turn, size), from: 1}
}

// push adds t, whose seq must be higher than any in the ring.
func (c *tailCache) push(t engram.Turn) {
	if len(c.buf) == 0 {
		c.from = t.Seq + 1
		return
	}
	if c.n < len(c.buf) {
		c.buf[(c.start+c.n)%len(c.buf)] = t
		c.n++
		return
	}
	c.from = c.buf[c.start].Seq + 1
	c.buf[c.start] = t
	c.start = (c.start + 1) % len(c.buf)
}

func (c *tailCache) at(i int) *engram.Turn { return &c.buf[(c.start+i)%len(c.buf)] }

// since returns a copy of the turns with seq > afterSeq, and false when the
// ring does not hold all of them.
func (c *tailCache) since(afterSeq int64) ([]engram.Turn, bool) {
	if afterSeq+1 < c.from {
		return nil, false
	}
	i := sort.Search(c.n, func(i int) bool { return c.at(i).Seq > afterSeq })
	out := make([]engram.Turn, 0, c.n-i)
	for ; i < c.n; i++ {
		out = append(out, *c.at(i))
	}
	return out, true
}

// replace puts t in place of the turn of the same seq, if the ring holds it.
func (c *tailCache) replace(t engram.Turn) {
	i := sort.Search(c.n, func(i int) bool { return c.at(i).Seq >= t.Seq })
	if i < c.n && c.at(i).Seq == t.Seq {
		*c.at(i) = t
	}
}

// insert puts t, the turn of a line that was not readable (a damaged line
// written again), in its place in seq order when the ring covers its seq,
// so that a reader of the ring sees what a reader of the file does.
func (c *tailCache) insert(t engram.Turn) {
	if len(c.buf) == 0 || t.Seq < c.from {
		return
	}
	i := sort.Search(c.n, func(i int) bool { return c.at(i).Seq >= t.Seq })
	if i < c.n && c.at(i).Seq == t.Seq {
		*c.at(i) = t
		return
	}
	all := make([]engram.Turn, 0, c.n+1)
	for j := 0; j < c.n; j++ {
		if j == i {
			all = append(all, t)
		}
		all = append(all, *c.at(j))
	}
	if i == c.n {
		all = append(all, t)
	}
	if len(all) > len(c.buf) {
		c.from = all[0].Seq + 1
		all = all[1:]
	}
	copy(c.buf, all)
	c.start, c.n = 0, len(all)
}
