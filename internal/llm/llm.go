// Package llm is the extraction protocol of engram's LLM extractors: the
// prompt, the JSON schema of the reply, reading the memories out of a reply
// however a small model broke it, and the run over a batch of turns (one
// prompt per BatchTurns turns, a retry with a reminder, an ExtractError for
// a batch that stays unreadable). The ollama and openai packages speak it
// over their servers' APIs; it knows no server.
//
// The prompt asks for memories written the way the offline extractor
// (extract.NLPExtractor) writes them, so that recall reads one kind of
// memory whichever extractor is configured: the speaker named instead of
// "I", relative times as dates, relations with the same predicates.
//
// # Caveats
//
// A model that ignores the schema is repaired as far as JSON allows (see
// ParseReply); what it says is trusted: a memory is only checked for its
// shape (type, text, a turn of the batch), not for truth.
package llm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/engram-dev/engram"
)

// Limits of what is sent and kept.
const (
	maxTurnRunes  = 2000 // of a turn's content in the prompt; the rest is cut
	maxTextRunes  = 1000 // a longer memory text is a copy of the input, not a memory
	maxNameRunes  = 200  // of a subject, an entity or a relation part
	maxExcerpt    = 512  // bytes of the model's output kept in an ExtractError
	maxCandidates = 8    // places in a reply where JSON is looked for
	// MaxEntities is the most entities a memory keeps.
	MaxEntities = 16
)

// The protocol's defaults, which the extractors' configurations take.
const (
	// DefaultBatchTurns is the most turns in one prompt.
	DefaultBatchTurns = 12
	// DefaultMaxTokens bounds a reply: room for about fifteen memories.
	DefaultMaxTokens = 1024
	// DefaultMaxAttempts is how many times a batch is sent while the reply
	// is not usable: once, then once more with a stricter reminder.
	DefaultMaxAttempts = 2
	// DefaultTimeout bounds each request: generating a thousand tokens with
	// a 3B model on a few CPU cores takes minutes.
	DefaultTimeout = 5 * time.Minute
	// Seed, with temperature 0, asks the server for the same reply to the
	// same turns (servers that ignore seeds may still vary).
	Seed = 42
)

// ErrBadOutput is what an *ExtractError unwraps to: the model answered, but
// nothing usable could be read from its reply. Its code is EINVALID.
var ErrBadOutput = &engram.Error{Code: engram.EINVALID, Message: "the model's reply is not usable"}

// ExtractError reports a batch of turns whose replies stayed unusable after
// every attempt. Sending the batch again gives the same reply (the sampling
// is deterministic): record it and skip the batch.
type ExtractError struct {
	Backend   string // "ollama", "openai-compatible": who served the model
	Model     string
	FirstTurn string // id of the batch's first turn
	LastTurn  string // id of the batch's last turn
	Attempts  int
	Reason    string // what was wrong with the last reply
	Output    string // the start of the last reply
}

// Error implements the error interface.
func (e *ExtractError) Error() string {
	return fmt.Sprintf("%s model %q gave no usable reply for turns %s to %s in %d attempts: %s; the reply began %q",
		e.Backend, e.Model, e.FirstTurn, e.LastTurn, e.Attempts, e.Reason, e.Output)
}

// Unwrap returns ErrBadOutput.
func (e *ExtractError) Unwrap() error { return ErrBadOutput }

// Is makes errors.Is(err, engram.ErrUnusableOutput) hold, so the pipeline
// records the batch as skipped instead of retrying it.
func (e *ExtractError) Is(target error) bool { return target == engram.ErrUnusableOutput }

// Chat sends one prompt and returns the reply's text and why the model
// stopped ("stop", "length"). Its errors are the server's: down, refused,
// no such model.
type Chat func(ctx context.Context, msgs []Message) (reply, doneReason string, err error)

// Extraction runs the protocol over turns with a server's Chat.
type Extraction struct {
	Backend     string // for ExtractError
	Model       string
	BatchTurns  int // turns per prompt, at least 1
	MaxTokens   int // the reply's token limit, for the error when a reply reached it
	MaxAttempts int // prompts per batch while the reply is unusable, at least 1
	Chat        Chat
}

// Extract returns the memories the model finds in turns, in batch order,
// without duplicates. Tool and system turns, and empty ones, are not shown
// to the model; nothing is sent when no turn is left.
//
// Errors: the first error of Chat (the server down, refusing, lacking the
// model; the context's error), with no memories: retry later. When the
// replies for a batch stay unusable after MaxAttempts, the other batches
// are still extracted: Extract returns their memories with one
// *ExtractError per bad batch (joined; errors.As finds the first,
// errors.Is(err, ErrBadOutput) holds). No batch is ever left out silently.
func (x Extraction) Extract(ctx context.Context, turns []engram.Turn) ([]engram.Memory, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	shown := make([]*engram.Turn, 0, len(turns))
	for i := range turns {
		t := &turns[i]
		if t.Role == engram.RoleTool || t.Role == engram.RoleSystem || strings.TrimSpace(t.Content) == "" {
			continue
		}
		shown = append(shown, t)
	}
	var out []engram.Memory
	var bad []error
	seen := make(map[string]bool)
	for batch := range slices.Chunk(shown, max(1, x.BatchTurns)) {
		mems, err := x.extractBatch(ctx, batch)
		var xe *ExtractError
		if errors.As(err, &xe) {
			bad = append(bad, err)
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, m := range mems {
			if !seen[m.ID] {
				seen[m.ID] = true
				out = append(out, m)
			}
		}
	}
	return out, errors.Join(bad...)
}

func (x Extraction) extractBatch(ctx context.Context, batch []*engram.Turn) ([]engram.Memory, error) {
	var reason, output string
	attempts := max(1, x.MaxAttempts)
	for attempt := 1; attempt <= attempts; attempt++ {
		reply, doneReason, err := x.Chat(ctx, Prompt(batch, attempt > 1))
		if err != nil {
			return nil, err
		}
		items, _, err := ParseReply(reply)
		if err == nil {
			return Memories(items, batch), nil
		}
		reason, output = err.Error(), Excerpt(reply)
		if doneReason == "length" {
			reason += fmt.Sprintf(" (the reply reached max tokens, %d)", x.MaxTokens)
		}
	}
	return nil, &ExtractError{Backend: x.Backend, Model: x.Model, FirstTurn: batch[0].ID, LastTurn: batch[len(batch)-1].ID,
		Attempts: attempts, Reason: reason, Output: output}
}
