package ollama

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/llm"
	"github.com/engram-dev/engram/internal/llmtest"
)

// EnvChatModel names the test server's chat model (engram-test-chat, made by
// scripts/mkmodel: untrained weights that, under a JSON schema, close every
// bracket as soon as the schema allows, and answer "ok" without one).
const EnvChatModel = "ENGRAM_TEST_OLLAMA_CHAT_MODEL"

// MustNewExtractor returns an Extractor for cfg, with Host and Model taken
// from the test server where cfg leaves them empty. It is closed at the end
// of the test.
func MustNewExtractor(tb testing.TB, cfg ExtractorConfig) *Extractor {
	tb.Helper()
	if cfg.Host == "" || cfg.Model == "" {
		host, _ := testServer(tb)
		model := os.Getenv(EnvChatModel)
		if model == "" {
			if testing.Short() {
				tb.Skipf("%s not set: Ollama tests skipped in -short mode (scripts/ollama.sh up PORT starts a server)", EnvChatModel)
			}
			tb.Fatalf("Ollama test chat model not configured: run `make test` (it starts one) or scripts/ollama.sh up PORT and export %s; -short skips", EnvChatModel)
		}
		cfg.Host, cfg.Model = cmp.Or(cfg.Host, host), cmp.Or(cfg.Model, model)
	}
	x, err := NewExtractor(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = x.Close() })
	return x
}

var (
	day          = llmtest.Day
	conversation = llmtest.Conversation
	checkMemory  = llmtest.CheckMemory
)

// chatRecorder records the chat requests that pass a proxy; reply, when
// set, answers request n (from 1) itself with the content it returns, unless
// it returns ok false.
type chatRecorder struct {
	mu    sync.Mutex
	reqs  []api.ChatRequest
	reply func(n int) (content, doneReason string, ok bool)
}

func recordChats(p *proxy, reply func(n int) (string, string, bool)) *chatRecorder {
	c := &chatRecorder{reply: reply}
	p.Fault(func(_ int, w http.ResponseWriter, r *http.Request) bool {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return true
		}
		if r.URL.Path != "/api/chat" {
			return false
		}
		var req api.ChatRequest
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return true
		}
		c.mu.Lock()
		c.reqs = append(c.reqs, req)
		n := len(c.reqs)
		c.mu.Unlock()
		if c.reply == nil {
			return false
		}
		content, done, ok := c.reply(n)
		if !ok {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(api.ChatResponse{Model: req.Model, CreatedAt: time.Now(),
			Message: api.Message{Role: "assistant", Content: content}, Done: true, DoneReason: done})
		return true
	})
	return c
}

func (c *chatRecorder) Requests() []api.ChatRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.reqs)
}

// userPrompt returns the turns part of a recorded request.
func userPrompt(tb testing.TB, req api.ChatRequest) string {
	tb.Helper()
	if len(req.Messages) != 2 || req.Messages[0].Role != "system" || req.Messages[1].Role != "user" {
		tb.Fatalf("messages %+v: want a system and a user message", req.Messages)
	}
	return req.Messages[1].Content
}

// --- against the real server ---

func TestExtract(t *testing.T) {
	p := newProxy(t)
	rec := recordChats(p, nil)
	x := MustNewExtractor(t, ExtractorConfig{Config: Config{Host: p.Host()}})
	turns := []engram.Turn{
		{ID: "t1", Namespace: "work", Role: engram.RoleUser, Speaker: "Alice", TS: day,
			Content: "We decided to use SQLite for the archive\nbecause it is one file."},
		{ID: "t2", Namespace: "work", Role: engram.RoleTool, TS: day, Content: "SECRET-TOOL-OUTPUT"},
		{ID: "t3", Namespace: "work", Role: engram.RoleAssistant, TS: day.Add(time.Minute), Content: "Noted. I will remember it."},
		{ID: "t4", Namespace: "work", Role: engram.RoleUser, Speaker: "Bob", TS: day.AddDate(0, 0, 1), Content: "我住在上海，我喜欢喝茶。"},
	}
	mems, err := x.Extract(context.Background(), turns)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d memories from the test model", len(mems))
	for _, m := range mems {
		checkMemory(t, m, turns)
	}

	reqs := rec.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d chat requests, want 1", len(reqs))
	}
	req := reqs[0]
	if req.Model != x.Model() || req.Stream == nil || *req.Stream {
		t.Fatalf("request model %q, stream %v: want %q and stream false", req.Model, req.Stream, x.Model())
	}
	if !bytes.Equal(req.Format, llm.ReplySchema) || !json.Valid(req.Format) {
		t.Fatalf("format %s: want the reply schema", req.Format)
	}
	for k, want := range map[string]any{"temperature": 0.0, "seed": float64(llm.Seed), "num_predict": float64(DefaultMaxTokens)} {
		if req.Options[k] != want {
			t.Errorf("option %s = %v, want %v", k, req.Options[k], want)
		}
	}
	want := "Conversation:\n" +
		"[1] 2026-05-01 Alice (user): We decided to use SQLite for the archive because it is one file.\n" +
		"[2] 2026-05-01 assistant: Noted. I will remember it.\n" +
		"[3] 2026-05-02 Bob (user): 我住在上海，我喜欢喝茶。\n"
	if got := userPrompt(t, req); got != want {
		t.Fatalf("prompt:\n%s\nwant:\n%s", got, want)
	}
}

