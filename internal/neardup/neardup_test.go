package neardup

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestKeysMeetEveryNearDuplicate checks the lemma the lookup rests on,
// for the memories of one group (subject "W3"),
// over random sets of a small vocabulary (so that many pairs overlap):
// every pair of sets overlapping by 4/5 or more shares a key and has
// sizes in each other's Sizes; and the pairs that do are not all pairs,
// so the keys filter.
func TestKeysMeetEveryNearDuplicate(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	vocab := make([]string, 14)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%d", i)
	}
	var sets [][]string
	for range 600 {
		n := 1 + rng.IntN(12)
		var s []string
		for _, i := range rng.Perm(len(vocab))[:n] {
			s = append(s, vocab[i])
		}
		slices.Sort(s)
		sets = append(sets, s)
	}
	near, shared, pairs := 0, 0, 0
	for i, a := range sets {
		// The subject's word is ordered last, as a group's memories share
		// it.
		ka := Keys(Key("fact", "W3", a))
		if len(ka) != Len(len(a)) {
			t.Fatalf("%v: %d keys, want %d", a, len(ka), Len(len(a)))
		}
		lo, hi := Sizes(len(a))
		for _, b := range sets[i+1:] {
			pairs++
			meet := false
			for _, k := range Keys(Key("fact", "W3", b)) {
				meet = meet || slices.Contains(ka, k)
			}
			if meet {
				shared++
			}
			if Jaccard(a, b) < float64(Num)/Den {
				continue
			}
			near++
			if !meet {
				t.Errorf("%v and %v overlap by %.2f but share no key", a, b, Jaccard(a, b))
			}
			if len(b) < lo || len(b) > hi {
				t.Errorf("%v and %v overlap by %.2f but %d is outside Sizes(%d) = %d..%d", a, b, Jaccard(a, b), len(b), len(a), lo, hi)
			}
		}
	}
	if near < 100 {
		t.Fatalf("only %d near pairs: the test shows little", near)
	}
	if shared > pairs*3/4 {
		t.Errorf("%d of %d pairs share a key: the keys do not filter", shared, pairs)
	}
}

func TestLenAndSizes(t *testing.T) {
	for _, c := range []struct{ n, keys, lo, hi int }{
		{0, 0, 0, 0}, {1, 1, 1, 1}, {4, 1, 4, 5}, {5, 2, 4, 6}, {10, 3, 8, 12},
	} {
		if got := Len(c.n); got != c.keys {
			t.Errorf("Len(%d) = %d, want %d", c.n, got, c.keys)
		}
		if lo, hi := Sizes(c.n); lo != c.lo || hi != c.hi {
			t.Errorf("Sizes(%d) = %d..%d, want %d..%d", c.n, lo, hi, c.lo, c.hi)
		}
	}
}

func TestKeyWords(t *testing.T) {
	k := Key("fact", "A|B", []string{"lisbon", "moved"})
	if got := KeyWords(k); !slices.Equal(got, []string{"lisbon", "moved"}) {
		t.Errorf("KeyWords(%q) = %q", k, got)
	}
	if got := KeyWords(Key("fact", "x", nil)); len(got) != 0 {
		t.Errorf("no words: got %q", got)
	}
}

// TestKeysLeaveTheSubjectLast checks that a word of the subject is a key
// only when the other words are too few.
func TestKeysLeaveTheSubjectLast(t *testing.T) {
	words := []string{"ana", "bees", "honey", "keeps", "market", "mill", "sells", "stone", "tuesdays", "village"}
	k := Keys(Key("fact", "Ana", words))
	if slices.Contains(k, Hash("ana")) || len(k) != Len(len(words)) {
		t.Errorf("keys of %q: %v (ana %d)", words, k, Hash("ana"))
	}
	if k := Keys(Key("fact", "Ana", []string{"ana"})); !slices.Equal(k, []int64{Hash("ana")}) {
		t.Errorf("the subject's word alone: keys %v", k)
	}
}
