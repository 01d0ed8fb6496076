package embedder

import (
	"math"
	"math/bits"
	"slices"
	"unicode/utf8"
)

// Feature types. The type is part of a feature's identity (the same bytes
// as a word and as an n-gram are different features) and selects its
// weight. It sits in the low bits of a feature key.
const (
	featWord     = iota // a word
	featStopWord        // a word of the English stopword list
	featGram            // a character 3-, 4- or 5-gram of "<word>"
	featStopGram        // a character n-gram of a stopword
	featCJK1            // a Chinese, Japanese or Korean character
	featCJK2            // two adjacent CJK characters
	featSymbol          // a symbol such as an emoji
	featEmpty           // the one feature of a text that has no other
	featTypes
)

const typeBits = 3

// weights are the fixed weights of the feature types. They do not depend on
// any corpus (no IDF), so a stored vector never goes stale. Words and
// n-grams weigh 1 and 0.35 (a word has many n-grams), stopwords and their
// n-grams 0.3 of that; a CJK bigram, roughly a word, weighs 1 and a single
// character 0.5.
var weights = [featTypes]float32{
	featWord:     1,
	featStopWord: 0.3,
	featGram:     0.35,
	featStopGram: 0.35 * 0.3,
	featCJK1:     0.5,
	featCJK2:     1,
	featSymbol:   0.5,
	featEmpty:    1,
}

// Character n-grams of words: from minGram to maxGram runes.
const (
	minGram = 3
	maxGram = 5
)

// key returns the feature key of b as a feature of type typ: a 64-bit hash
// of the type and the bytes whose low typeBits bits hold the type.
func key(typ int, b []byte) uint64 {
	const (
		offset = 14695981039346656037
		prime  = 1099511628211
	)
	h := uint64(offset)
	h ^= uint64(typ)
	h *= prime
	for _, c := range b {
		h ^= uint64(c)
		h *= prime
	}
	// FNV-1a mixes its last bytes poorly into the high bits that pick the
	// bucket; the MurmurHash3 finaliser spreads every bit.
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h&^(1<<typeBits-1) | uint64(typ)
}

// emptyKey is the feature of a text without features.
var emptyKey = key(featEmpty, nil)

// bucket returns the component of the lexical block that feature key k
// adds to, and its sign (signed feature hashing: colliding features cancel
// out on average instead of piling up).
func bucket(k uint64) (int, float32) {
	i, _ := bits.Mul64(k, HashDim) // the high bits of k pick the bucket
	if k&(1<<typeBits) != 0 {
		return int(i), -1
	}
	return int(i), 1
}

// wordFeatures appends the features of word w: the word itself and its
// character n-grams, with boundary marks, so that "architecure" still
// shares most n-grams with "architecture".
func (s *scratch) wordFeatures(w []byte) {
	wt, gt := featWord, featGram
	if _, ok := stopwords[string(w)]; ok {
		wt, gt = featStopWord, featStopGram
	}
	s.keys = append(s.keys, key(wt, w))
	g := append(s.gram[:0], '<')
	g = append(g, w...)
	g = append(g, '>')
	s.gram = g
	r := s.runes[:0]
	for i := range string(g) {
		r = append(r, i)
	}
	r = append(r, len(g))
	s.runes = r
	nr := len(r) - 1 // runes in g
	for n := minGram; n <= maxGram && n <= nr; n++ {
		for i := 0; i+n <= nr; i++ {
			s.keys = append(s.keys, key(gt, g[r[i]:r[i+n]]))
		}
	}
}

// cjkFeatures appends the features of a run of CJK characters: each
// character and each pair of adjacent characters.
func (s *scratch) cjkFeatures(run []byte) {
	prev := -1 // offset of the previous character
	for i, c := range string(run) {
		n := utf8.RuneLen(c)
		if n < 0 {
			n = 1
		}
		s.keys = append(s.keys, key(featCJK1, run[i:i+n]))
		if prev >= 0 {
			s.keys = append(s.keys, key(featCJK2, run[prev:i+n]))
		}
		prev = i
	}
}

// tfTable holds 1 + ln(tf), the sublinear term frequency, for small tf.
var tfTable = func() (t [64]float32) {
	for i := 1; i < len(t); i++ {
		t[i] = float32(1 + math.Log(float64(i)))
	}
	return t
}()

// accumulate adds the features in keys into the lexical block v: each
// distinct feature once, with its type's weight times 1 + ln(tf). It sorts
// keys.
func accumulate(v []float32, keys []uint64) {
	slices.Sort(keys)
	for i := 0; i < len(keys); {
		k := keys[i]
		j := i + 1
		for j < len(keys) && keys[j] == k {
			j++
		}
		tf := j - i
		var f float32
		if tf < len(tfTable) {
			f = tfTable[tf]
		} else {
			f = float32(1 + math.Log(float64(tf)))
		}
		b, sign := bucket(k)
		// The explicit float32 conversion forbids a fused multiply-add, so
		// vectors are bit-identical on every architecture.
		v[b] += float32(sign * weights[k&(1<<typeBits-1)] * f)
		i = j
	}
}
