package kwindex

import (
	"math"
	"slices"
)

// Doc is a row of a full-text table as an index holds it: its key, what
// searches filter it by, and the text of its (at most two) columns.
type Doc struct {
	Key       int64 // a turn's seq; a unit's, a scene's or a memory's row number
	Namespace string
	TS        int64 // a turn's or a memory's time, a unit's or a scene's start
	HasTS     bool
	End       int64 // a unit's or a scene's end
	HasEnd    bool
	Hidden    bool   // counted in the statistics, never returned (a superseded memory)
	Text      string // the first column, as inserted into the table
	Second    string // the second column (turns_fts: the speaker), if the table has one
}

// Index is one full-text table in memory: posting lists of the tokens of
// every doc's columns, and the statistics bm25() reads. The index of every
// table (turns, session parts, scenes as units, scenes, memories) is one
// of these; they differ in the weight of a second column and in the
// filters their searches use. An Index is not safe for concurrent use:
// GenCache and SeqCache guard theirs.
type Index struct {
	second float64 // bm25()'s weight of the second column
	docs   []entry
	byKey  map[int64]uint32 // the live doc of each key
	termID map[string]uint32
	post   []postings // by term id
	nsCode map[string]uint32
	live   int64 // docs not deleted: FTS5's row count
	tokens int64 // their tokens, of both columns: FTS5's total size
	// bigTF holds the first column counts of bigTF or more, by
	// bigKey(term, doc).
	bigTF map[uint64]uint32
	// ver counts the deletions: a term's document frequency is current
	// when its ver is the index's (see df). The index keeps no list of
	// each doc's terms to lower them by at a deletion: such lists were
	// over a quarter of the indexes' memory.
	ver uint64
}

// entry is a doc of the index, without its text.
type entry struct {
	key    int64
	ts     int64
	end    int64
	hasTS  bool
	hasEnd bool
	dead   bool
	hidden bool
	ns     uint32
	size   uint32 // tokens, of both columns
}

// New returns an empty index of a table whose rank is bm25(1.0, second):
// a match in the first column weighs 1 (every table's), one in the second
// column second (turns_fts: 0.4 for the speaker; 0 where there is none).
func New(second float64) *Index {
	return &Index{second: second, byKey: map[int64]uint32{}, termID: map[string]uint32{}, nsCode: map[string]uint32{}}
}

// Len is the number of live docs.
func (x *Index) Len() int64 { return x.live }

// Dead is the number of deleted (or replaced) docs the index still keeps.
func (x *Index) Dead() int64 { return int64(len(x.docs)) - x.live }

// Add indexes d; a doc of the same key is replaced.
func (x *Index) Add(a Doc) {
	x.Remove(a.Key)
	ns, ok := x.nsCode[a.Namespace]
	if !ok {
		ns = uint32(len(x.nsCode))
		x.nsCode[a.Namespace] = ns
	}
	d := uint32(len(x.docs))
	doc := entry{key: a.Key, ts: a.TS, hasTS: a.HasTS, end: a.End, hasEnd: a.HasEnd, hidden: a.Hidden, ns: ns}
	counts := map[uint32]uint32{}
	var order []uint32
	count := func(tok []byte, shift uint) {
		id, ok := x.termID[string(tok)]
		if !ok {
			id = uint32(len(x.post))
			x.termID[string(tok)] = id
			x.post = append(x.post, postings{ver: x.ver})
		}
		c, seen := counts[id]
		if !seen {
			order = append(order, id)
		}
		if shift == 0 {
			c = c&^0xff | min(c&0xff+1, 0xff)
		} else if c>>8 < 1<<24-1 {
			c += 1 << 8
		}
		counts[id] = c
		doc.size++
	}
	TokenBytes(a.Text, func(tok []byte) { count(tok, 8) })
	TokenBytes(a.Second, func(tok []byte) { count(tok, 0) })
	for _, id := range order {
		p := &x.post[id]
		c := counts[id]
		if first := c >> 8; first >= bigTF {
			x.setBigTF(id, d, first)
			c = bigTF<<8 | c&0xff
		}
		p.appendPosting(d, uint16(c))
		if p.ver == x.ver {
			p.df++ // current: it stays so
		}
	}
	x.docs = append(x.docs, doc)
	x.byKey[a.Key] = d
	x.live++
	x.tokens += int64(doc.size)
}

