// Package neardup finds the near-duplicates of a memory without reading
// the memories that cannot be one: sets of words whose Jaccard overlap
// (intersection over union) is at least 4/5.
//
// It is prefix filtering (Chaudhuri, Ganti and Kaushik, "A primitive
// operator for similarity joins", 2006): order every word by one global
// order (here a hash of the word); two sets with an overlap of at least
// 4/5 share a word among the first Len(|set|) words of each. A palace
// keeps each memory's Keys in a table and a lookup reads the memories
// holding one of the new memory's keys, of a size that can reach the
// overlap (Sizes); the overlap of each is then computed exactly. A set
// of n words has n - ceil(4n/5) + 1 keys: 3 of 10 words. The order need
// only be the same for the memories of one group (Group), which a lookup
// never leaves, so it puts the words of the group's subject last.
//
// The palace deletes a memory's rows by computing its keys again, so a
// change to Keys, Hash or Group needs a migration that fills the table
// anew.
package neardup

import (
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// The overlap of a near-duplicate, as a fraction: Num/Den.
const (
	Num = 4
	Den = 5
)

// Jaccard is the overlap of two sorted sets of distinct words, 0 when one
// is empty.
func Jaccard(a, b []string) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	inter := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch strings.Compare(a[i], b[j]) {
		case 0:
			inter++
			i++
			j++
		case -1:
			i++
		default:
			j++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// Sizes is the range of the sizes of the sets that can overlap a set of n
// words by Num/Den: the overlap is at most the smaller size over the
// larger.
func Sizes(n int) (lo, hi int) {
	return ceilDiv(Num*n, Den), Den * n / Num
}

// Len is the number of a set's first words, in the global order, that
// any set overlapping it by Num/Den holds one of: n - ceil(Num*n/Den) + 1.
func Len(n int) int {
	if n == 0 {
		return 0
	}
	return n - ceilDiv(Num*n, Den) + 1
}

// Keys returns the near-duplicate keys of a memory from its Key: the
// hashes (Hash) of the first Len(n) of its n words in an order that every
// memory of its group shares: the words of the group's subject last (a
// memory's text names its subject more often than not, so a key of it
// would lead to most of the group), the others by hash, then by word.
func Keys(key string) []int64 {
	words := KeyWords(key)
	subject := subjectWords(key)
	type kw struct {
		last bool
		h    int64
		w    string
	}
	all := make([]kw, len(words))
	for i, w := range words {
		all[i] = kw{slices.Contains(subject, w), Hash(w), w}
	}
	slices.SortFunc(all, func(a, b kw) int {
		switch {
		case a.last != b.last:
			if b.last {
				return -1
			}
			return 1
		case a.h != b.h:
			if a.h < b.h {
				return -1
			}
			return 1
		}
		return strings.Compare(a.w, b.w)
	})
	keys := make([]int64, 0, Len(len(words)))
	for _, k := range all[:Len(len(words))] {
		if !slices.Contains(keys, k.h) {
			keys = append(keys, k.h)
		}
	}
	return keys
}

// subjectWords are the words of a Key's lower-case subject.
func subjectWords(key string) []string {
	_, rest, _ := strings.Cut(key, "|")
	subject := rest[:max(strings.LastIndexByte(rest, '|'), 0)]
	return strings.FieldsFunc(subject, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// Hash is a word's place in the global order and its key.
func Hash(word string) int64 {
	h := fnv.New64a()
	h.Write([]byte(word))
	return int64(h.Sum64())
}

// Group is the key of the memories that can be near-duplicates of each
// other: those of one namespace, type and subject.
func Group(namespace, typ, subject string) int64 {
	h := fnv.New64a()
	for _, s := range []string{namespace, typ, subject} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return int64(h.Sum64())
}

// Key is a memory's exact-duplicate key, which the palace stores with it:
// its type, lower-case subject and sorted content words.
func Key(typ, subject string, words []string) string {
	return typ + "|" + strings.ToLower(subject) + "|" + strings.Join(words, " ")
}

// KeyWords returns the words of a Key (a subject may hold "|"; words do
// not).
func KeyWords(key string) []string {
	return strings.Fields(key[strings.LastIndexByte(key, '|')+1:])
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// KeysJSON is keys as a JSON array, as SQL's json_each reads them.
func KeysJSON(keys []int64) string {
	b := make([]byte, 0, 1+21*len(keys))
	b = append(b, '[')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, k, 10)
	}
	return string(append(b, ']'))
}
