package chroma

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	v2 "github.com/amikos-tech/chroma-go/pkg/api/v2"
	"github.com/amikos-tech/chroma-go/pkg/embeddings"

	engram "github.com/engram-dev/engram"
)

// Upsert inserts or replaces vectors by ID, in requests of at most
// Config.BatchSize records. When one call holds an ID twice, the last item
// wins.
//
// Every item is checked before anything is sent: an empty ID, a vector
// whose dimension is not the index's (the message names both), a zero
// vector or one holding NaN or ±Inf returns EINVALID and writes nothing.
// A server error in a later batch leaves the earlier batches written;
// Upsert is idempotent, so retry the call. EUNAVAILABLE names the URL when
// the server does not answer.
func (ix *Index) Upsert(ctx context.Context, items []engram.VectorItem) error {
	if len(items) == 0 {
		return nil
	}
	last := make(map[string]int, len(items))
	for i, it := range items {
		if it.ID == "" {
			return engram.Errorf(engram.EINVALID, "chroma upsert: item %d has an empty id", i)
		}
		if err := ix.checkVector(fmt.Sprintf("item %d (id %q)", i, it.ID), it.Vector); err != nil {
			return err
		}
		last[it.ID] = i
	}
	ids := make([]v2.DocumentID, 0, len(last))
	embs := make([]embeddings.Embedding, 0, len(last))
	metas := make([]v2.DocumentMetadata, 0, len(last))
	for i, it := range items {
		if last[it.ID] != i {
			continue
		}
		ids = append(ids, v2.DocumentID(it.ID))
		embs = append(embs, embeddings.NewEmbeddingFromFloat32(it.Vector))
		metas = append(metas, v2.NewDocumentMetadata(
			v2.NewStringAttribute(keyKind, it.Kind),
			v2.NewStringAttribute(keyNamespace, it.Namespace),
			v2.NewIntAttribute(keyTS, it.TS.Unix()),
		))
	}
	for start := 0; start < len(ids); start += ix.cfg.BatchSize {
		end := min(start+ix.cfg.BatchSize, len(ids))
		err := ix.do(ctx, "upsert", func(col v2.Collection) error {
			return col.Upsert(ctx,
				v2.WithIDs(ids[start:end]...),
				v2.WithEmbeddings(embs[start:end]...),
				v2.WithMetadatas(metas[start:end]...),
			)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Query returns up to q.K hits, best first, with Score = 1 - cosine
// distance, the cosine similarity. Filters: Namespace (exact), Kinds (any
// of) and the time range [From, To), compared in whole seconds (see the
// package doc). The search is approximate (HNSW).
//
// Errors: EINVALID for q.K < 1 or a bad query vector (wrong dimension, zero,
// not finite); EUNAVAILABLE naming the URL when the server does not answer.
func (ix *Index) Query(ctx context.Context, q engram.VectorQuery) ([]engram.VectorHit, error) {
	if q.K < 1 {
		return nil, engram.Errorf(engram.EINVALID, "chroma query: k must be at least 1, got %d", q.K)
	}
	if err := ix.checkVector("query vector", q.Vector); err != nil {
		return nil, err
	}
	opts := []v2.CollectionQueryOption{
		v2.WithQueryEmbeddings(embeddings.NewEmbeddingFromFloat32(q.Vector)),
		v2.WithNResults(q.K),
		v2.WithInclude(v2.IncludeMetadatas, v2.IncludeDistances),
	}
	if where := whereFilter(q); where != nil {
		opts = append(opts, v2.WithWhere(where))
	}
	if len(q.IDs) > 0 {
		return ix.queryIDs(ctx, q)
	}
	var res v2.QueryResult
	err := ix.do(ctx, "query", func(col v2.Collection) error {
		var err error
		res, err = col.Query(ctx, opts...)
		return err
	})
	if err != nil {
		return nil, err
	}
	idGroups, distGroups, metaGroups := res.GetIDGroups(), res.GetDistancesGroups(), res.GetMetadatasGroups()
	if len(idGroups) == 0 {
		return nil, nil
	}
	ids := idGroups[0]
	if len(distGroups) == 0 || len(distGroups[0]) != len(ids) {
		return nil, engram.Errorf(engram.EINTERNAL, "chroma query at %s: %d ids but no matching distances", ix.cfg.URL, len(ids))
	}
	hits := make([]engram.VectorHit, len(ids))
	for i, id := range ids {
		hits[i] = engram.VectorHit{ID: string(id), Score: 1 - float64(distGroups[0][i])}
		if len(metaGroups) > 0 && i < len(metaGroups[0]) && metaGroups[0][i] != nil {
			hits[i].Kind, _ = metaGroups[0][i].GetString(keyKind)
		}
	}
	return hits, nil
}

// queryIDs answers a query restricted to ids: it gets their vectors (a
// query by ids fails on an id the collection lacks; a get skips it) and
// scores them here, exactly.
func (ix *Index) queryIDs(ctx context.Context, q engram.VectorQuery) ([]engram.VectorHit, error) {
	ids := make([]v2.DocumentID, 0, len(q.IDs))
	seen := make(map[string]bool, len(q.IDs))
	for _, id := range q.IDs {
		if !seen[id] { // the client refuses an id given twice
			seen[id] = true
			ids = append(ids, v2.DocumentID(id))
		}
	}
	opts := []v2.CollectionGetOption{v2.WithIDsGet(ids...), v2.WithIncludeGet(v2.IncludeEmbeddings, v2.IncludeMetadatas)}
	if where := whereFilter(q); where != nil {
		opts = append(opts, v2.WithWhereGet(where))
	}
	var res v2.GetResult
	err := ix.do(ctx, "get", func(col v2.Collection) error {
		var err error
		res, err = col.Get(ctx, opts...)
		return err
	})
	if err != nil {
		return nil, err
	}
	got, vecs, metas := res.GetIDs(), res.GetEmbeddings(), res.GetMetadatas()
	if len(vecs) != len(got) {
		return nil, engram.Errorf(engram.EINTERNAL, "chroma get at %s: %d ids but %d embeddings", ix.cfg.URL, len(got), len(vecs))
	}
	hits := make([]engram.VectorHit, 0, len(got))
	for i, id := range got {
		h := engram.VectorHit{ID: string(id), Score: engram.Cosine(q.Vector, vecs[i].ContentAsFloat32())}
		if i < len(metas) && metas[i] != nil {
			h.Kind, _ = metas[i].GetString(keyKind)
		}
		hits = append(hits, h)
	}
	slices.SortFunc(hits, func(a, b engram.VectorHit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return hits[:min(q.K, len(hits))], nil
}

// whereFilter builds the metadata filter of q, nil for none. A single
// clause is sent bare: Chroma has refused $and with fewer than two.
func whereFilter(q engram.VectorQuery) v2.WhereFilter {
	var cs []v2.WhereClause
	if q.Namespace != "" {
		cs = append(cs, v2.EqString(keyNamespace, q.Namespace))
	}
	switch len(q.Kinds) {
	case 0:
	case 1:
		cs = append(cs, v2.EqString(keyKind, q.Kinds[0]))
	default:
		cs = append(cs, v2.InString(keyKind, q.Kinds...))
	}
	if !q.From.IsZero() {
		cs = append(cs, v2.GteInt(keyTS, int(q.From.Unix())))
	}
	if !q.To.IsZero() {
		cs = append(cs, v2.LtInt(keyTS, int(ceilUnix(q.To))))
	}
	switch len(cs) {
	case 0:
		return nil
	case 1:
		return cs[0]
	default:
		return v2.And(cs...)
	}
}

// ceilUnix is t in Unix seconds, rounded up.
func ceilUnix(t time.Time) int64 {
	s := t.Unix()
	if t.Nanosecond() > 0 {
		s++
	}
	return s
}

// Delete removes vectors by ID; unknown and empty ids are ignored.
// EUNAVAILABLE names the URL when the server does not answer.
func (ix *Index) Delete(ctx context.Context, ids []string) error {
	seen := make(map[string]bool, len(ids))
	del := make([]v2.DocumentID, 0, len(ids))
	for _, id := range ids {
		if id != "" && !seen[id] {
			seen[id] = true
			del = append(del, v2.DocumentID(id))
		}
	}
	for start := 0; start < len(del); start += ix.cfg.BatchSize {
		end := min(start+ix.cfg.BatchSize, len(del))
		err := ix.do(ctx, "delete", func(col v2.Collection) error {
			return col.Delete(ctx, v2.WithIDs(del[start:end]...))
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Holding returns those of ids the collection holds a vector of, in the
// order of ids: what the doctor asks of forgotten ids. EUNAVAILABLE names
// the URL when the server does not answer.
func (ix *Index) Holding(ctx context.Context, ids []string) ([]string, error) {
	var out []string
	for start := 0; start < len(ids); start += ix.cfg.BatchSize {
		batch := ids[start:min(start+ix.cfg.BatchSize, len(ids))]
		get := make([]v2.DocumentID, len(batch))
		for i, id := range batch {
			get[i] = v2.DocumentID(id)
		}
		var found map[string]bool
		err := ix.do(ctx, "get", func(col v2.Collection) error {
			res, err := col.Get(ctx, v2.WithIDs(get...), v2.WithInclude(v2.IncludeMetadatas))
			if err != nil {
				return err
			}
			found = make(map[string]bool, len(res.GetIDs()))
			for _, id := range res.GetIDs() {
				found[string(id)] = true
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		for _, id := range batch {
			if found[id] {
				out = append(out, id)
			}
		}
	}
	return out, nil
}

// Count returns how many vectors the collection holds. EUNAVAILABLE names
// the URL when the server does not answer.
func (ix *Index) Count(ctx context.Context) (int, error) {
	var n int
	err := ix.do(ctx, "count", func(col v2.Collection) error {
		var err error
		n, err = col.Count(ctx)
		return err
	})
	return n, err
}

// checkVector returns EINVALID unless v has the index's dimension, only
// finite values and a non-zero length (cosine needs a direction).
func (ix *Index) checkVector(what string, v []float32) error {
	if len(v) != ix.cfg.Dim {
		return engram.Errorf(engram.EINVALID, "chroma: %s has dimension %d, index %s has dimension %d",
			what, len(v), ix.name, ix.cfg.Dim)
	}
	var norm float64
	for _, x := range v {
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return engram.Errorf(engram.EINVALID, "chroma: %s holds %v; vectors must be finite", what, x)
		}
		norm += f * f
	}
	if norm == 0 {
		return engram.Errorf(engram.EINVALID, "chroma: %s is all zeros; cosine needs a non-zero vector", what)
	}
	return nil
}
