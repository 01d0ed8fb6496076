package recall

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/engram-dev/engram"
)

// WordVectors is what query expansion needs of a word-vector vocabulary
// (package embedder's GloVe block): a word's frequency rank and its nearest
// neighbours.
type WordVectors interface {
	// Rank returns w's frequency rank (0 the most frequent), false for a
	// word outside the vocabulary.
	Rank(w string) (int, bool)
	// Neighbours returns up to n words nearest to w with a similarity of
	// at least minSim, best first.
	Neighbours(w string, n int, minSim float64) []string
}

// The query side of the deep path: two ways to search with words the query
// does not say. Both are measured on the LoCoMo development set and off by
// default (docs/benchmarks.md): neither helped there.
const (
	// rm3Docs and rm3Terms: relevance feedback reads the best rm3Docs
	// candidates and searches again with their rm3Terms heaviest words.
	rm3Docs  = 10
	rm3Terms = 10
	// expandRank: a query word is rare when it is not among the 5,000 most
	// frequent English words (of the word-vector vocabulary); each rare word
	// brings its expandNeighbours nearest words of at least expandSim.
	expandRank       = 5000
	expandNeighbours = 3
	expandSim        = 0.6
)

// feedbackWords cuts s into lower-case words of letters and digits.
func feedbackWords(s string) []string { return words(strings.ToLower(s)) }

// rm3Query builds the feedback query of relevance feedback (RM3, Lavrenko
// and Croft 2001, with the candidates as the background): each word of the
// best candidates weighs the sum over them of base score times its share
// of the candidate's words, times its inverse frequency among all the
// candidates, so words every candidate shares (stopwords, the query's own
// topic) weigh little without a stopword list. Words of the query are left
// out; the rm3Terms heaviest are returned, best first.
func rm3Query(cands []*candidate, query string) []string {
	if len(cands) == 0 {
		return nil
	}
	df := map[string]int{}
	words := make([][]string, len(cands))
	for i, c := range cands {
		words[i] = feedbackWords(c.turn.Content)
		seen := map[string]bool{}
		for _, w := range words[i] {
			if !seen[w] {
				seen[w] = true
				df[w]++
			}
		}
	}
	order := make([]int, len(cands))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(cands[b].base, cands[a].base) })
	asked := map[string]bool{}
	for _, w := range feedbackWords(query) {
		asked[w] = true
	}
	weight := map[string]float64{}
	for _, i := range order[:min(rm3Docs, len(order))] {
		if len(words[i]) == 0 || cands[i].base <= 0 {
			continue
		}
		for _, w := range words[i] {
			if len([]rune(w)) < 3 || asked[w] {
				continue
			}
			weight[w] += cands[i].base / float64(len(words[i]))
		}
	}
	n := float64(len(cands))
	terms := make([]string, 0, len(weight))
	for w := range weight {
		weight[w] *= math.Log(n / float64(df[w]))
		if weight[w] > 0 {
			terms = append(terms, w)
		}
	}
	slices.SortFunc(terms, func(a, b string) int {
		if c := cmp.Compare(weight[b], weight[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return terms[:min(rm3Terms, len(terms))]
}

// expansionQuery returns the nearest neighbours, by the builtin embedder's
// word vectors, of the query's rare words: words a turn may say instead
// ("novels" for "books"). Forms of the word itself are left out (the
// keyword index stems them already).
func expansionQuery(words WordVectors, query string) []string {
	if words == nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, w := range feedbackWords(query) {
		seen[w] = true
	}
	for _, w := range feedbackWords(query) {
		if rank, ok := words.Rank(w); !ok || rank < expandRank {
			continue
		}
		for _, nb := range words.Neighbours(w, expandNeighbours, expandSim) {
			if seen[nb] || sharesStem(w, nb) {
				continue
			}
			seen[nb] = true
			out = append(out, nb)
		}
	}
	return out
}

// sharesStem reports whether a and b start alike enough to be forms of one
// word ("adopt", "adopted", "adoption").
func sharesStem(a, b string) bool {
	n := min(len(a), len(b), 5)
	return n >= 4 && a[:n] == b[:n]
}

// keywordSignal searches the keyword index for words and returns each
// candidate's BM25 for them divided by the best: the evidence of a second,
// feedback or expansion, query. Only the candidates are scored; the search
// proposes no new ones.
func (s *Service) keywordSignal(ctx context.Context, ns string, words []string, cands []*candidate, limit int, from, to time.Time) (map[*candidate]float64, error) {
	if len(words) == 0 {
		return nil, nil
	}
	hits, err := s.index.SearchTurns(ctx, engram.TextQuery{Namespace: ns, Text: strings.Join(words, " "), Limit: limit, From: from, To: to})
	if err != nil || len(hits) == 0 {
		return nil, err
	}
	score := make(map[string]float64, len(hits))
	best := 0.0
	for _, h := range hits {
		score[h.Turn.ID] = h.Score
		best = math.Max(best, h.Score)
	}
	out := map[*candidate]float64{}
	if best <= 0 {
		return out, nil
	}
	for _, c := range cands {
		if v, ok := score[c.turn.ID]; ok {
			out[c] = v / best
		}
	}
	return out, nil
}
