package ollama

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/types/model"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/backoff"
	"github.com/engram-dev/engram/internal/remote"
)

// Embedder is an engram.Embedder over an Ollama server's /api/embed. It is
// safe for concurrent use.
type Embedder struct {
	cfg       Config
	base      *url.URL
	client    *api.Client
	transport *http.Transport

	dim remote.Dim // 0 until the first successful Embed

	// pause waits d between two attempts, or until ctx ends (its error);
	// backoff.Sleep unless a test records the backoff instead of living it.
	pause func(ctx context.Context, d time.Duration) error
}

var _ engram.Embedder = (*Embedder)(nil)

// NewEmbedder returns an Embedder for cfg. It sends nothing: call Check to
// find out whether the server answers and has the model.
//
// Errors: EINVALID for a bad Config (the field is named in the error).
func NewEmbedder(cfg Config) (*Embedder, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	base, err := ParseHost(cfg.Host)
	if err != nil {
		return nil, err
	}
	transport := remote.NewTransport(DefaultDialTimeout, cfg.Timeout)
	return &Embedder{
		cfg:       cfg,
		base:      base,
		client:    api.NewClient(base, &http.Client{Transport: transport}),
		transport: transport,
		pause:     backoff.Sleep,
	}, nil
}

// Model returns the model's name, as configured.
func (e *Embedder) Model() string { return e.cfg.Model }

// Dim returns the vector dimension, 0 until the first successful Embed or
// Check.
func (e *Embedder) Dim() int { return e.dim.Load() }

// Host returns the server's base URL, e.g. "http://127.0.0.1:11434".
func (e *Embedder) Host() string { return e.base.String() }

// Close releases idle connections. The Embedder must not be used after.
func (e *Embedder) Close() error {
	e.transport.CloseIdleConnections()
	return nil
}

// Embed returns one vector per text, in order, sending at most
// Config.BatchSize texts per request. Empty input returns an empty result
// without a request. Texts longer than the model's context are truncated by
// the server.
//
// Errors: EUNAVAILABLE when the server cannot be reached, does not answer
// within Config.Timeout, fails (5xx) after Config.MaxRetries retries, does
// not have the model (the error says how to pull it) or rejects the request;
// ECONFLICT when the model returns vectors of another dimension than before
// (it was replaced on the server); EINTERNAL when the reply does not match the
// request. A canceled context returns the context's error. A failure in a
// later batch discards the vectors of earlier ones.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return remote.InBatches(ctx, texts, e.cfg.BatchSize, e.embedBatch)
}

func (e *Embedder) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	var resp *api.EmbedResponse
	err := e.do(ctx, "embed", e.cfg.MaxRetries, func(ctx context.Context) error {
		var err error
		resp, err = e.client.Embed(ctx, &api.EmbedRequest{Model: e.cfg.Model, Input: texts})
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(resp.Embeddings) != len(texts) {
		return nil, engram.Errorf(engram.EINTERNAL, "ollama server at %s returned %d vectors for %d texts (model %q)",
			e.base, len(resp.Embeddings), len(texts), e.cfg.Model)
	}
	for _, v := range resp.Embeddings {
		if err := e.checkDim(len(v)); err != nil {
			return nil, err
		}
	}
	return resp.Embeddings, nil
}

// checkDim records the dimension of the first vector and compares every
// later one with it.
func (e *Embedder) checkDim(n int) error {
	if n == 0 {
		return engram.Errorf(engram.EINTERNAL, "ollama server at %s returned an empty vector (model %q)", e.base, e.cfg.Model)
	}
	if d := e.dim.Record(n); d != n {
		return engram.Errorf(engram.ECONFLICT,
			"ollama model %q at %s returned %d-dimensional vectors, %d before: the model changed on the server; vectors of different models must not be mixed",
			e.cfg.Model, e.base, n, d)
	}
	return nil
}

// Check embeds a short text, which makes the server load the model, and
// returns the vector dimension. It is the health check: it fails, with the
// errors of Embed, when the server is down or lacks the model.
func (e *Embedder) Check(ctx context.Context) (dim int, err error) {
	return remote.Probe(ctx, e.Embed)
}

// Present asks the server, once, whether it has the model and whether the
// model embeds (POST /api/show), without loading it: the check to make
// before starting work on a model a person named.
//
// Errors: ENOTFOUND (on field "model", with the ollama pull hint) when the
// server lacks the model; EINVALID (on "model") when the server says the
// model cannot embed (a chat model); EUNAVAILABLE when the server cannot be
// reached or fails.
func (e *Embedder) Present(ctx context.Context) error {
	var resp *api.ShowResponse
	err := e.do(ctx, "show", 0, func(ctx context.Context) error {
		var err error
		resp, err = e.client.Show(ctx, &api.ShowRequest{Model: e.cfg.Model})
		return err
	})
	var se api.StatusError
	switch {
	case errors.As(err, &se) && se.StatusCode == http.StatusNotFound:
		return &engram.Error{Code: engram.ENOTFOUND, Field: "model", Err: err,
			Message: fmt.Sprintf("model %q is not on the ollama server at %s; run: ollama pull %s", e.cfg.Model, e.base, e.cfg.Model)}
	case err != nil:
		return err
	}
	if len(resp.Capabilities) > 0 && !slices.Contains(resp.Capabilities, model.CapabilityEmbedding) {
		return engram.FieldError("model", "model %q on the ollama server at %s does not embed (it can: %v); name an embedding model such as %s",
			e.cfg.Model, e.base, resp.Capabilities, DefaultModel)
	}
	return nil
}

// Ping asks the server for its version, once, within Config.Timeout, and
// returns it. It says whether the server answers, not whether it has the
// model (see Check).
//
// Errors: EUNAVAILABLE when the server cannot be reached or fails.
func (e *Embedder) Ping(ctx context.Context) (version string, err error) {
	err = e.do(ctx, "version", 0, func(ctx context.Context) error {
		var err error
		version, err = e.client.Version(ctx)
		return err
	})
	return version, err
}

// do runs call with a per-attempt timeout, and again after a backoff while
// it fails for a transient reason, at most retries more times.
func (e *Embedder) do(ctx context.Context, op string, retries int, call func(context.Context) error) error {
	delay := backoff.Backoff{Base: e.cfg.RetryDelay, Max: MaxRetryDelay}
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, e.cfg.Timeout)
		err := call(actx)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("ollama %s: %w", op, ctx.Err())
		}
		if !transient(err) || attempt > retries {
			return e.describe(err, attempt)
		}
		if err := e.pause(ctx, delay.Next()); err != nil {
			return fmt.Errorf("ollama %s: %w", op, err)
		}
	}
}
