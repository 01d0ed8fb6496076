package vectortest

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"

	engram "github.com/engram-dev/engram"
)

// exactIndex is the simplest index that meets the contract: a map searched
// exhaustively. The suite runs against it to show that it asks for nothing
// an exact index would not give.
type exactIndex struct {
	dim   int
	mu    sync.Mutex
	items map[string]engram.VectorItem
}

var _ engram.VectorIndex = (*exactIndex)(nil)

func (x *exactIndex) check(what string, v []float32) error {
	if len(v) != x.dim {
		return engram.Errorf(engram.EINVALID, "%s has dimension %d, index has %d", what, len(v), x.dim)
	}
	var norm float64
	for _, f := range v {
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return engram.Errorf(engram.EINVALID, "%s is not finite", what)
		}
		norm += float64(f) * float64(f)
	}
	if norm == 0 {
		return engram.Errorf(engram.EINVALID, "%s is zero", what)
	}
	return nil
}

func (x *exactIndex) Upsert(_ context.Context, items []engram.VectorItem) error {
	for i, it := range items {
		if it.ID == "" {
			return engram.Errorf(engram.EINVALID, "item %d: empty id", i)
		}
		if err := x.check(fmt.Sprintf("item %d", i), it.Vector); err != nil {
			return err
		}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, it := range items {
		x.items[it.ID] = it
	}
	return nil
}

func (x *exactIndex) Query(_ context.Context, q engram.VectorQuery) ([]engram.VectorHit, error) {
	if q.K < 1 {
		return nil, engram.Errorf(engram.EINVALID, "k must be at least 1")
	}
	if err := x.check("query", q.Vector); err != nil {
		return nil, err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	var hits []engram.VectorHit
	for _, it := range x.items {
		if (q.Namespace != "" && it.Namespace != q.Namespace) ||
			(len(q.Kinds) > 0 && !slices.Contains(q.Kinds, it.Kind)) ||
			(!q.From.IsZero() && it.TS.Before(q.From)) ||
			(!q.To.IsZero() && !it.TS.Before(q.To)) ||
			(len(q.IDs) > 0 && !slices.Contains(q.IDs, it.ID)) {
			continue
		}
		hits = append(hits, engram.VectorHit{ID: it.ID, Kind: it.Kind, Score: Cosine(q.Vector, it.Vector)})
	}
	slices.SortFunc(hits, func(a, b engram.VectorHit) int { return cmp.Compare(b.Score, a.Score) })
	return hits[:min(q.K, len(hits))], nil
}

func (x *exactIndex) Delete(_ context.Context, ids []string) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, id := range ids {
		delete(x.items, id)
	}
	return nil
}

func (x *exactIndex) Count(context.Context) (int, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return len(x.items), nil
}

func TestExactIndex(t *testing.T) {
	Run(t, func(t *testing.T, dim int) engram.VectorIndex {
		return &exactIndex{dim: dim, items: map[string]engram.VectorItem{}}
	})
}

func TestCosine(t *testing.T) {
	for _, c := range []struct {
		a, b []float32
		want float64
	}{
		{vec(1, 0), vec(5, 0), 1},
		{vec(1, 0), vec(0, 2), 0},
		{vec(1, 0), vec(-1, 0), -1},
		{vec(1, 1), vec(1, 0), math.Sqrt2 / 2},
	} {
		if got := Cosine(c.a, c.b); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Cosine(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
