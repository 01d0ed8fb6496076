package chroma

import (
	"context"

	"github.com/amikos-tech/chroma-go/pkg/embeddings"

	engram "github.com/engram-dev/engram"
)

// refuseEmbedding is the embedding function every collection is opened
// with. Engram supplies every vector, so it is never called; without one,
// chroma-go builds its default ONNX function, which downloads onnxruntime at
// run time.
type refuseEmbedding struct{}

var _ embeddings.EmbeddingFunction = refuseEmbedding{}

func (refuseEmbedding) EmbedDocuments(context.Context, []string) ([]embeddings.Embedding, error) {
	return nil, errNoEmbedding
}

func (refuseEmbedding) EmbedQuery(context.Context, string) (embeddings.Embedding, error) {
	return nil, errNoEmbedding
}

func (refuseEmbedding) Name() string { return "engram-none" }

func (refuseEmbedding) GetConfig() embeddings.EmbeddingFunctionConfig {
	return embeddings.EmbeddingFunctionConfig{}
}

func (refuseEmbedding) DefaultSpace() embeddings.DistanceMetric { return embeddings.COSINE }

func (refuseEmbedding) SupportedSpaces() []embeddings.DistanceMetric {
	return []embeddings.DistanceMetric{embeddings.COSINE}
}

var errNoEmbedding = engram.Errorf(engram.EINTERNAL, "chroma: the index does not embed text; pass vectors")
