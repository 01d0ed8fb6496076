package embedder_test

import (
	"slices"
	"testing"

	"github.com/engram-dev/engram/embedder"
)

func TestNeighbours(t *testing.T) {
	got := embedder.Neighbours("Books", 8, 0.5)
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
	if got := embedder.Neighbours("qzxvbnm", 5, 0); got != nil {
		t.Errorf("a word outside the vocabulary: %v", got)
	}
	if got := embedder.Neighbours("books", 3, 0.99); len(got) != 0 {
		t.Errorf("nothing is that close: %v", got)
	}
	the, ok1 := embedder.Rank("the")
	adoption, ok2 := embedder.Rank("Adoption")
	if !ok1 || !ok2 || the != 0 || adoption < 1000 {
		t.Errorf("ranks: the %d %v, adoption %d %v", the, ok1, adoption, ok2)
	}
	if _, ok := embedder.Rank("qzxvbnm"); ok {
		t.Error("a word outside the vocabulary has a rank")
	}
	if !embedder.Known("lisbon") || embedder.Known("qzxvbnm") {
		t.Error("Known")
	}
}
