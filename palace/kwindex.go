package palace

import (
	"container/heap"
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	engram "github.com/engram-dev/engram"
)

// The in-memory keyword index ranks turns by BM25 without FTS5.
//
// FTS5 ranks a query by computing bm25() for every row that holds one of
// its terms, reading each row's size from a b-tree on the way, so a query
// of common words over a large palace (tens of thousands of matching rows)
// costs a great deal of CPU (docs/benchmarks.md). The keyword index
// holds the same tokens (ftsTokens, checked against FTS5) as posting lists
// in memory, and scores them with FTS5's own formula and statistics
// (bm25(1.0, 0.4): idf = ln((N - n + 0.5) / (n + 0.5)), at least 1e-6;
// k1 = 1.2, b = 0.75; text matches weigh 1, speaker matches 0.4), so that
// it returns the ranking turns_fts would, in a fraction of the time:
// TestKeywordIndex_SameAsFTS compares both.
//
// turns_fts stays the store; the index is a cache of it, rebuilt from the
// turns table when loaded (LoadKeywordIndex, WarmKeywordIndex) and kept
// current by the writes of this process: every transaction that changes
// turns_fts counts a generation in palace_meta (keyKeywordGen) and, once
// committed, applies its change to the index. A search reads the
// generation first: when the index has not applied it yet (a write between
// commit and apply, or one made by another process), the search goes to
// FTS5, and a change no write of this process explains starts a rebuild.
// So the index never answers from a state older than the database's.

// keyKeywordGen is the palace_meta key counting changes of turns_fts.
const keyKeywordGen = "keyword_gen"

// BM25 parameters, as FTS5's bm25() has them, and the weights of the
// columns of turns_fts (migrations/0001_turns.sql).
const (
	bm25K1        = 1.2
	bm25B         = 0.75
	speakerWeight = 0.4
)

// keywordIndex is the DB's keyword index state.
type keywordIndex struct {
	mu       sync.RWMutex
	idx      *kwIndex // nil until loaded
	warm     bool     // keep it loaded: rebuild when it falls behind
	building bool
	builds   sync.WaitGroup     // the running build
	writers  int                // write transactions between begin and end
	pending  map[int64]kwChange // committed changes past idx.gen, by generation
	buildErr error              // the last build's failure
	ranked   atomic.Int64       // searches it answered
	state    loadState
}

// loadState is what KeywordIndexStates reports of an index, kept apart
// from its mutex, which a load holds for long stretches: a health check
// must not wait on the load it reports.
type loadState struct{ v atomic.Int32 }

const (
	stateOff int32 = iota
	stateLoading
	stateReady
	stateFailed
)

// warm marks the index warm: loading unless ready already.
func (s *loadState) warm(ready bool) {
	if ready {
		s.v.Store(stateReady)
	} else {
		s.v.CompareAndSwap(stateOff, stateLoading)
	}
}

// text is the state as KeywordIndexStates reports it, "" when not warm.
func (s *loadState) text() string {
	switch s.v.Load() {
	case stateLoading:
		return IndexLoading
	case stateReady:
		return IndexReady
	case stateFailed:
		return IndexFailed
	}
	return ""
}

// kwChange is what one write transaction did to turns_fts.
type kwChange struct {
	gen  int64
	dels []int64 // seqs removed (a redaction removes, then adds)
	adds []kwAdd
}

type kwAdd struct {
	seq           int64 // the key: a turn's seq, a unit's n
	namespace     string
	ts            int64 // a turn's time, a unit's start
	hasTS         bool
	end           int64 // a unit's end
	hasEnd        bool
	hidden        bool   // counted, never returned (a superseded memory)
	text, speaker string // as inserted into turns_fts
}

func (c *kwChange) reset() { *c = kwChange{} }

func (c *kwChange) del(seq int64) { c.dels = append(c.dels, seq) }

