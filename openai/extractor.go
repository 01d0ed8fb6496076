package openai

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/llm"
)

// Defaults for ExtractorConfig's zero values: the protocol's (package llm).
const (
	// DefaultBatchTurns is the most turns in one prompt.
	DefaultBatchTurns = llm.DefaultBatchTurns
	// DefaultMaxTokens bounds the reply (max_tokens).
	DefaultMaxTokens = llm.DefaultMaxTokens
	// DefaultMaxAttempts is how many times a batch is sent while the reply
	// is not usable.
	DefaultMaxAttempts = llm.DefaultMaxAttempts
	// DefaultExtractTimeout bounds each request: a local model on a CPU
	// takes minutes for a thousand tokens.
	DefaultExtractTimeout = llm.DefaultTimeout
)

// ExtractorConfig says which server and chat model an Extractor uses.
type ExtractorConfig struct {
	// Config is the server and the chat model; Timeout defaults to
	// DefaultExtractTimeout.
	Config
	BatchTurns  int // turns per prompt; default DefaultBatchTurns
	MaxTokens   int // the reply's limit (max_tokens); default DefaultMaxTokens
	MaxAttempts int // prompts per batch while unusable; default DefaultMaxAttempts
}

// Extractor is an engram.Extractor over an OpenAI-compatible server's POST
// /chat/completions: a chat model reads the turns and returns L1 memories
// in the JSON schema of internal/llm. It is safe for concurrent use.
type Extractor struct {
	c   *client
	cfg ExtractorConfig
	// format is the request's response_format; tests drop it to get
	// replies that are not JSON.
	format any
}

var _ engram.Extractor = (*Extractor)(nil)

// NewExtractor returns an Extractor for cfg. It sends nothing.
//
// Errors: EINVALID for a bad config (the field is named).
func NewExtractor(cfg ExtractorConfig) (*Extractor, error) {
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultExtractTimeout
	}
	for _, f := range []struct {
		name string
		v    *int
		def  int
	}{{"openai.batch_turns", &cfg.BatchTurns, DefaultBatchTurns}, {"openai.max_tokens", &cfg.MaxTokens, DefaultMaxTokens},
		{"openai.max_attempts", &cfg.MaxAttempts, DefaultMaxAttempts}} {
		switch {
		case *f.v < 0:
			return nil, engram.FieldError(f.name, "must not be negative, got %d", *f.v)
		case *f.v == 0:
			*f.v = f.def
		}
	}
	c, err := newClient(cfg.Config)
	if err != nil {
		return nil, err
	}
	cfg.Config = c.cfg
	format := map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "memories", "schema": llm.ReplySchema}}
	return &Extractor{c: c, cfg: cfg, format: format}, nil
}

// Model returns the chat model's name, as configured.
func (x *Extractor) Model() string { return x.cfg.Model }

// Host returns the server's base URL.
func (x *Extractor) Host() string { return x.c.Host() }

// BatchTurns returns the most turns sent in one prompt.
func (x *Extractor) BatchTurns() int { return x.cfg.BatchTurns }

// Close releases idle connections.
func (x *Extractor) Close() error { return x.c.Close() }

// Extract returns the memories the model finds in turns, in batch order,
// without duplicates, with the protocol of llm.Extraction: BatchTurns turns
// a prompt, one retry of an unusable reply.
//
// Errors: those of the server (EUNAVAILABLE: down, the key refused, no
// such model, still failing after the retries; the context's error), with
// no memories: retry later. A batch whose replies stay unusable gives an
// *llm.ExtractError (errors.Is(err, engram.ErrUnusableOutput) holds) next
// to the other batches' memories; the worker records it as skipped.
func (x *Extractor) Extract(ctx context.Context, turns []engram.Turn) ([]engram.Memory, error) {
	return llm.Extraction{Backend: "openai-compatible", Model: x.cfg.Model, BatchTurns: x.cfg.BatchTurns,
		MaxTokens: x.cfg.MaxTokens, MaxAttempts: x.cfg.MaxAttempts, Chat: x.chat}.Extract(ctx, turns)
}

type chatRequest struct {
	Model          string        `json:"model"`
	Messages       []llm.Message `json:"messages"`
	Temperature    float64       `json:"temperature"`
	Seed           int           `json:"seed"`
	MaxTokens      int           `json:"max_tokens"`
	Stream         bool          `json:"stream"`
	ResponseFormat any           `json:"response_format,omitempty"`
}

type chatReply struct {
	Choices []struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
}

// chat sends one prompt and returns the first choice's text and why it
// ended ("stop", "length").
func (x *Extractor) chat(ctx context.Context, msgs []llm.Message) (string, string, error) {
	var reply chatReply
	req := chatRequest{Model: x.cfg.Model, Messages: msgs, Temperature: 0, Seed: llm.Seed, MaxTokens: x.cfg.MaxTokens, ResponseFormat: x.format}
	if err := x.c.post(ctx, "chat", "/chat/completions", req, &reply); err != nil {
		return "", "", err
	}
	if len(reply.Choices) == 0 {
		return "", "", nil // no choice: read as an empty, unusable reply
	}
	return reply.Choices[0].Message.Content, reply.Choices[0].FinishReason, nil
}

// Check asks the server about the chat model: the doctor's probe. It
// sends GET /models/{model} (OpenAI, Ollama) and, where the server has no
// such route (vLLM, llama.cpp's server answer 404 or 405 to it), looks the
// model up in GET /models. It fails with EUNAVAILABLE like Extract when the
// server is down, refuses the key or lacks the model; the error of a model
// missing from the list names the models the server has.
func (x *Extractor) Check(ctx context.Context) error {
	path := "/models/" + (&url.URL{Path: x.cfg.Model}).EscapedPath()
	err := x.c.get(ctx, path, nil)
	var se *statusError
	if !errors.As(err, &se) || (se.status != http.StatusNotFound && se.status != http.StatusMethodNotAllowed) {
		return x.c.check("models", err)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if lerr := x.c.get(ctx, "/models", &list); lerr != nil {
		return x.c.check("models", err) // no list either: the first answer stands
	}
	ids := make([]string, 0, len(list.Data))
	for _, m := range list.Data {
		// Ollama lists a model with its tag; a name without one means
		// ":latest".
		if m.ID == x.cfg.Model || m.ID == x.cfg.Model+":latest" {
			return nil
		}
		ids = append(ids, m.ID)
	}
	return x.c.check("models", &missingModel{statusError: se, listed: ids})
}

// missingModel is a model the server's GET /models does not list.
type missingModel struct {
	*statusError
	listed []string
}

// get sends one GET without retries, checks its status and decodes the
// reply's JSON into out (nil: checked, then dropped).
func (c *client) get(ctx context.Context, path string, out any) error {
	return c.send(ctx, http.MethodGet, path, nil, out)
}

// check describes the error of a GET, nil for none.
func (c *client) check(op string, err error) error {
	if err == nil {
		return nil
	}
	return c.describe(op, err, 1)
}
