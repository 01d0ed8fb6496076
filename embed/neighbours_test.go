package embed_test

import (
	"slices"
	"testing"

	"github.com/engram-dev/engram/embed"
)

func TestNeighbours(t *testing.T) {
	got := embed.Neighbours("Books", 8, 0.5)
	if len(got) == 0 || len(got) > 8 {
		t.Fatalf("neighbours of books: %v", got)
	}
	var words []string
	for i, n := range got {
		words = append(words, n.Word)
		if n.Word == "books" || n.Sim < 0.5 || n.Sim > 1 || (i > 0 && n.Sim > got[i-1].Sim) {
			t.Errorf("neighbour %d: %+v (of %v)", i, n, got)
		}
	}
	if !slices.Contains(words, "book") || !slices.Contains(words, "novels") {
		t.Errorf("the neighbours of books miss book or novels: %v", words)
	}
	if got := embed.Neighbours("qzxvbnm", 5, 0); got != nil {
		t.Errorf("a word outside the vocabulary: %v", got)
	}
	if got := embed.Neighbours("books", 3, 0.99); len(got) != 0 {
		t.Errorf("nothing is that close: %v", got)
	}
	the, ok1 := embed.Rank("the")
	adoption, ok2 := embed.Rank("Adoption")
	if !ok1 || !ok2 || the != 0 || adoption < 1000 {
		t.Errorf("ranks: the %d %v, adoption %d %v", the, ok1, adoption, ok2)
	}
	if _, ok := embed.Rank("qzxvbnm"); ok {
		t.Error("a word outside the vocabulary has a rank")
	}
	if !embed.Known("lisbon") || embed.Known("qzxvbnm") {
		t.Error("Known")
	}
}
