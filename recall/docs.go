package recall

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/engram-dev/engram"
)

// Document recall.
const (
	docHits          = 20   // chunks proposed by each of BM25 and vector search
	docExpandFrom    = 3    // best chunks whose documents' links are followed
	docLinkDepth     = 2    // how far links are followed (incident -> ADR -> rule)
	docLinkDecay     = 0.75 // a linked document's relevance per step from the chunk that links it
	minDocRelevance  = 0.25 // below it a chunk is not worth a result
	docRelevanceKeys = 0.5  // share of query-word coverage in a relevance; the rest is the cosine
	maxChunksPerDoc  = 2    // chunks of one document among the results: room for other documents
)

// docItem is a document chunk with its relevance (0..1), comparable with a
// turn's: half the share of the query's words it holds, half its cosine to
// the query.
type docItem struct {
	chunk      engram.DocChunk
	r          float64
	linkedFrom string
	depth      int
}

// withDocs merges the vault chunks matching the query into results (ranked
// turns and layer items). Each chunk and each result gets a relevance that
// compares across them (query-word coverage and cosine); a chunk goes before
// the first result less relevant than it, so the fused order of the turns
// is kept. The documents linked from the best chunks (depth 2) join as
// results too, named by the chunk that links them. Without vaults, or when
// the search fails (with a warning), results are returned as they are.
func (s *Service) withDocs(ctx context.Context, v *Vectors, ns, text string, results []engram.Result, wantOthers bool, warn func(string)) ([]engram.Result, error) {
	if s.Docs == nil {
		return results, nil
	}
	docs, qvec, err := s.docItems(ctx, v, ns, text)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		warn(fmt.Sprintf("the vaults could not be searched (%s): no document results", engram.ErrorMessage(err)))
		return results, nil
	}
	if len(docs) == 0 {
		return results, nil
	}
	if !wantOthers {
		out := make([]engram.Result, 0, len(docs))
		for _, d := range docs {
			out = append(out, docResult(d))
		}
		return out, nil
	}
	// The relevance of the other results, on the same scale.
	rel := make([]float64, len(results))
	terms := contentWords(text)
	var texts []string
	var missing []int
	for i, r := range results {
		rel[i] = docRelevanceKeys * coverage(terms, r.Text)
		if qvec != nil {
			texts = append(texts, r.Text)
			missing = append(missing, i)
		}
	}
	if len(texts) > 0 {
		vecs, err := v.Embedder.Embed(ctx, texts)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			warn(fmt.Sprintf("embedding results to rank documents among them failed (%s)", engram.ErrorMessage(err)))
		} else {
			for j, i := range missing {
				rel[i] += (1 - docRelevanceKeys) * math.Max(0, engram.Cosine(qvec, vecs[j]))
			}
		}
	}
	out := make([]engram.Result, 0, len(results)+len(docs))
	d := 0
	for i, r := range results {
		for d < len(docs) && docs[d].r > rel[i] {
			out = append(out, docResult(docs[d]))
			d++
		}
		out = append(out, r)
	}
	for ; d < len(docs); d++ {
		out = append(out, docResult(docs[d]))
	}
	return out, nil
}

// docItems finds the chunks relevant to the query, best first, with the
// first chunk of each document linked from the best ones, and returns the
// query's vector (nil without vectors).
func (s *Service) docItems(ctx context.Context, v *Vectors, ns, text string) ([]docItem, []float32, error) {
	hits, err := s.Docs.SearchChunks(ctx, engram.TextQuery{Namespace: ns, Text: text, Limit: docHits})
	if err != nil {
		return nil, nil, err
	}
	byID := map[string]*docItem{}
	var order []*docItem
	add := func(c engram.DocChunk) *docItem {
		if it, ok := byID[c.ID]; ok {
			return it
		}
		it := &docItem{chunk: c}
		byID[c.ID] = it
		order = append(order, it)
		return it
	}
	for _, h := range hits {
		add(h.Chunk)
	}
	var qvec []float32
	cos := map[string]float64{}
	if v != nil && v.Unavailable == "" {
		var err error
		if qvec, err = embedQuery(ctx, v.Embedder, text); err != nil {
			return nil, nil, err
		}
		vh, err := v.Index.Query(ctx, engram.VectorQuery{Vector: qvec, K: docHits, Namespace: ns, Kinds: []string{engram.KindDoc}})
		if err != nil {
			return nil, nil, fmt.Errorf("vector query: %w", err)
		}
		var ids []string
		for _, h := range vh {
			cos[h.ID] = h.Score
			ids = append(ids, h.ID)
		}
		chunks, err := s.Docs.GetChunks(ctx, ids)
		if err != nil {
			return nil, nil, err
		}
		for _, c := range chunks {
			add(c)
		}
	}
	if err := s.score(ctx, v, qvec, text, order, cos); err != nil {
		return nil, nil, err
	}
	kept := order[:0]
	for _, it := range order {
		if it.r >= minDocRelevance {
			kept = append(kept, it)
		}
	}
	sortItems(kept)
	linked, err := s.linkedDocs(ctx, kept, byID)
	if err != nil {
		return nil, nil, err
	}
	kept = append(kept, linked...)
	sortItems(kept)
	out := make([]docItem, 0, len(kept))
	perDoc := map[string]int{}
	for _, it := range kept {
		key := it.chunk.Vault + "\x00" + it.chunk.Path
		if perDoc[key] == maxChunksPerDoc {
			continue
		}
		perDoc[key]++
		out = append(out, *it)
	}
	return out, qvec, nil
}

