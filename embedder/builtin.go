package embedder

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"sync"

	"github.com/engram-dev/engram"
)

// Version is the version of the features and weights. It is part of the
// model name, so vectors stored under one version are never compared with
// vectors of another: any change that alters a vector (tokenizer, feature
// types, weights, hash, word vectors, dimension) must increment it.
const Version = 1

// The layout of a vector: a block of hashed lexical features followed by a
// block of word vectors.
const (
	// HashDim is the size of the hashed lexical block.
	HashDim = 412
	// WordDim is the size of the word-vector block (GloVe 100-d).
	WordDim = 100
	// Dim is the dimension of every vector.
	Dim = HashDim + WordDim
)

// Block weights: the share of a vector's squared norm given to each block
// when both have features. Measured on the LoCoMo development set, the word
// vectors carry most of the ranking signal and the lexical block adds exact
// matches of names, numbers and rare words (see doc.go).
const (
	hashShare = 0.2
	wordShare = 0.8
)

// model is the name vectors are stored under, e.g. "builtin-v1-512".
var model = "builtin-v" + strconv.Itoa(Version) + "-" + strconv.Itoa(Dim)

// Builtin is the built-in offline embedder: pure Go, deterministic, with no
// server and no download. It is safe for concurrent use, and its zero value
// is ready to use.
type Builtin struct{}

// scratchPool holds *scratch buffers, shared by every Builtin: they carry
// nothing from one text to the next.
var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

var _ engram.Embedder = (*Builtin)(nil)

// New returns the built-in embedder. Its word vectors, embedded in the
// binary, are parsed on the first Embed of the process (a few milliseconds).
func New() *Builtin { return &Builtin{} }

// Model returns the versioned model name, "builtin-v<Version>-<Dim>".
func (b *Builtin) Model() string { return model }

// Dim returns the vector dimension.
func (b *Builtin) Dim() int { return Dim }

// Embed returns one unit-length vector of Dim components per text, in
// order. A text without any feature (empty, white space or punctuation only)
// gets one fixed unit vector, never a zero vector, so a cosine is always
// defined. Embed returns ctx's error if ctx ends first, and an error if the
// embedded word vectors cannot be read (a broken build).
func (b *Builtin) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	voc, err := loadVocab()
	if err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	flat := make([]float32, len(texts)*Dim)
	s := scratchPool.Get().(*scratch)
	defer func() {
		s.trim()
		scratchPool.Put(s)
	}()
	for i, text := range texts {
		if i > 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		v := flat[i*Dim : (i+1)*Dim : (i+1)*Dim]
		s.embed(voc, text, v)
		out[i] = v
	}
	return out, nil
}

// scratch holds the buffers of one embedding, reused through a sync.Pool.
type scratch struct {
	text  []byte   // the text in NFKC and lower case
	toks  []token  // its tokens
	keys  []uint64 // feature keys, sorted to count term frequencies
	gram  []byte   // "<word>" for character n-grams
	runes []int    // rune offsets in gram
}

// maxKeep bounds the buffers a scratch keeps between calls, so that one huge
// text does not pin its buffers in the pool.
const maxKeep = 1 << 16

func (s *scratch) trim() {
	if cap(s.keys) > maxKeep {
		s.keys = nil
	}
	if cap(s.text) > maxKeep {
		s.text = nil
	}
	if cap(s.toks) > maxKeep {
		s.toks = nil
	}
	if cap(s.gram) > maxKeep || cap(s.runes) > maxKeep {
		s.gram, s.runes = nil, nil
	}
}

// embed writes the vector of text into v (len Dim, zeroed).
func (s *scratch) embed(voc *vocab, text string, v []float32) {
	s.tokenize(text)
	s.keys = s.keys[:0]
	hv, wv := v[:HashDim], v[HashDim:]
	for _, t := range s.toks {
		switch t.kind {
		case tokWord:
			s.wordFeatures(t.b)
			voc.add(wv, t.b)
		case tokCJK:
			s.cjkFeatures(t.b)
		case tokSymbol:
			s.keys = append(s.keys, key(featSymbol, t.b))
		}
	}
	accumulate(hv, s.keys)
	hn, wn := sumSquares(hv), sumSquares(wv)
	switch {
	case hn > 0 && wn > 0:
		scale(hv, math.Sqrt(hashShare/hn))
		scale(wv, math.Sqrt(wordShare/wn))
	case hn > 0:
		scale(hv, 1/math.Sqrt(hn))
	case wn > 0:
		scale(wv, 1/math.Sqrt(wn))
	default:
		i, sign := bucket(emptyKey)
		v[i] = sign
	}
}

func sumSquares(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(float64(x) * float64(x)) // no fused multiply-add: see accumulate
	}
	return s
}

func scale(v []float32, f float64) {
	for i, x := range v {
		v[i] = float32(float64(x) * f)
	}
}

// errVocab wraps a failure to read the embedded word vectors.
func errVocab(err error) error {
	return fmt.Errorf("embed: read embedded word vectors (a broken build; regenerate with go run ./scripts/glove): %w", err)
}