func TestExtract_Batches(t *testing.T) {
	p := newProxy(t)
	rec := recordChats(p, nil)
	x := MustNewExtractor(t, ExtractorConfig{Config: Config{Host: p.Host()}, BatchTurns: 12})
	turns := conversation(30)
	turns[5].Role = engram.RoleSystem // not shown: 29 turns, in 12 + 12 + 5
	mems, err := x.Extract(context.Background(), turns)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mems {
		checkMemory(t, m, turns)
	}
	reqs := rec.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d chat requests for 29 turns in batches of 12, want 3", len(reqs))
	}
	for i, want := range []struct{ n, first int }{{12, 1}, {12, 14}, {5, 26}} {
		p := userPrompt(t, reqs[i])
		if n := strings.Count(p, "\n["); n != want.n || !strings.Contains(p, fmt.Sprintf("\n[%d] ", want.n)) {
			t.Errorf("request %d numbers %d turns, want %d:\n%s", i+1, n, want.n, p)
		}
		if !strings.Contains(p, fmt.Sprintf("[1] 2026-05-01 Alice (user): Note %d:", want.first)) {
			t.Errorf("request %d does not start at turn %d:\n%s", i+1, want.first, p)
		}
	}
}

func TestExtract_NothingToSend(t *testing.T) {
	p := newProxy(t)
	x := MustNewExtractor(t, ExtractorConfig{Config: Config{Host: p.Host()}})
	for _, turns := range [][]engram.Turn{nil, {
		{ID: "a", Role: engram.RoleTool, Content: "tool output"},
		{ID: "b", Role: engram.RoleSystem, Content: "You are helpful."},
		{ID: "c", Role: engram.RoleUser, Content: " \n "},
	}} {
		mems, err := x.Extract(context.Background(), turns)
		if err != nil || len(mems) != 0 {
			t.Fatalf("Extract = %v, %v; want nothing", mems, err)
		}
	}
	if n := len(p.Requests()); n != 0 {
		t.Fatalf("%d requests, want none", n)
	}
}

// Without the schema the test model answers "ok": every attempt fails and
// the batch is reported, after exactly MaxAttempts requests.
func TestExtract_UnusableReply(t *testing.T) {
	p := newProxy(t)
	rec := recordChats(p, nil)
	x := MustNewExtractor(t, ExtractorConfig{Config: Config{Host: p.Host()}})
	x.format = nil
	turns := conversation(3)
	mems, err := x.Extract(context.Background(), turns)
	if len(mems) != 0 {
		t.Fatalf("got memories %+v from unusable replies", mems)
	}
	var xe *ExtractError
	if !errors.As(err, &xe) {
		t.Fatalf("error %v: want an *ExtractError", err)
	}
	if !errors.Is(err, ErrBadOutput) || engram.ErrorCode(err) != engram.EINVALID {
		t.Fatalf("error %v: want ErrBadOutput, EINVALID", err)
	}
	if xe.FirstTurn != "t1" || xe.LastTurn != "t3" || xe.Attempts != DefaultMaxAttempts || xe.Model != x.Model() ||
		xe.Output != "ok" || xe.Reason != llm.ErrNoJSON.Error() {
		t.Fatalf("ExtractError %+v", *xe)
	}
	t.Log(err)
	reqs := rec.Requests()
	if len(reqs) != DefaultMaxAttempts {
		t.Fatalf("%d chat requests, want %d", len(reqs), DefaultMaxAttempts)
	}
	if first, second := userPrompt(t, reqs[0]), userPrompt(t, reqs[1]); strings.Contains(first, llm.RetryReminder) || second != first+llm.RetryReminder {
		t.Fatalf("the retry must add the reminder to the first prompt:\n%s\n---\n%s", first, second)
	}

	x.cfg.MaxAttempts = 1
	if _, err := x.Extract(context.Background(), turns); !errors.As(err, &xe) || xe.Attempts != 1 {
		t.Fatalf("MaxAttempts 1: %v", err)
	}
	if n := len(rec.Requests()); n != DefaultMaxAttempts+1 {
		t.Fatalf("MaxAttempts 1 sent %d requests", n-DefaultMaxAttempts)
	}
}

