package kwindex

import (
	"container/heap"
	"math"
	"sync"
)

// BM25 parameters, as FTS5's bm25() has them.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// Hit is a ranked doc: its key and its bm25() score, higher is better
// (FTS5's rank is its negative).
type Hit struct {
	Key   int64
	Score float64
}

// Keys is the key of each hit.
func Keys(hits []Hit) []int64 {
	keys := make([]int64, len(hits))
	for i, h := range hits {
		keys[i] = h.Key
	}
	return keys
}

// Filter is which docs a search returns, as the FTS5 searches' WHERE
// clauses have it. Hidden docs are never returned.
type Filter struct {
	Namespace string // "": any
	// From and To bound the docs' times (Unix nanoseconds; 0: no bound):
	// a doc's time in [From, To), or with Spans, its span [TS, End]
	// overlapping it (units, scenes).
	From, To int64
	Spans    bool
	// Keys, when not nil, are the only docs returned (and neither the
	// namespace, the times nor Hidden is looked at).
	Keys map[int64]bool
}

// keep is f as a test of a doc; some is false when no doc can pass.
func (x *Index) keep(f Filter) (keep func(*entry) bool, some bool) {
	if f.Keys != nil {
		return func(d *entry) bool { return f.Keys[d.key] }, true
	}
	nsc, nsOK := x.nsCode[f.Namespace]
	if f.Namespace != "" && !nsOK {
		return nil, false
	}
	ns, from, to := f.Namespace, f.From, f.To
	if f.Spans {
		return func(d *entry) bool {
			if d.hidden || (ns != "" && d.ns != nsc) {
				return false
			}
			return (from == 0 || (d.hasEnd && d.end >= from)) && (to == 0 || (d.hasTS && d.ts < to))
		}, true
	}
	return func(d *entry) bool {
		if d.hidden || (ns != "" && d.ns != nsc) {
			return false
		}
		return (from == 0 || (d.hasTS && d.ts >= from)) && (to == 0 || (d.hasTS && d.ts < to))
	}, true
}

// Best returns the limit docs that f passes with the highest bm25() of
// toks (QueryTokens), best first, ties by key.
func (x *Index) Best(toks []string, f Filter, limit int) []Hit {
	keep, some := x.keep(f)
	if !some {
		return nil
	}
	h := &hitHeap{}
	x.score(toks, keep, func(d uint32, score float64) {
		hit := Hit{Key: x.docs[d].key, Score: score}
		if h.Len() < limit {
			heap.Push(h, hit)
		} else if better(hit, (*h)[0]) {
			(*h)[0] = hit
			heap.Fix(h, 0)
		}
	})
	hits := make([]Hit, h.Len())
	for i := len(hits) - 1; i >= 0; i-- {
		hits[i] = heap.Pop(h).(Hit)
	}
	return hits
}

// Score calls emit with the bm25() of toks of every doc that f passes and
// that holds one of them, in no order.
func (x *Index) Score(toks []string, f Filter, emit func(Hit)) {
	keep, some := x.keep(f)
	if !some {
		return
	}
	x.score(toks, keep, func(d uint32, score float64) { emit(Hit{Key: x.docs[d].key, Score: score}) })
}

// score calls emit with the bm25() of toks of every live doc that holds
// one of them and that keep accepts (nil: all), in no order. It computes
// as FTS5's fts5Bm25Function does, operation for operation, so that the
// scores are FTS5's to the last bit: idf = ln((N - n + 0.5) / (n + 0.5)),
// at least 1e-6; a term's frequency in a doc is the sum of its matches'
// column weights, added one by one.
func (x *Index) score(toks []string, keep func(*entry) bool, emit func(d uint32, score float64)) {
	if x.live == 0 {
		return
	}
	N := float64(x.live)
	avgdl := float64(x.tokens) / N
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
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
			// the usual frequency, or with a first count under 128.
			tf := uint16(oneTF)
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
			if tf>>8 == bigTF {
				f = float64(x.bigTF[bigKey(id, d)])
			}
			for range tf & 0xff {
				f += x.second
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

// scratch is a search's accumulator: a score by doc, and the docs that
// have one.
type scratch struct {
	acc     []float64
	touched []uint32
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// better orders hits best first: score, then the lower key (the older
// turn).
func better(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.Key < b.Key
}

// hitHeap is a min-heap of hits, the worst on top.
type hitHeap []Hit

func (h hitHeap) Len() int           { return len(h) }
func (h hitHeap) Less(i, j int) bool { return better(h[j], h[i]) }
func (h hitHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *hitHeap) Push(x any)        { *h = append(*h, x.(Hit)) }
func (h *hitHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
