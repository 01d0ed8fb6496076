package openai

import (
	"context"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/remote"
)

// DefaultBatchSize is the most texts an Embedder sends in one request.
const DefaultBatchSize = 64

// EmbedderConfig says which server and embedding model an Embedder uses.
type EmbedderConfig struct {
	Config
	// BatchSize caps the texts per request; default DefaultBatchSize.
	BatchSize int
}

// Embedder is an engram.Embedder over an OpenAI-compatible server's POST
// /embeddings. It is safe for concurrent use.
type Embedder struct {
	c         *client
	batchSize int
	dim       remote.Dim // 0 until the first successful Embed
}

var _ engram.Embedder = (*Embedder)(nil)

// NewEmbedder returns an Embedder for cfg. It sends nothing: Check finds
// out whether the server answers and has the model.
//
// Errors: EINVALID for a bad config (the field is named).
func NewEmbedder(cfg EmbedderConfig) (*Embedder, error) {
	if cfg.BatchSize < 0 {
		return nil, engram.FieldError("openai.batch_size", "must not be negative, got %d", cfg.BatchSize)
	}
	c, err := newClient(cfg.Config)
	if err != nil {
		return nil, err
	}
	n := cfg.BatchSize
	if n == 0 {
		n = DefaultBatchSize
	}
	return &Embedder{c: c, batchSize: n}, nil
}

// Model returns the model's name, as configured.
func (e *Embedder) Model() string { return e.c.cfg.Model }

// Dim returns the vector dimension, 0 until the first successful Embed.
func (e *Embedder) Dim() int { return e.dim.Load() }

// Host returns the server's base URL.
func (e *Embedder) Host() string { return e.c.Host() }

// Close releases idle connections.
func (e *Embedder) Close() error { return e.c.Close() }

// embedRequest and embedReply are the API's shapes.
type embedRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
}

type embedReply struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

// Embed returns one vector per text, in order, sending at most BatchSize
// texts per request. Empty input sends nothing.
//
// Errors: EUNAVAILABLE when the server cannot be reached, refuses the key
// (401, 403), lacks the model (404), rejects the request, keeps failing
// (429, 5xx) after the retries, or asks to wait longer than MaxRetryAfter;
// ECONFLICT when the model's dimension changed; EINTERNAL when the reply
// does not match the request (a vector missing, twice, or empty). A
// failure in any batch fails the call: no text is ever left without its
// vector silently.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return remote.InBatches(ctx, texts, e.batchSize, e.embedBatch)
}

func (e *Embedder) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	var reply embedReply
	if err := e.c.post(ctx, "embeddings", "/embeddings", embedRequest{Model: e.c.cfg.Model, Input: texts, EncodingFormat: "float"}, &reply); err != nil {
		return nil, err
	}
	if len(reply.Data) != len(texts) {
		return nil, engram.Errorf(engram.EINTERNAL, "the server at %s returned %d vectors for %d texts (model %q)",
			e.c.Host(), len(reply.Data), len(texts), e.c.cfg.Model)
	}
	out := make([][]float32, len(texts))
	for _, d := range reply.Data {
		if d.Index < 0 || d.Index >= len(texts) || out[d.Index] != nil {
			return nil, engram.Errorf(engram.EINTERNAL, "the server at %s returned a vector for text %d of %d, or twice (model %q)",
				e.c.Host(), d.Index, len(texts), e.c.cfg.Model)
		}
		if err := e.checkDim(len(d.Embedding)); err != nil {
			return nil, err
		}
		out[d.Index] = d.Embedding
	}
	return out, nil
}

// checkDim records the dimension of the first vector and compares every
// later one with it.
func (e *Embedder) checkDim(n int) error {
	if n == 0 {
		return engram.Errorf(engram.EINTERNAL, "the server at %s returned an empty vector (model %q)", e.c.Host(), e.c.cfg.Model)
	}
	if d := e.dim.Record(n); d != n {
		return engram.Errorf(engram.ECONFLICT,
			"model %q at %s returned %d-dimensional vectors, %d before: the model changed on the server; vectors of different models must not be mixed",
			e.c.cfg.Model, e.c.Host(), n, d)
	}
	return nil
}

// Check embeds a short text and returns the vector dimension: the health
// check. It fails with the errors of Embed.
func (e *Embedder) Check(ctx context.Context) (dim int, err error) {
	return remote.Probe(ctx, e.Embed)
}