func (c *kwChange) add(seq int64, namespace string, ts any, text, speaker string) {
	a := kwAdd{seq: seq, namespace: namespace, text: text, speaker: speaker}
	if v, ok := ts.(int64); ok {
		a.ts, a.hasTS = v, true
	}
	c.adds = append(c.adds, a)
}

// count takes the next generation for the change inside its transaction,
// if it changed anything.
func (c *kwChange) count(ctx context.Context, tx *sql.Tx) error {
	if len(c.dels) == 0 && len(c.adds) == 0 {
		return nil
	}
	err := tx.QueryRowContext(ctx, `INSERT INTO palace_meta (key, value) VALUES (?1, 1)
		ON CONFLICT (key) DO UPDATE SET value = value + 1 RETURNING value`, keyKeywordGen).Scan(&c.gen)
	if err != nil {
		return fmt.Errorf("count the keyword change: %w", err)
	}
	return nil
}

// beginChange is called before a write transaction that may change
// turns_fts; endChange after it, with its error.
func (db *DB) beginChange() *kwChange {
	db.kw.mu.Lock()
	db.kw.writers++
	db.kw.mu.Unlock()
	return &kwChange{}
}

func (db *DB) endChange(c *kwChange, err error) {
	k := &db.kw
	k.mu.Lock()
	defer k.mu.Unlock()
	k.writers--
	if err != nil || c.gen == 0 {
		return
	}
	if k.idx == nil && !k.building {
		return
	}
	if k.pending == nil {
		k.pending = make(map[int64]kwChange)
	}
	k.pending[c.gen] = *c
	k.drain()
}

// drain applies the pending changes that follow the index's generation;
// k.mu must be held.
func (k *keywordIndex) drain() {
	if k.idx == nil {
		return
	}
	for gen := range k.pending {
		if gen <= k.idx.gen {
			delete(k.pending, gen)
		}
	}
	for {
		c, ok := k.pending[k.idx.gen+1]
		if !ok {
			return
		}
		delete(k.pending, c.gen)
		k.idx.apply(c)
	}
}

// keywordGen reads the generation of turns_fts.
func keywordGen(ctx context.Context, tx *sql.Tx) (int64, error) {
	return metaIn(ctx, tx, keyKeywordGen)
}

// LoadKeywordIndex builds the in-memory keyword indexes from the turns, the
// units, the scenes and the memories, if they are not loaded, and keeps
// them current from then on (see WarmKeywordIndex). On a large palace it
// takes seconds (BenchmarkRecall100k logs the time and size;
// docs/benchmarks.md has the size a turn).
func (db *DB) LoadKeywordIndex(ctx context.Context) error {
	k := &db.kw
	k.mu.Lock()
	k.warm = true
	loaded := k.idx != nil
	k.state.warm(loaded)
	k.mu.Unlock()
	for _, u := range db.seqIndexes() {
		db.warmIndex(u)
	}
	for _, u := range db.seqIndexes() {
		u.builds.Wait()
	}
	if loaded {
		return nil
	}
	if !db.claimBuild() {
		k.builds.Wait() // one running already
		k.mu.RLock()
		defer k.mu.RUnlock()
		if k.idx == nil {
			return k.buildErr
		}
		return nil
	}
	return db.buildKeywordIndex(ctx)
}

// WarmKeywordIndex starts loading the keyword index in the background;
// searches use FTS5 until it is ready. A server calls it at start.
func (db *DB) WarmKeywordIndex() {
	db.kw.mu.Lock()
	db.kw.warm = true
	db.kw.state.warm(db.kw.idx != nil)
	db.kw.mu.Unlock()
	db.rebuildKeywordIndex()
	for _, u := range db.seqIndexes() {
		db.warmIndex(u)
	}
}

// KeywordIndexLoaded reports whether the keyword index is loaded.
func (db *DB) KeywordIndexLoaded() bool {
	db.kw.mu.RLock()
	defer db.kw.mu.RUnlock()
	return db.kw.idx != nil
}

