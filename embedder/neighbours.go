package embedder

import (
	"container/heap"
	"math"
	"strings"
	"sync"
)

// Neighbour is a word of the word-vector vocabulary and its cosine
// similarity to another word.
type Neighbour struct {
	Word string
	Sim  float64
}

// norms holds the length of every word's int8 vector, computed once.
var norms = sync.OnceValue(func() []float32 {
	voc, err := loadVocab()
	if err != nil {
		return nil
	}
	out := make([]float32, len(voc.off))
	for i, off := range voc.off {
		q := voc.data[off : int(off)+voc.dim]
		var s int32
		for j := range len(q) {
			x := int32(int8(q[j]))
			s += x * x
		}
		out[i] = float32(math.Sqrt(float64(s)))
	}
	return out
})

// Known reports whether w (lower case) is in the word-vector vocabulary.
func Known(w string) bool {
	voc, err := loadVocab()
	if err != nil {
		return false
	}
	_, ok := voc.index[w]
	return ok
}

// Neighbours returns up to n words of the word-vector vocabulary (the 40,000
// most frequent English words of GloVe) nearest to w by cosine similarity,
// best first, w itself left out, each with a similarity of at least minSim.
// w is looked up in lower case; a word outside the vocabulary has none. One
// call scans the vocabulary: about a millisecond.
func Neighbours(w string, n int, minSim float64) []Neighbour {
	voc, err := loadVocab()
	if err != nil || n <= 0 {
		return nil
	}
	w = strings.ToLower(w)
	wi, ok := voc.index[w]
	if !ok {
		return nil
	}
	ns := norms()
	if ns[wi] == 0 {
		return nil
	}
	q := voc.data[voc.off[wi] : int(voc.off[wi])+voc.dim]
	var qv [WordDim]int32
	for j := range len(q) {
		qv[j] = int32(int8(q[j]))
	}
	h := &simHeap{}
	for i, off := range voc.off {
		if int32(i) == wi || ns[i] == 0 {
			continue
		}
		d := voc.data[off : int(off)+voc.dim]
		var dot int32
		for j := range len(d) {
			dot += qv[j] * int32(int8(d[j]))
		}
		sim := float64(dot) / float64(ns[wi]*ns[i])
		if sim < minSim {
			continue
		}
		if h.Len() < n {
			heap.Push(h, simEntry{i, sim})
		} else if sim > (*h)[0].sim {
			(*h)[0] = simEntry{i, sim}
			heap.Fix(h, 0)
		}
	}
	out := make([]Neighbour, h.Len())
	for i := len(out) - 1; i >= 0; i-- {
		e := heap.Pop(h).(simEntry)
		out[i] = Neighbour{Word: voc.words[e.i], Sim: e.sim}
	}
	return out
}

type simEntry struct {
	i   int
	sim float64
}

// simHeap is a min-heap of similarities: the worst kept one on top.
type simHeap []simEntry

func (h simHeap) Len() int           { return len(h) }
func (h simHeap) Less(i, j int) bool { return h[i].sim < h[j].sim }
func (h simHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *simHeap) Push(x any)        { *h = append(*h, x.(simEntry)) }
func (h *simHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// Rank returns w's frequency rank among the words of the word-vector
// vocabulary (0 for the most frequent English word, "the"), and false for a
// word outside it. w is looked up in lower case.
func Rank(w string) (int, bool) {
	voc, err := loadVocab()
	if err != nil {
		return 0, false
	}
	i, ok := voc.index[strings.ToLower(w)]
	return int(i), ok
}

// Words is the word-vector vocabulary as recall's query expansion asks it
// (recall.WordVectors): Rank and the neighbours' words.
type Words struct{}

// Rank is the package's Rank.
func (Words) Rank(w string) (int, bool) { return Rank(w) }

// Neighbours returns the words of the package's Neighbours.
func (Words) Neighbours(w string, n int, minSim float64) []string {
	var out []string
	for _, nb := range Neighbours(w, n, minSim) {
		out = append(out, nb.Word)
	}
	return out
}

// Word returns the word of frequency rank i in the word-vector vocabulary
// (see Rank), and false for a rank outside it.
func Word(i int) (string, bool) {
	voc, err := loadVocab()
	if err != nil || i < 0 || i >= len(voc.words) {
		return "", false
	}
	return voc.words[i], true
}
