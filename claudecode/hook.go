package claudecode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/textutil"
)

// HookInput is what Claude Code sends a command hook on stdin.
type HookInput struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	CWD            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	Prompt         string `json:"prompt"`
}

// The hook's log, in an engram home: what went wrong in a hook, which
// prints nothing and never fails the agent.
const (
	HookLogFile = "hook.log" // in <home>/logs
	hookLogMax  = 1 << 20    // bytes before hook.log is rotated to hook.log.1
)

// OpenHookLog opens the hook log of the engram home for appending, rotating
// it first when it is over a MiB. A home that cannot be resolved ("") has
// no log.
func OpenHookLog(home string) (*os.File, error) {
	if home == "" {
		return nil, errors.New("no home")
	}
	dir := filepath.Join(home, "logs")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, HookLogFile)
	if st, err := os.Stat(path); err == nil && st.Size() > hookLogMax {
		os.Rename(path, path+".1")
	}
	return os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
}

// LogHook appends one line about err, met on the hook's event, to the hook
// log of the engram home; it cannot fail the hook.
func LogHook(home, event string, err error) {
	f, ferr := OpenHookLog(home)
	if ferr != nil {
		return
	}
	defer f.Close()
	slog.New(slog.NewTextHandler(f, nil)).Error("claude-code hook", "event", event, "err", err)
}

// hookStdinMax bounds the hook input read.
const hookStdinMax = 16 << 20

// ReadHookInput reads the JSON Claude Code sends a command hook on stdin,
// until ctx ends: a stdin that is never closed must not hold the hook
// past its deadline. The read then goes on in the background, to end with
// the process (a read of stdin cannot be interrupted everywhere).
func ReadHookInput(ctx context.Context, r io.Reader) (HookInput, error) {
	var in HookInput
	type read struct {
		b   []byte
		err error
	}
	done := make(chan read, 1)
	go func() {
		b, err := io.ReadAll(io.LimitReader(r, hookStdinMax))
		done <- read{b, err}
	}()
	var b []byte
	select {
	case <-ctx.Done():
		return in, fmt.Errorf("read stdin: %w", ctx.Err())
	case rd := <-done:
		if rd.err != nil {
			return in, fmt.Errorf("read stdin: %w", rd.err)
		}
		b = rd.b
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return in, fmt.Errorf("hook input is not JSON: %w", err)
	}
	return in, nil
}

// HookBackend is what the hook needs of engram: the home opened in the
// hook's process, or the client of its running server.
type HookBackend interface {
	engram.IngestService
	engram.RecallService
}

// Hook defaults.
const (
	DefaultHookBudget = 1500 // tokens of context printed on a prompt
	DefaultHookK      = 20   // results asked for before the current session's are dropped
)

// Hook is one run of `engram hook claude-code` on the event In: it
// archives the transcript's new lines and, on a prompt, recalls what
// engram remembers about it.
type Hook struct {
	In        HookInput
	Home      string        // the engram home, where the offsets are kept
	Limits    engram.Limits // of the turns archived
	Namespace string        // of the turns and of recall; "": cc-<project folder name>
	// Budget is the tokens of recalled context to print on a prompt; 0
	// prints none.
	Budget int
	// IncludeSession keeps the current session's own turns among the
	// results (they are in the model's context already).
	IncludeSession bool
	// Pack packs results into a block of at most budget tokens: recall.Pack,
	// which this package may not import.
	Pack func(results []engram.Result, budget int) (block string, used, included int)
	// Log receives what went wrong without stopping the hook: a broken
	// offsets file, a transcript line that is no turn, a failed archive.
	Log func(err error)
}

// Run archives the transcript's new lines through be, then, on
// UserPromptSubmit, returns the memories recalled for the prompt, packed
// within the budget, to print for Claude Code. An archiving error goes to
// Log and recall still runs; a recall error returns nothing to print.
func (h *Hook) Run(ctx context.Context, be HookBackend) (string, error) {
	if h.Namespace == "" {
		h.Namespace = Namespace(h.In.CWD)
	}
	if h.In.TranscriptPath != "" {
		if err := h.archive(ctx, be); err != nil {
			h.Log(err)
		}
	}
	if h.In.HookEventName != "UserPromptSubmit" || h.Budget == 0 || strings.TrimSpace(h.In.Prompt) == "" {
		return "", nil
	}
	return h.recall(ctx, be)
}

func (h *Hook) archive(ctx context.Context, svc engram.IngestService) error {
	g, err := NewIngester(svc, h.Home, h.Limits, h.Namespace)
	if err != nil {
		h.Log(err)
	}
	g.Warn = func(path string, end int64, err error) {
		h.Log(fmt.Errorf("%s: line ending at byte %d skipped: %w", path, end, err))
	}
	path := h.In.TranscriptPath
	if strings.HasPrefix(path, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			path = filepath.Join(home, path[2:])
		}
	}
	if err := g.Transcript(ctx, path); err != nil {
		return err
	}
	return g.Offsets.Save()
}

func (h *Hook) recall(ctx context.Context, svc engram.RecallService) (string, error) {
	resp, err := svc.Recall(ctx, engram.RecallRequest{
		Namespace: h.Namespace,
		Query:     textutil.CutBytes(h.In.Prompt, engram.MaxQueryBytes),
		Mode:      engram.ModeAuto,
		K:         DefaultHookK,
	})
	if err != nil {
		return "", fmt.Errorf("recall: %w", err)
	}
	results := resp.Results[:0:0]
	for _, r := range resp.Results {
		if h.IncludeSession || r.Session != h.In.SessionID {
			results = append(results, r)
		}
	}
	block, used, _ := h.Pack(results, h.Budget)
	if block == "" {
		return "", nil
	}
	trigger := ""
	if resp.Trigger != "" {
		trigger = fmt.Sprintf(" trigger=%q", resp.Trigger)
	}
	return fmt.Sprintf("<engram-memory mode=%q%s tokens=\"%d\">\n%s\n</engram-memory>\n", resp.Mode, trigger, used, block), nil
}