// claimBuild marks a build running, unless one is.
func (db *DB) claimBuild() bool {
	k := &db.kw
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.building {
		return false
	}
	k.building = true
	k.builds.Add(1)
	if k.idx == nil && k.warm {
		k.state.v.Store(stateLoading) // again, after a build that failed
	}
	return true
}

// rebuildKeywordIndex starts a build in the background unless one runs.
func (db *DB) rebuildKeywordIndex() {
	if !db.claimBuild() {
		return
	}
	go db.buildKeywordIndex(context.Background()) // its error is kept in buildErr
}

// buildKeywordIndex reads every turn and makes the index, then applies the
// changes committed while it read; the caller has claimed the build.
func (db *DB) buildKeywordIndex(ctx context.Context) (err error) {
	k := &db.kw
	defer func() {
		k.mu.Lock()
		k.building = false
		if err != nil {
			k.buildErr = err
			if k.idx == nil && k.warm {
				k.state.v.Store(stateFailed)
			}
		}
		k.mu.Unlock()
		k.builds.Done()
	}()

	idx := newKWIndex()
	err = db.View(ctx, func(tx *sql.Tx) error {
		var err error
		if idx.gen, err = keywordGen(ctx, tx); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT seq, namespace, ts, content, speaker FROM turns ORDER BY seq`)
		if err != nil {
			return err
		}
		return eachRow(rows, func() error {
			var (
				a       kwAdd
				ts      sql.NullInt64
				content string
			)
			if err := rows.Scan(&a.seq, &a.namespace, &ts, &content, &a.speaker); err != nil {
				return err
			}
			a.ts, a.hasTS = ts.Int64, ts.Valid
			if a.text, err = indexText(content); err != nil {
				return err
			}
			if a.speaker, err = indexText(a.speaker); err != nil {
				return err
			}
			idx.add(a)
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("palace: load the keyword index: %w", err)
	}
	idx.trim()
	k.mu.Lock()
	defer k.mu.Unlock()
	k.idx, k.buildErr = idx, nil
	if k.warm {
		k.state.v.Store(stateReady)
	}
	k.drain()
	return nil
}

// kwIndex is the keyword index proper: posting lists of the tokens of every
// turn's text and speaker, and the statistics bm25() reads.
type kwIndex struct {
	gen    int64
	docs   []kwDoc
	bySeq  map[int64]uint32 // the live doc of each seq
	termID map[string]uint32
	post   []kwPostings // by term id
	nsCode map[string]uint32
	live   int64 // docs not deleted: FTS5's row count
	tokens int64 // their tokens, text and speaker: FTS5's total size
	// bigTF holds the text counts of kwBigTF or more, by bigKey(term, doc).
	bigTF map[uint64]uint32
	// ver counts the deletions: a term's document frequency is current
	// when its ver is the index's (see df). The index keeps no list of
	// each doc's terms to lower them by at a deletion: such lists were
	// over a quarter of the indexes' memory.
	ver uint64
}

type kwDoc struct {
	seq    int64 // the key
	ts     int64
	end    int64
	hasTS  bool
	hasEnd bool
	dead   bool
	hidden bool // counted in the statistics, never returned
	ns     uint32
	size   uint32 // tokens, text and speaker
}

// kwPostings lists the docs holding a term, in doc order, with the term's
// frequency in each (text count << 8 | speaker count, each at most 255; a
// text count of 255 or more is kwBigTF, the count in the index's bigTF),
// packed into bytes: a posting is the uvarint of its doc's gap from the
// one before (the first's from doc 0) shifted left once, the low bit set
// when the frequency is the usual one (kwOneTF: one text match, none in
// the speaker), else followed by the uvarint of the frequency with its
// halves swapped (speaker count << 8 | text count: one byte for a text
// count under 128 and no speaker match). Most terms are rare and most
// matches single, so a posting takes one to three bytes where a doc number
// and a frequency took six (docs/benchmarks.md has what it saves).
type kwPostings struct {
	enc  []byte
	last uint32 // the last posting's doc
	df   int64  // live docs among them, when ver is the index's
	ver  uint64 // the index's ver df was counted at
}

// kwOneTF is the frequency of one text match and no speaker match.
const kwOneTF = 1 << 8

// appendPosting appends doc d (after the last) with frequency tf.
func (p *kwPostings) appendPosting(d uint32, tf uint16) {
	gap := uint64(d - p.last)
	if tf == kwOneTF {
		p.enc = binary.AppendUvarint(p.enc, gap<<1|1)
	} else {
		p.enc = binary.AppendUvarint(p.enc, gap<<1)
		p.enc = binary.AppendUvarint(p.enc, uint64(tf>>8)|uint64(tf&0xff)<<8)
	}
	p.last = d
}

// nextPosting decodes the posting at enc[i:] that follows doc prev (0 for
// the first): its doc, its frequency, and where the next one starts. The
// ranking (score) decodes the usual postings inline and calls it for the
// others.
func nextPosting(enc []byte, i int, prev uint32) (d uint32, tf uint16, next int) {
	v, n := uint64(enc[i]), 1
	if v >= 0x80 {
		v, n = binary.Uvarint(enc[i:])
	}
	d, i = prev+uint32(v>>1), i+n
	if v&1 == 1 {
		return d, kwOneTF, i
	}
	f, n := uint64(enc[i]), 1
	if f >= 0x80 {
		f, n = binary.Uvarint(enc[i:])
	}
	return d, uint16(f&0xff)<<8 | uint16(f>>8), i + n
}

// kwBigTF is the text count a posting's frequency holds for a count of
// kwBigTF or more, which the index's bigTF holds.
const kwBigTF = 0xff

// bigKey is the key of term id's count in doc d in bigTF.
func bigKey(id, d uint32) uint64 { return uint64(id)<<32 | uint64(d) }

// df returns the live docs holding term id, counting them again if a
// deletion came since they were counted. Counting writes the postings:
// the caller must hold the index exclusively, or know it current (see
// refresh).
func (x *kwIndex) df(id uint32) int64 {
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

// refresh counts the document frequencies a deletion left to count, so
// that searches sharing the index (the turns', under a read lock) only
// read it.
func (x *kwIndex) refresh() {
	for id := range x.post {
		x.df(uint32(id))
	}
}

func newKWIndex() *kwIndex {
	return &kwIndex{bySeq: map[int64]uint32{}, termID: map[string]uint32{}, nsCode: map[string]uint32{}}
}

func (x *kwIndex) apply(c kwChange) {
	ver := x.ver
	for _, seq := range c.dels {
		x.remove(seq)
	}
	for _, a := range c.adds {
		x.add(a) // replaces a doc of the same seq: a removal too
	}
	x.gen = c.gen
	x.compactIfWasteful()
	if x.ver != ver {
		x.refresh() // the turns' searches share a read lock: only read
	}
}

// compactIfWasteful compacts the index when deleted docs (a forget, a
// redaction, every growth of a unit, which replaces its doc) are more than
// the live ones, and more than a few.
func (x *kwIndex) compactIfWasteful() {
	if dead := int64(len(x.docs)) - x.live; dead > 4096 && dead > x.live {
		x.compact()
	}
}

// compact drops the deleted docs and their postings, and trims every
// slice to its length.
func (x *kwIndex) compact() {
	renum := make([]uint32, len(x.docs))
	docs := make([]kwDoc, 0, x.live)
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
	var buf kwPostings
	for id := range x.post {
		p := &x.post[id]
		buf.enc, buf.last = buf.enc[:0], 0
		n := int64(0)
		for i, d := 0, uint32(0); i < len(p.enc); {
			var tf uint16
			d, tf, i = nextPosting(p.enc, i, d)
			if nd := renum[d]; nd != math.MaxUint32 {
				buf.appendPosting(nd, tf)
				if tf>>8 == kwBigTF {
					x.setBigTF(uint32(id), nd, big[bigKey(uint32(id), d)])
				}
				n++
			}
		}
		p.enc, p.last = slices.Clone(buf.enc), buf.last
		p.df, p.ver = n, x.ver
	}
	x.docs = docs
	x.bySeq = make(map[int64]uint32, len(docs))
	for d, doc := range docs {
		x.bySeq[doc.seq] = uint32(d)
	}
}

// trim gives every slice of a freshly built index its length as capacity.
func (x *kwIndex) trim() {
	for id := range x.post {
		p := &x.post[id]
		if cap(p.enc) > len(p.enc) {
			p.enc = slices.Clone(p.enc)
		}
	}
	x.docs = slices.Clone(x.docs)
}

// add indexes a turn; one of the same seq is replaced.
func (x *kwIndex) add(a kwAdd) {
	x.remove(a.seq)
	ns, ok := x.nsCode[a.namespace]
	if !ok {
		ns = uint32(len(x.nsCode))
		x.nsCode[a.namespace] = ns
	}
	d := uint32(len(x.docs))
	doc := kwDoc{seq: a.seq, ts: a.ts, hasTS: a.hasTS, end: a.end, hasEnd: a.hasEnd, hidden: a.hidden, ns: ns}
	counts := map[uint32]uint32{}
	var order []uint32
	count := func(tok []byte, shift uint) {
		id, ok := x.termID[string(tok)]
		if !ok {
			id = uint32(len(x.post))
			x.termID[string(tok)] = id
			x.post = append(x.post, kwPostings{ver: x.ver})
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
	ftsTokenBytes(a.text, func(tok []byte) { count(tok, 8) })
	ftsTokenBytes(a.speaker, func(tok []byte) { count(tok, 0) })
	for _, id := range order {
		p := &x.post[id]
		c := counts[id]
		if text := c >> 8; text >= kwBigTF {
			x.setBigTF(id, d, text)
			c = kwBigTF<<8 | c&0xff
		}
		p.appendPosting(d, uint16(c))
		if p.ver == x.ver {
			p.df++ // current: it stays so
		}
	}
	x.docs = append(x.docs, doc)
	x.bySeq[a.seq] = d
	x.live++
	x.tokens += int64(doc.size)
}

// setBigTF records term id's text count in doc d.
func (x *kwIndex) setBigTF(id, d, count uint32) {
	if x.bigTF == nil {
		x.bigTF = map[uint64]uint32{}
	}
	x.bigTF[bigKey(id, d)] = count
}

// remove marks the doc of seq deleted, if there is one; its postings stay
// and are skipped.
func (x *kwIndex) remove(seq int64) {
	d, ok := x.bySeq[seq]
	if !ok {
		return
	}
	delete(x.bySeq, seq)
	doc := &x.docs[d]
	doc.dead = true
	x.ver++ // the doc's terms' frequencies are one too high now
	x.live--
	x.tokens -= int64(doc.size)
}

// kwHit is a ranked doc: a turn (key its seq) or a unit (key its n).
type kwHit struct {
	seq   int64
	score float64
}

// hitKeys is the key of each hit.
func hitKeys(hits []kwHit) []int64 {
	keys := make([]int64, len(hits))
	for i, h := range hits {
		keys[i] = h.seq
	}
	return keys
}

// kwTokens is the token of each term, ok false when a term is not one
// token (a phrase, which needs positions: FTS5 answers it).
func kwTokens(terms []term) (toks []string, ok bool) {
	toks = make([]string, len(terms))
	for i, t := range terms {
		n := 0
		ftsTokenBytes(t.text, func(tok []byte) {
			toks[i] = string(tok)
			n++
		})
		if n != 1 {
			return nil, false
		}
	}
	return toks, true
}

// rank returns the best limit turns for the phrases, by bm25() as FTS5
// computes it, best first, ties by seq; ok is false when a term is not one
// token.
func (x *kwIndex) rank(terms []term, ns string, from, to int64, limit int) (hits []kwHit, ok bool) {
	toks, ok := kwTokens(terms)
	if !ok {
		return nil, false
	}
	keep, some := x.pointFilter(ns, from, to)
	if !some {
		return nil, true
	}
	return x.best(toks, limit, keep), true
}

// pointFilter keeps the docs of x (turns, memories: a time each) of
// namespace ns ("": any) whose time is in [from, to) (0: no bound), but
// not the hidden ones, as the FTS5 searches filter them; some is false
// when no doc can be kept.
func (x *kwIndex) pointFilter(ns string, from, to int64) (keep func(*kwDoc) bool, some bool) {
	nsc, nsOK := x.nsCode[ns]
	if ns != "" && !nsOK {
		return nil, false
	}
	return func(doc *kwDoc) bool {
		if doc.hidden || (ns != "" && doc.ns != nsc) {
			return false
		}
		return (from == 0 || (doc.hasTS && doc.ts >= from)) && (to == 0 || (doc.hasTS && doc.ts < to))
	}, true
}

// best returns the limit docs that keep accepts with the highest bm25()
// of toks, best first, ties by key.
func (x *kwIndex) best(toks []string, limit int, keep func(*kwDoc) bool) []kwHit {
	h := &kwHeap{}
	x.score(toks, keep, func(d uint32, score float64) {
		hit := kwHit{seq: x.docs[d].seq, score: score}
		if h.Len() < limit {
			heap.Push(h, hit)
		} else if kwBetter(hit, (*h)[0]) {
			(*h)[0] = hit
			heap.Fix(h, 0)
		}
	})
	hits := make([]kwHit, h.Len())
	for i := len(hits) - 1; i >= 0; i-- {
		hits[i] = heap.Pop(h).(kwHit)
	}
	return hits
}

// score calls emit with the bm25() of toks of every live doc that holds
// one of them and that keep accepts (nil: all), in no order.
func (x *kwIndex) score(toks []string, keep func(*kwDoc) bool, emit func(d uint32, score float64)) {
	if x.live == 0 {
		return
	}
	N := float64(x.live)
	avgdl := float64(x.tokens) / N
	sc := kwScratchPool.Get().(*kwScratch)
	defer kwScratchPool.Put(sc)
	if len(sc.acc) < len(x.docs) {
		sc.acc = make([]float64, len(x.docs)+len(x.docs)/4)
	}
	acc, touched := sc.acc, sc.touched[:0]
	for _, tok := range toks {
		id, found := x.termID[tok]
		if !found {
			continue // idf of a term in no row: it adds nothing to any score
		}
		df := x.df(id)
		if df == 0 {
			continue
		}
		enc := x.post[id].enc
		nHit := float64(df)
		idf := math.Log((N - nHit + 0.5) / (nHit + 0.5))
		if idf <= 0 {
			idf = 1e-6
		}
		for i, d := 0, uint32(0); i < len(enc); {
			// nextPosting, its usual cases inline: a gap under 64 with
			// the usual frequency, or with a text count under 128.
			tf := uint16(kwOneTF)
			if v := enc[i]; v&0x81 == 1 {
				d, i = d+uint32(v>>1), i+1
			} else if f := enc[i+1]; v < 0x80 && f < 0x80 {
				d, tf, i = d+uint32(v>>1), uint16(f)<<8, i+2
			} else {
				d, tf, i = nextPosting(enc, i, d)
			}
			doc := &x.docs[d]
			if doc.dead || (keep != nil && !keep(doc)) {
				continue
			}
			f := float64(tf >> 8)
			if tf>>8 == kwBigTF {
				f = float64(x.bigTF[bigKey(id, d)])
			}
			for range tf & 0xff {
				f += speakerWeight
			}
			D := float64(doc.size)
			if acc[d] == 0 {
				touched = append(touched, d)
			}
			acc[d] += idf * ((f * (bm25K1 + 1.0)) / (f + bm25K1*(1-bm25B+bm25B*D/avgdl)))
		}
	}
	for _, d := range touched {
		emit(d, acc[d])
		acc[d] = 0
	}
	sc.touched = touched[:0]
}

// kwScratch is a search's accumulator: a score by doc, and the docs that
// have one.
type kwScratch struct {
	acc     []float64
	touched []uint32
}

var kwScratchPool = sync.Pool{New: func() any { return new(kwScratch) }}

// kwBetter orders hits best first: score, then the older seq.
func kwBetter(a, b kwHit) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return a.seq < b.seq
}

// kwHeap is a min-heap of hits, the worst on top.
type kwHeap []kwHit

func (h kwHeap) Len() int           { return len(h) }
func (h kwHeap) Less(i, j int) bool { return kwBetter(h[j], h[i]) }
func (h kwHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *kwHeap) Push(x any)        { *h = append(*h, x.(kwHit)) }
func (h *kwHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// rankFromMemory ranks terms with the keyword index into s, if it is
// loaded and current; it reports whether it did. A turn ranked but gone
// when its row is read (deleted meanwhile) is left out.
func (db *DB) rankFromMemory(ctx context.Context, s *search, terms []term) (bool, error) {
	k := &db.kw
	k.mu.RLock()
	loaded, warm := k.idx != nil, k.warm
	k.mu.RUnlock()
	if !loaded && !warm {
		return false, nil
	}
	var gen int64
	err := db.View(ctx, func(tx *sql.Tx) error {
		rows, err := db.readQuery(ctx, tx, `SELECT value FROM palace_meta WHERE key = ?`, keyKeywordGen)
		if err != nil {
			return err
		}
		defer rows.Close()
		if rows.Next() {
			if err := rows.Scan(&gen); err != nil {
				return err
			}
		}
		return rows.Err()
	})
	if err != nil {
		return false, err
	}
	k.mu.RLock()
	var (
		hits   []kwHit
		ok     bool
		behind bool
	)
	switch {
	case k.idx == nil:
	case k.idx.gen < gen:
		// A change not applied yet: one of this process's writes between
		// its commit and its apply, or another process's write. With no
		// write of this process in flight it is the latter, and the
		// changes pending behind it wait for a generation no write here
		// will bring: rebuild.
		behind = k.writers == 0 && !k.building
	default:
		hits, ok = k.idx.rank(terms, s.ns, s.from, s.to, s.limit)
	}
	k.mu.RUnlock()
	if behind {
		db.rebuildKeywordIndex()
	}
	if !ok {
		return false, nil
	}
	k.ranked.Add(1)
	s.floor = 1
	if len(hits) == 0 {
		return true, nil
	}
	turns := make(map[int64]engram.Turn, len(hits))
	err = db.View(ctx, func(tx *sql.Tx) error {
		rows, err := db.readQuery(ctx, tx, `SELECT `+turnColumns+` FROM turns t WHERE t.seq IN (SELECT value FROM json_each(?))`, jsonList(hitKeys(hits)))
		if err != nil {
			return err
		}
		return scanTurns(rows, func(t engram.Turn, _ float64) { turns[t.Seq] = t })
	})
	if err != nil {
		return false, err
	}
	for _, h := range hits {
		t, found := turns[h.seq]
		if !found {
			continue
		}
		if s.add(t, h.score) {
			s.floor = h.score
		}
	}
	return true, nil
}

// Keyword index states, as KeywordIndexStates reports them.
const (
	IndexLoading = "loading"
	IndexReady   = "ready"
	IndexFailed  = "failed"
)

// KeywordIndexStates reports the in-memory keyword indexes that are warm
// (WarmKeywordIndex), by what they index ("turns", "units", "scenes",
// "memories"): IndexLoading until the first load is done (searches use
// FTS5 meanwhile), IndexReady once it is, IndexFailed when it failed
// (searches stay with FTS5). Nil when none is warm. It takes no lock of
// the indexes.
func (db *DB) KeywordIndexStates() map[string]string {
	states := map[string]string{}
	for name, st := range map[string]*loadState{"turns": &db.kw.state, "units": &db.ukw.state, "scenes": &db.skw.state, "memories": &db.mkw.state} {
		if t := st.text(); t != "" {
			states[name] = t
		}
	}
	if len(states) == 0 {
		return nil
	}
	return states
}
