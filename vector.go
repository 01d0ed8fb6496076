package engram

import (
	"context"
	"math"
	"time"
)

// Embedder turns texts into vectors. Implementations: the built-in offline
// embedder (package embedder) and Ollama (package ollama).
type Embedder interface {
	// Embed returns one vector per text, in order, each of length Dim().
	// Errors name the cause a user can act on (server unreachable, model
	// missing and how to pull it).
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Model names the model, e.g. "builtin-v1" or "bge-m3". Vectors of
	// different models are never mixed in one index.
	Model() string
	// Dim is the vector dimension (0 if not known until the first Embed).
	Dim() int
}

// VectorItem is one vector with the metadata a query filters on.
type VectorItem struct {
	ID        string // the id of what the vector embeds (a turn id, later a memory or chunk id)
	Kind      string // KindTurn, later "memory", "scene", "doc"
	Namespace string
	TS        time.Time
	Vector    []float32
}

// VectorQuery asks for the K nearest vectors to Vector (cosine similarity),
// optionally filtered by namespace, kinds and a time range [From, To).
type VectorQuery struct {
	Vector    []float32
	K         int
	Namespace string   // "" = every namespace
	Kinds     []string // empty = every kind
	From, To  time.Time
	// IDs, when set, restricts the query to these ids: their similarities,
	// without a scan (the deep and hybrid paths score keyword candidates
	// this way instead of embedding them again).
	IDs []string
}

// VectorHit is a nearest neighbour with its cosine similarity (higher is
// more similar).
type VectorHit struct {
	ID    string
	Kind  string
	Score float64
}

// VectorIndex stores vectors and finds nearest neighbours. Implementations:
// the embedded index (package palace: vectors kept in SQLite and searched in
// process) and a ChromaDB server (package chroma).
type VectorIndex interface {
	// Upsert inserts or replaces vectors by ID. A vector whose dimension
	// differs from the index's returns EINVALID naming both dimensions.
	Upsert(ctx context.Context, items []VectorItem) error
	// Query returns up to q.K hits, best first.
	Query(ctx context.Context, q VectorQuery) ([]VectorHit, error)
	// Delete removes vectors by ID; unknown ids are ignored.
	Delete(ctx context.Context, ids []string) error
	// Count returns how many vectors the index holds.
	Count(ctx context.Context) (int, error)
}

// Cosine returns the cosine similarity of a and b, computed in float64; 0
// when their lengths differ or either is a zero vector.
func Cosine(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}
