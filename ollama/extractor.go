package ollama

import (
	"cmp"
	"context"
	"encoding/json"
	"strings"

	"github.com/ollama/ollama/api"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/llm"
)

// Defaults for ExtractorConfig's zero values.
const (
	// DefaultChatModel is the extraction model when ExtractorConfig.Model is
	// empty: Qwen2.5 3B Instruct (about 1.9 GB at Ollama's default 4-bit
	// quantization), small enough for a laptop CPU, multilingual (English and
	// Chinese conversations alike) and good at filling a JSON schema. It is
	// not a reasoning model, so no hidden "thinking" eats MaxTokens.
	DefaultChatModel = "qwen2.5:3b-instruct"
	// DefaultBatchTurns is the most turns in one prompt (the protocol's).
	DefaultBatchTurns = llm.DefaultBatchTurns
	// DefaultMaxTokens bounds the reply (Ollama's num_predict).
	DefaultMaxTokens = llm.DefaultMaxTokens
	// DefaultMaxAttempts is how many times a batch is sent while the reply
	// is not usable JSON.
	DefaultMaxAttempts = llm.DefaultMaxAttempts
	// DefaultExtractTimeout bounds each request.
	DefaultExtractTimeout = llm.DefaultTimeout
)

// ExtractorConfig says which server and chat model an Extractor uses. Zero
// fields take the defaults.
type ExtractorConfig struct {
	// Config is the server, the model and the request settings. Model is
	// the chat model (default DefaultChatModel) and Timeout bounds each
	// request (default DefaultExtractTimeout); BatchSize is not used.
	Config
	// BatchTurns is the most turns in one prompt; default DefaultBatchTurns.
	BatchTurns int
	// MaxTokens bounds each reply, in tokens; default DefaultMaxTokens.
	MaxTokens int
	// MaxAttempts is how many times a batch is sent while the reply is not
	// usable; default DefaultMaxAttempts.
	MaxAttempts int
}

func (c ExtractorConfig) withDefaults() ExtractorConfig {
	c.Model = cmp.Or(c.Model, DefaultChatModel)
	c.Timeout = cmp.Or(c.Timeout, DefaultExtractTimeout)
	c.Config = c.Config.withDefaults()
	c.BatchTurns = cmp.Or(c.BatchTurns, DefaultBatchTurns)
	c.MaxTokens = cmp.Or(c.MaxTokens, DefaultMaxTokens)
	c.MaxAttempts = cmp.Or(c.MaxAttempts, DefaultMaxAttempts)
	return c
}

// Validate reports the first bad field as EINVALID. Empty fields are valid:
// they take the defaults.
func (c ExtractorConfig) Validate() error {
	if err := c.Config.Validate(); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		v    int
	}{
		{"ollama.batch_turns", c.BatchTurns},
		{"ollama.max_tokens", c.MaxTokens},
		{"ollama.max_attempts", c.MaxAttempts},
	} {
		if f.v < 0 {
			return engram.FieldError(f.name, "must not be negative, got %d", f.v)
		}
	}
	return nil
}

// ErrBadOutput is what an *ExtractError unwraps to: the model answered, but
// nothing usable could be read from its reply. Its code is EINVALID.
var ErrBadOutput = llm.ErrBadOutput

// ExtractError reports a batch of turns whose replies stayed unusable after
// every attempt (see llm.ExtractError); its Backend is "ollama".
type ExtractError = llm.ExtractError

// Extractor is an engram.Extractor over an Ollama server's /api/chat: a
// local LLM reads the turns and returns L1 memories in a JSON schema. It is
// safe for concurrent use.
type Extractor struct {
	cfg ExtractorConfig
	// conn is the connection: client, per-request timeout, retries and
	// error descriptions, shared with the embedder.
	conn *Embedder
	// format is the reply's JSON schema; tests drop it to get replies that
	// are not JSON.
	format json.RawMessage
}

var _ engram.Extractor = (*Extractor)(nil)

// NewExtractor returns an Extractor for cfg. It sends nothing.
//
// Errors: EINVALID for a bad ExtractorConfig (the field is named in the
// error).
func NewExtractor(cfg ExtractorConfig) (*Extractor, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	conn, err := NewEmbedder(cfg.Config)
	if err != nil {
		return nil, err
	}
	return &Extractor{cfg: cfg, conn: conn, format: llm.ReplySchema}, nil
}

// Model returns the chat model's name, as configured.
func (x *Extractor) Model() string { return x.cfg.Model }

// Host returns the server's base URL, e.g. "http://127.0.0.1:11434".
func (x *Extractor) Host() string { return x.conn.Host() }

// Close releases idle connections. The Extractor must not be used after.
func (x *Extractor) Close() error { return x.conn.Close() }

// Extract returns the memories the model finds in turns, in batch order,
// without duplicates. Tool and system turns are not shown to the model. The
// turns are sent in batches of at most BatchTurns, one request each, with
// the prompt and schema of package llm.
//
// Errors: the errors of Embed for the server (EUNAVAILABLE when it is down,
// lacks the model or fails; the context's error when ctx is done), with no
// memories: retry later. When the replies for a batch stay unusable after
// MaxAttempts, the other batches are still extracted: Extract returns their
// memories with one *ExtractError per bad batch (joined; errors.As finds
// the first, errors.Is(err, ErrBadOutput) holds).
func (x *Extractor) Extract(ctx context.Context, turns []engram.Turn) ([]engram.Memory, error) {
	return llm.Extraction{Backend: "ollama", Model: x.cfg.Model, BatchTurns: x.cfg.BatchTurns, MaxTokens: x.cfg.MaxTokens,
		MaxAttempts: x.cfg.MaxAttempts, Chat: x.chat}.Extract(ctx, turns)
}

// chat sends one request, with the retries of Config, and returns the
// reply's text and why the model stopped ("stop", "length").
func (x *Extractor) chat(ctx context.Context, msgs []llm.Message) (reply, doneReason string, err error) {
	stream := false
	req := &api.ChatRequest{
		Model:    x.cfg.Model,
		Messages: make([]api.Message, len(msgs)),
		Stream:   &stream,
		Format:   x.format,
		Options:  map[string]any{"temperature": 0, "seed": llm.Seed, "num_predict": x.cfg.MaxTokens},
	}
	for i, m := range msgs {
		req.Messages[i] = api.Message{Role: m.Role, Content: m.Content}
	}
	err = x.conn.do(ctx, "chat", x.cfg.MaxRetries, func(ctx context.Context) error {
		var b strings.Builder
		err := x.conn.client.Chat(ctx, req, func(r api.ChatResponse) error {
			b.WriteString(r.Message.Content)
			if r.Done {
				doneReason = r.DoneReason
			}
			return nil
		})
		reply = b.String()
		return err
	})
	return reply, doneReason, err
}
