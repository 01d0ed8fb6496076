package embedder

import (
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
)

// gloveData holds the 40,000 most frequent words of GloVe 6B 100-d that the
// tokenizer can produce, int8-quantised, written by scripts/glove (its doc
// comment describes the format). A string, so the vocabulary's words and
// components are read in place, never copied.
//
//go:generate go run ../scripts/glove -n 40000 -out glove.bin
//go:embed glove.bin
var gloveData string

const gloveMagic = "EGLOVE01"

// sifA is the a of the SIF weight a / (a + p(w)) (Arora, Liang and Ma
// 2017): frequent words, whose vectors say little about a sentence, weigh
// little.
const sifA = 1e-3

// vocab maps words to their vectors in gloveData.
type vocab struct {
	index  map[string]int32
	words  []string  // word i, a slice of data
	off    []uint32  // offset of word i's int8 components in data
	weight []float32 // word i's SIF weight times its quantisation scale
	data   string
	dim    int
}

var loadVocab = sync.OnceValues(func() (*vocab, error) {
	v, err := parseVocab(gloveData)
	if err != nil {
		return nil, errVocab(err)
	}
	if v.dim != WordDim {
		return nil, errVocab(fmt.Errorf("dimension %d, want %d", v.dim, WordDim))
	}
	return v, nil
})

var errCorrupt = errors.New("corrupt word vector file")

// parseVocab reads the format written by scripts/glove.
func parseVocab(data string) (*vocab, error) {
	if len(data) < len(gloveMagic)+12 || data[:len(gloveMagic)] != gloveMagic {
		return nil, fmt.Errorf("%w: no %s header", errCorrupt, gloveMagic)
	}
	p := len(gloveMagic)
	u32 := func() int {
		x := binary.LittleEndian.Uint32([]byte(data[p : p+4]))
		p += 4
		return int(x)
	}
	n, dim, srcN := u32(), u32(), u32()
	if dim <= 0 || dim > 4096 || n <= 0 || n > srcN || n > len(data)/(dim+6) {
		return nil, fmt.Errorf("%w: header says %d words of dimension %d from %d", errCorrupt, n, dim, srcN)
	}
	// p(w) of the word of 1-based rank r under Zipf's law: 1 / (r H(N)),
	// with H(N) the N-th harmonic number of the source vocabulary.
	var h float64
	for r := 1; r <= srcN; r++ {
		h += 1 / float64(r)
	}
	v := &vocab{
		index:  make(map[string]int32, n),
		words:  make([]string, n),
		off:    make([]uint32, n),
		weight: make([]float32, n),
		data:   data,
		dim:    dim,
	}
	uvarint := func() (uint64, bool) {
		x, k := binary.Uvarint([]byte(data[p:min(len(data), p+binary.MaxVarintLen64)]))
		if k <= 0 {
			return 0, false
		}
		p += k
		return x, true
	}
	rank := 0
	for i := range n {
		gap, ok1 := uvarint()
		wlen, ok2 := uvarint()
		if !ok1 || !ok2 || wlen == 0 || wlen > 256 || uint64(len(data)-p) < wlen+4+uint64(dim) || gap > uint64(srcN) {
			return nil, fmt.Errorf("%w: word %d is truncated", errCorrupt, i)
		}
		rank += int(gap)
		if rank >= srcN {
			return nil, fmt.Errorf("%w: word %d has rank %d of %d", errCorrupt, i, rank, srcN)
		}
		w := data[p : p+int(wlen)]
		p += int(wlen)
		sc := math.Float32frombits(binary.LittleEndian.Uint32([]byte(data[p : p+4])))
		p += 4
		if _, dup := v.index[w]; dup || sc < 0 || math.IsNaN(float64(sc)) || math.IsInf(float64(sc), 0) {
			return nil, fmt.Errorf("%w: word %d (%q) is a duplicate or has a bad scale", errCorrupt, i, w)
		}
		pw := 1 / (float64(rank+1) * h)
		v.index[w] = int32(i)
		v.words[i] = w
		v.off[i] = uint32(p)
		v.weight[i] = float32(sifA / (sifA + pw) * float64(sc))
		p += dim
		rank++
	}
	if p != len(data) {
		return nil, fmt.Errorf("%w: %d bytes after the last word", errCorrupt, len(data)-p)
	}
	return v, nil
}

// add adds the SIF-weighted vector of word w, if known, to the word block.
func (v *vocab) add(dst []float32, w []byte) {
	i, ok := v.index[string(w)]
	if !ok {
		return
	}
	wt := v.weight[i]
	q := v.data[v.off[i] : int(v.off[i])+v.dim]
	dst = dst[:len(q)]
	for j := range len(q) {
		dst[j] += float32(wt * float32(int8(q[j]))) // no fused multiply-add: see accumulate
	}
}
