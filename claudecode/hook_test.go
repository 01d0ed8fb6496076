package claudecode_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/claudecode"
)

// hookBackend records what a hook archives and answers recall with results.
type hookBackend struct {
	turns     []engram.Turn
	asked     []engram.RecallRequest
	results   []engram.Result
	recallErr error
}

func (b *hookBackend) Ingest(_ context.Context, turns []engram.Turn) (engram.IngestResult, error) {
	b.turns = append(b.turns, turns...)
	var res engram.IngestResult
	for _, t := range turns {
		res.Turns = append(res.Turns, engram.Appended{ID: t.ID})
	}
	return res, nil
}

func (b *hookBackend) Recall(_ context.Context, req engram.RecallRequest) (engram.RecallResponse, error) {
	b.asked = append(b.asked, req)
	return engram.RecallResponse{Mode: engram.ModeHybrid, Trigger: "do you remember", Results: b.results}, b.recallErr
}

var _ claudecode.HookBackend = (*hookBackend)(nil)

// hookInput is the fixture's UserPromptSubmit input on the transcript.
func hookInput(t *testing.T, transcript, prompt string) claudecode.HookInput {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures, "hook-UserPromptSubmit.json"))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.NewReplacer("TRANSCRIPT", transcript, "PROMPT", prompt).Replace(string(b))
	in, err := claudecode.ReadHookInput(t.Context(), strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// packAll stands in for recall.Pack: every result's text, one a line.
func packAll(results []engram.Result, budget int) (string, int, int) {
	var lines []string
	for _, r := range results {
		lines = append(lines, r.Text)
	}
	return strings.Join(lines, "\n"), len(lines) * 10, len(lines)
}

// TestHookRun: a prompt archives the transcript's new lines once, then
// recalls in the project's namespace and prints what other sessions said,
// packed, in an engram-memory block.
func TestHookRun(t *testing.T) {
	home := t.TempDir()
	in := hookInput(t, filepath.Join(fixtures, "session.jsonl"), "which port does staging use?")
	be := &hookBackend{results: []engram.Result{
		{Text: "staging runs on port 5433", Session: "older-session"},
		{Text: "said in this session", Session: in.SessionID},
	}}
	var logged []error
	h := &claudecode.Hook{In: in, Home: home, Budget: 100, Pack: packAll, Log: func(err error) { logged = append(logged, err) }}
	out, err := h.Run(context.Background(), be)
	if err != nil {
		t.Fatal(err)
	}
	if len(be.turns) == 0 || len(logged) != 0 {
		t.Fatalf("archived %d turns, logged %v", len(be.turns), logged)
	}
	if len(be.asked) != 1 || be.asked[0].Namespace != "cc-billing-api" || be.asked[0].K != claudecode.DefaultHookK {
		t.Fatalf("recall asked %+v", be.asked)
	}
	want := "<engram-memory mode=\"hybrid\" trigger=\"do you remember\" tokens=\"10\">\nstaging runs on port 5433\n</engram-memory>\n"
	if out != want {
		t.Fatalf("printed %q, want %q", out, want)
	}

	// Again: the offsets say every line is archived.
	n := len(be.turns)
	h = &claudecode.Hook{In: in, Home: home, Budget: 100, IncludeSession: true, Pack: packAll, Log: h.Log}
	if out, err = h.Run(context.Background(), be); err != nil {
		t.Fatal(err)
	}
	if len(be.turns) != n || !strings.Contains(out, "said in this session") {
		t.Fatalf("second run archived %d more turns, printed %q", len(be.turns)-n, out)
	}
}

// TestHookRunNoRecall: Stop archives only; a zero budget or an empty
// prompt recalls nothing; a recall error prints nothing.
func TestHookRunNoRecall(t *testing.T) {
	stop := hookInput(t, filepath.Join(fixtures, "session.jsonl"), "a prompt")
	stop.HookEventName = "Stop"
	for name, h := range map[string]*claudecode.Hook{
		"stop":         {In: stop, Budget: 100},
		"no budget":    {In: hookInput(t, "", "a prompt"), Budget: 0},
		"blank prompt": {In: hookInput(t, "", "  "), Budget: 100},
	} {
		be := &hookBackend{results: []engram.Result{{Text: "x"}}}
		h.Home, h.Pack, h.Log = t.TempDir(), packAll, func(err error) { t.Errorf("%s: logged %v", name, err) }
		if out, err := h.Run(context.Background(), be); out != "" || err != nil || len(be.asked) != 0 {
			t.Errorf("%s: printed %q, err %v, recalled %d times", name, out, err, len(be.asked))
		}
	}
	be := &hookBackend{recallErr: errors.New("down")}
	h := &claudecode.Hook{In: hookInput(t, "", "a prompt"), Home: t.TempDir(), Budget: 100, Pack: packAll}
	if out, err := h.Run(context.Background(), be); out != "" || err == nil || !strings.Contains(err.Error(), "recall: down") {
		t.Fatalf("recall error: printed %q, err %v", out, err)
	}
}

// TestHookRunLogsBrokenLines: a line that is no turn is logged with its
// place, and the others are archived.
func TestHookRunLogsBrokenLines(t *testing.T) {
	var logged []string
	h := &claudecode.Hook{In: hookInput(t, filepath.Join(fixtures, "broken.jsonl"), "a prompt"), Home: t.TempDir(),
		Pack: packAll, Log: func(err error) { logged = append(logged, err.Error()) }}
	be := &hookBackend{}
	if _, err := h.Run(context.Background(), be); err != nil {
		t.Fatal(err)
	}
	if len(be.turns) == 0 || len(logged) == 0 || !strings.Contains(logged[0], "broken.jsonl: line ending at byte") {
		t.Fatalf("archived %d turns, logged %q", len(be.turns), logged)
	}
}

// TestReadHookInput refuses what is not JSON.
func TestReadHookInput(t *testing.T) {
	if _, err := claudecode.ReadHookInput(t.Context(), strings.NewReader("not json")); err == nil || !strings.Contains(err.Error(), "hook input is not JSON") {
		t.Fatalf("err %v", err)
	}
	// A stdin that never ends is read only until the deadline.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := claudecode.ReadHookInput(ctx, r); !errors.Is(err, context.Canceled) {
		t.Fatalf("stdin never closed, context ended: %v", err)
	}
}

// TestLogHook appends a line naming the event and the error; a home that
// cannot be resolved logs nothing, without failing.
func TestLogHook(t *testing.T) {
	home := t.TempDir()
	claudecode.LogHook(home, "Stop", errors.New("archive down"))
	claudecode.LogHook("", "Stop", errors.New("lost"))
	b, err := os.ReadFile(filepath.Join(home, "logs", claudecode.HookLogFile))
	if err != nil || !strings.Contains(string(b), "event=Stop") || !strings.Contains(string(b), `err="archive down"`) {
		t.Fatalf("hook.log: %q, %v", b, err)
	}
}