// setBigTF records term id's first column count in doc d.
func (x *Index) setBigTF(id, d, count uint32) {
	if x.bigTF == nil {
		x.bigTF = map[uint64]uint32{}
	}
	x.bigTF[bigKey(id, d)] = count
}

// Remove marks the doc of key deleted, if there is one; its postings stay
// and are skipped until a compaction.
func (x *Index) Remove(key int64) {
	d, ok := x.byKey[key]
	if !ok {
		return
	}
	delete(x.byKey, key)
	doc := &x.docs[d]
	doc.dead = true
	x.ver++ // the doc's terms' frequencies are one too high now
	x.live--
	x.tokens -= int64(doc.size)
}

// df returns the live docs holding term id, counting them again if a
// deletion came since they were counted. Counting writes the postings:
// the caller must hold the index exclusively, or know it current (see
// refresh).
func (x *Index) df(id uint32) int64 {
	p := &x.post[id]
	if p.ver != x.ver {
		n := int64(0)
		for i, d := 0, uint32(0); i < len(p.enc); {
			d, _, i = nextPosting(p.enc, i, d)
			if !x.docs[d].dead {
				n++
			}
		}
		p.df, p.ver = n, x.ver
	}
	return p.df
}

// holds reports whether a live doc holds tok (a token, QueryTokens).
func (x *Index) holds(tok string) bool {
	id, ok := x.termID[tok]
	return ok && x.df(id) > 0
}

// refresh counts the document frequencies a deletion left to count, so
// that searches sharing the index (under a read lock) only read it.
func (x *Index) refresh() {
	for id := range x.post {
		x.df(uint32(id))
	}
}

// CompactIfWasteful compacts the index when deleted docs (a forget, a
// redaction, every growth of a unit, which replaces its doc) are more than
// the live ones, and more than a few.
func (x *Index) CompactIfWasteful() {
	if dead := x.Dead(); dead > 4096 && dead > x.live {
		x.Compact()
	}
}

// Compact drops the deleted docs and their postings, and trims every
// slice to its length.
func (x *Index) Compact() {
	renum := make([]uint32, len(x.docs))
	docs := make([]entry, 0, x.live)
	for d, doc := range x.docs {
		if doc.dead {
			renum[d] = math.MaxUint32
			continue
		}
		renum[d] = uint32(len(docs))
		docs = append(docs, doc)
	}
	big := x.bigTF
	x.bigTF = nil
	var buf postings
	for id := range x.post {
		p := &x.post[id]
		buf.enc, buf.last = buf.enc[:0], 0
		n := int64(0)
		for i, d := 0, uint32(0); i < len(p.enc); {
			var tf uint16
			d, tf, i = nextPosting(p.enc, i, d)
			if nd := renum[d]; nd != math.MaxUint32 {
				buf.appendPosting(nd, tf)
				if tf>>8 == bigTF {
					x.setBigTF(uint32(id), nd, big[bigKey(uint32(id), d)])
				}
				n++
			}
		}
		p.enc, p.last = slices.Clone(buf.enc), buf.last
		p.df, p.ver = n, x.ver
	}
	x.docs = docs
	x.byKey = make(map[int64]uint32, len(docs))
	for d, doc := range docs {
		x.byKey[doc.key] = uint32(d)
	}
}

// Trim gives every slice of a freshly built index its length as capacity.
func (x *Index) Trim() {
	for id := range x.post {
		p := &x.post[id]
		if cap(p.enc) > len(p.enc) {
			p.enc = slices.Clone(p.enc)
		}
	}
	x.docs = slices.Clone(x.docs)
}