// A reply cut off by MaxTokens before its first memory is unusable.
func TestExtract_Truncated(t *testing.T) {
	x := MustNewExtractor(t, ExtractorConfig{MaxTokens: 3})
	_, err := x.Extract(context.Background(), conversation(2))
	var xe *ExtractError
	if !errors.As(err, &xe) {
		t.Fatalf("error %v: want an *ExtractError", err)
	}
	if want := llm.ErrTruncated.Error() + " (the reply reached max tokens, 3)"; xe.Reason != want {
		t.Fatalf("reason %q, want %q (output %q)", xe.Reason, want, xe.Output)
	}
}

// Replies a real model gives, through the whole path: a fenced reply cut
// off mid-memory keeps its complete memories.
func TestExtract_RepairedReply(t *testing.T) {
	p := newProxy(t)
	reply := "Here are the memories:\n```json\n" + `{"memories": [
  {"type": "Decision", "text": "Alice decided to use SQLite", "rationale": "it is one file", "subject": "Alice",
   "entities": ["SQLite", "SQLite", ""], "importance": 0.9, "turn": 1,
   "relation": {"subject": "Alice", "predicate": "Uses For Database", "object": "SQLite"}},
  {"type": "preference", "text": "Bob likes tea", "subject": "", "importance": 7, "turn": "2"},
  {"type": "fact", "text": "Bob lives in Shangh`
	rec := recordChats(p, func(int) (string, string, bool) { return reply, "length", true })
	x := MustNewExtractor(t, ExtractorConfig{Config: Config{Host: p.Host()}})
	turns := conversation(2)
	turns[1].Speaker, turns[1].Namespace = "Bob", ""
	mems, err := x.Extract(context.Background(), turns)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Requests()) != 1 {
		t.Fatalf("%d requests: a repairable reply must not be retried", len(rec.Requests()))
	}
	want := []engram.Memory{{
		ID: engram.MemoryID("work", "decision", "Alice decided to use SQLite", "t1"), Namespace: "work", Type: "decision",
		Text: "Alice decided to use SQLite", Rationale: "it is one file", Subject: "Alice", Entities: []string{"SQLite"},
		Importance: 0.9, TS: turns[0].TS, ValidFrom: turns[0].TS, Sources: []string{"t1"},
		Relation: &engram.Relation{Subject: "Alice", Predicate: "uses_for_database", Object: "SQLite"},
	}, {
		ID: engram.MemoryID("default", "preference", "Bob likes tea", "t2"), Namespace: "default", Type: "preference",
		Text: "Bob likes tea", Subject: "Bob", Importance: 1, TS: turns[1].TS, ValidFrom: turns[1].TS, Sources: []string{"t2"},
	}}
	if !reflect.DeepEqual(mems, want) {
		t.Fatalf("memories:\n%+v\nwant:\n%+v", mems, want)
	}
}

// A batch whose replies stay unusable is reported and skipped; the others
// are extracted.
func TestExtract_BadBatchSkipped(t *testing.T) {
	p := newProxy(t)
	recordChats(p, func(n int) (string, string, bool) {
		if n <= 2 { // both attempts of the first batch
			return "I'm sorry, I cannot help with that.", "stop", true
		}
		return `{"memories":[{"type":"plan","text":"Alice will book room 3","subject":"Alice","entities":[],"importance":0.7,"turn":2}]}`, "stop", true
	})
	x := MustNewExtractor(t, ExtractorConfig{Config: Config{Host: p.Host()}, BatchTurns: 2})
	turns := conversation(4)
	mems, err := x.Extract(context.Background(), turns)
	var xe *ExtractError
	if !errors.As(err, &xe) || xe.FirstTurn != "t1" || xe.LastTurn != "t2" {
		t.Fatalf("error %v: want an *ExtractError for t1 to t2", err)
	}
	if len(mems) != 1 || mems[0].Sources[0] != "t4" || mems[0].Text != "Alice will book room 3" {
		t.Fatalf("memories %+v: want the second batch's plan, from t4", mems)
	}
	checkMemory(t, mems[0], turns)
}