// score sets each item's relevance; chunks the vector search did not return
// are embedded for their cosine.
func (s *Service) score(ctx context.Context, v *Vectors, qvec []float32, text string, items []*docItem, cos map[string]float64) error {
	terms := contentWords(text)
	var texts []string
	var missing []*docItem
	for _, it := range items {
		c := it.chunk
		it.r = docRelevanceKeys * coverage(terms, c.Title+" "+strings.Join(c.Heading, " ")+" "+c.Text)
		if qvec == nil {
			it.r /= docRelevanceKeys // keyword evidence only: coverage is the whole relevance
			continue
		}
		if x, ok := cos[c.ID]; ok {
			it.r += (1 - docRelevanceKeys) * math.Max(0, x)
			continue
		}
		texts = append(texts, c.Title+"\n"+c.Text)
		missing = append(missing, it)
	}
	if len(texts) == 0 {
		return nil
	}
	vecs, err := v.Embedder.Embed(ctx, texts)
	if err != nil {
		return fmt.Errorf("embed chunks: %w", err)
	}
	for i, it := range missing {
		it.r += (1 - docRelevanceKeys) * math.Max(0, engram.Cosine(qvec, vecs[i]))
	}
	return nil
}

// linkedDocs follows the links of the best chunks' documents and returns
// the first chunk of each document reached that is not a result yet, its
// relevance decayed per step from the chunk it was reached from.
func (s *Service) linkedDocs(ctx context.Context, best []*docItem, have map[string]*docItem) ([]*docItem, error) {
	var out []*docItem
	seenDoc := map[string]bool{}
	for _, it := range best {
		seenDoc[it.chunk.Vault+"\x00"+it.chunk.Path] = true
	}
	for _, it := range best[:min(docExpandFrom, len(best))] {
		reach, err := s.Docs.Reach(ctx, it.chunk.Vault, []string{it.chunk.Path}, docLinkDepth)
		if err != nil {
			return nil, err
		}
		var paths []string
		depth := map[string]int{}
		for _, g := range reach {
			if !seenDoc[it.chunk.Vault+"\x00"+g.Path] {
				seenDoc[it.chunk.Vault+"\x00"+g.Path] = true
				paths = append(paths, g.Path)
				depth[g.Path] = g.Depth
			}
		}
		first, err := s.Docs.FirstChunks(ctx, it.chunk.Vault, paths)
		if err != nil {
			return nil, err
		}
		for _, c := range first {
			if _, ok := have[c.ID]; ok {
				continue
			}
			d := depth[c.Path]
			out = append(out, &docItem{chunk: c, r: it.r * math.Pow(docLinkDecay, float64(d)), linkedFrom: it.chunk.Path, depth: d})
		}
	}
	return out, nil
}

func sortItems(items []*docItem) {
	sort.SliceStable(items, func(i, j int) bool { return items[i].r > items[j].r })
}

// coverage is the share of terms that text holds (case-insensitive).
func coverage(terms []string, text string) float64 {
	if len(terms) == 0 {
		return 0
	}
	lower := strings.ToLower(text)
	n := 0
	for _, t := range terms {
		if strings.Contains(lower, t) {
			n++
		}
	}
	return float64(n) / float64(len(terms))
}

// docResult is the recall result of a chunk; its source names the file and
// lines.
func docResult(d docItem) engram.Result {
	c := d.chunk
	lines := strconv.Itoa(c.StartLine) + "-" + strconv.Itoa(c.EndLine)
	heading := c.Heading
	if heading == nil {
		heading = []string{}
	}
	return engram.Result{
		ID: c.ID, Kind: engram.KindDoc, Text: c.Text, Score: d.r, TS: c.ModTime, Namespace: c.Namespace,
		Doc: &engram.DocRef{Vault: c.Vault, Path: c.Path, Title: c.Title, Heading: heading, StartLine: c.StartLine,
			EndLine: c.EndLine, LinkedFrom: d.linkedFrom, Depth: d.depth},
		Sources: []engram.Source{{ID: c.ID, TS: c.ModTime, Path: c.Path, Lines: lines}},
	}
}