func TestExtract_UnknownModel(t *testing.T) {
	const model = "engram-no-such-chat-model"
	x := MustNewExtractor(t, ExtractorConfig{Config: Config{Model: model}})
	_, err := x.Extract(context.Background(), conversation(1))
	mustCode(t, err, engram.EUNAVAILABLE)
	var xe *ExtractError
	if errors.As(err, &xe) || !strings.Contains(err.Error(), "run: ollama pull "+model) {
		t.Fatalf("error %v: want the server error that says to pull the model", err)
	}
}

func TestExtract_Unreachable(t *testing.T) {
	x, err := NewExtractor(ExtractorConfig{Config: Config{Host: closedPort(t), MaxRetries: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	pauses := 0
	x.conn.pause = func(context.Context, time.Duration) error { pauses++; return nil }
	_, err = x.Extract(context.Background(), conversation(3))
	mustCode(t, err, engram.EUNAVAILABLE)
	var xe *ExtractError
	if errors.As(err, &xe) || errors.Is(err, ErrBadOutput) || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("error %v: want a server error with ECONNREFUSED, not a bad reply", err)
	}
	if !strings.Contains(err.Error(), "not reachable") || strings.Contains(err.Error(), "attempts") || pauses != 0 {
		t.Fatalf("error %q after %d backoffs: want the server not reachable, at once (MaxRetries -1)", err, pauses)
	}
}

func TestExtract_ContextCanceled(t *testing.T) {
	p := newProxy(t)
	ctx, cancel := context.WithCancel(context.Background())
	p.Fault(func(n int, w http.ResponseWriter, r *http.Request) bool {
		cancel() // the first batch is in flight: cancel it, and hang
		return hang(n, w, r)
	})
	x := MustNewExtractor(t, ExtractorConfig{Config: Config{Host: p.Host()}})
	// Untimed: a request that ignored the cancel would hang for ever.
	_, err := x.Extract(ctx, conversation(30))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v: want context.Canceled", err)
	}
	if n := len(p.Requests()); n != 1 {
		t.Fatalf("%d requests, want 1: the cancel must stop the later batches", n)
	}
	if _, err := x.Extract(ctx, conversation(3)); !errors.Is(err, context.Canceled) {
		t.Fatalf("already canceled: %v", err)
	}
	if n := len(p.Requests()); n != 1 {
		t.Fatalf("an already canceled context sent a request")
	}
}

// --- without a server ---

func TestNewExtractor_Defaults(t *testing.T) {
	t.Setenv("OLLAMA_HOST", "")
	x, err := NewExtractor(ExtractorConfig{})
	if err != nil {
		t.Fatal(err)
	}
	c := x.cfg
	if x.Host() != "http://"+DefaultHost || x.Model() != DefaultChatModel || c.Timeout != DefaultExtractTimeout ||
		c.BatchTurns != DefaultBatchTurns || c.MaxTokens != DefaultMaxTokens || c.MaxAttempts != DefaultMaxAttempts ||
		c.MaxRetries != DefaultMaxRetries || c.RetryDelay != DefaultRetryDelay || x.conn.cfg.Model != DefaultChatModel {
		t.Fatalf("defaults: host %s, %+v", x.Host(), c)
	}
	if !json.Valid(x.format) {
		t.Fatal("the reply schema is not valid JSON")
	}
}

func TestNewExtractor_Invalid(t *testing.T) {
	for _, tc := range []struct {
		cfg   ExtractorConfig
		field string
	}{
		{ExtractorConfig{Config: Config{Host: "ftp://x"}}, "ollama.host"},
		{ExtractorConfig{Config: Config{Timeout: -time.Second}}, "ollama.timeout"},
		{ExtractorConfig{BatchTurns: -1}, "ollama.batch_turns"},
		{ExtractorConfig{MaxTokens: -1}, "ollama.max_tokens"},
		{ExtractorConfig{MaxAttempts: -1}, "ollama.max_attempts"},
	} {
		_, err := NewExtractor(tc.cfg)
		if engram.ErrorCode(err) != engram.EINVALID || engram.ErrorField(err) != tc.field {
			t.Errorf("NewExtractor(%+v) = %v, want EINVALID on %s", tc.cfg, err, tc.field)
		}
	}
}
