package openai

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/llm"
	"github.com/engram-dev/engram/internal/llmtest"
)

var (
	day          = llmtest.Day
	conversation = llmtest.Conversation
	checkMemory  = llmtest.CheckMemory
)

// mustExtractor returns an Extractor for cfg, its server and chat model the
// test server's where cfg leaves them empty, that records its waits.
func mustExtractor(tb testing.TB, cfg ExtractorConfig) (*Extractor, *waits) {
	tb.Helper()
	base, _, model := testServer(tb)
	cfg.BaseURL, cfg.Model = cmp.Or(cfg.BaseURL, base), cmp.Or(cfg.Model, model)
	x, err := NewExtractor(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return x, recordWaits(tb, x.c)
}

// TestExtract sends a batch to the real server's /v1/chat/completions: one
// request with the protocol's prompt and schema, its reply read (the test
// model's weights are random: its memories are checked for shape only).
func TestExtract(t *testing.T) {
	p := newProxy(t)
	x, _ := mustExtractor(t, ExtractorConfig{Config: Config{BaseURL: p.Base(), APIKey: "sk-local"}})
	turns := []engram.Turn{
		{ID: "t1", Namespace: "work", Role: engram.RoleUser, Speaker: "Alice", TS: day, Content: "We decided to use SQLite for the archive because it is one file."},
		{ID: "t2", Namespace: "work", Role: engram.RoleTool, TS: day, Content: "SECRET-TOOL-OUTPUT"},
		{ID: "t3", Namespace: "work", Role: engram.RoleUser, Speaker: "Bob", TS: day.AddDate(0, 0, 1), Content: "I moved to Lisbon last week."},
	}
	mems, err := x.Extract(context.Background(), turns)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mems {
		checkMemory(t, m, turns)
	}
	reqs := p.Requests()
	if len(reqs) != 1 || reqs[0].Path != "/v1/chat/completions" || reqs[0].Auth != "Bearer sk-local" {
		t.Fatalf("requests %+v", reqs)
	}
	body := reqs[0].Body
	if body["model"] != x.Model() || body["temperature"] != 0.0 || body["seed"] != float64(llm.Seed) ||
		body["max_tokens"] != float64(DefaultMaxTokens) || body["stream"] != false {
		t.Errorf("request %v", body)
	}
	rf, _ := json.Marshal(body["response_format"])
	var format struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	}
	if err := json.Unmarshal(rf, &format); err != nil || format.Type != "json_schema" || format.JSONSchema.Name != "memories" {
		t.Fatalf("response_format %s", rf)
	}
	var got, want any
	_ = json.Unmarshal(format.JSONSchema.Schema, &got)
	_ = json.Unmarshal(llm.ReplySchema, &want)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("schema %s, want llm.ReplySchema", format.JSONSchema.Schema)
	}
	msgs, _ := json.Marshal(body["messages"])
	var sent []llm.Message
	_ = json.Unmarshal(msgs, &sent)
	wantMsgs := llm.Prompt([]*engram.Turn{&turns[0], &turns[2]}, false)
	if !slices.Equal(sent, wantMsgs) || strings.Contains(string(msgs), "SECRET-TOOL-OUTPUT") {
		t.Errorf("messages %s, want the prompt of the two shown turns", msgs)
	}
}

// TestExtract_Reply: what a model that follows the prompt answers is read
// into memories. The proxy puts a hand-written reply in the real server's
// answer (the test model cannot write one).
func TestExtract_Reply(t *testing.T) {
	p := newProxy(t)
	x, _ := mustExtractor(t, ExtractorConfig{Config: Config{BaseURL: p.Base()}})
	reply := `{"memories":[{"type":"event","text":"Bob moved to Lisbon in the week of 20 April 2026","rationale":"","subject":"Bob","entities":["Lisbon"],"importance":0.5,"turn":2,"valid_from":"2026-04-20","relation":{"subject":"Bob","predicate":"lives in","object":"Lisbon"}}]}`
	p.Rewrite("", func(_ int, r map[string]any) {
		r["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"] = reply
	})
	turns := conversation(1)
	turns = append(turns, engram.Turn{ID: "t2", Namespace: "work", Role: engram.RoleUser, Speaker: "Bob", TS: day, Content: "I moved to Lisbon last week."})
	mems, err := x.Extract(context.Background(), turns)
	if err != nil {
		t.Fatal(err)
	}
	if len(mems) != 1 {
		t.Fatalf("memories %+v", mems)
	}
	m := mems[0]
	checkMemory(t, m, turns)
	if m.Sources[0] != "t2" || m.Subject != "Bob" || m.Relation == nil || *m.Relation != (engram.Relation{Subject: "Bob", Predicate: "lives_in", Object: "Lisbon"}) ||
		!m.ValidFrom.Equal(time.Date(2026, 4, 20, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("memory %+v (relation %v)", m, m.Relation)
	}
}

func TestExtract_Batches(t *testing.T) {
	p := newProxy(t)
	x, _ := mustExtractor(t, ExtractorConfig{Config: Config{BaseURL: p.Base()}, BatchTurns: 5})
	if _, err := x.Extract(context.Background(), conversation(12)); err != nil {
		t.Fatal(err)
	}
	var sizes []int
	for _, r := range p.Requests() {
		msgs := r.Body["messages"].([]any)
		sizes = append(sizes, strings.Count(msgs[1].(map[string]any)["content"].(string), "\n["))
	}
	if !slices.Equal(sizes, []int{5, 5, 2}) {
		t.Errorf("turns per prompt %v, want 5, 5, 2", sizes)
	}
}

// TestExtract_UnusableReply: without the schema the test model answers
// noise; every attempt fails and the batch is reported, the retry with the
// reminder, and nothing is retried as a server error.
func TestExtract_UnusableReply(t *testing.T) {
	p := newProxy(t)
	x, w := mustExtractor(t, ExtractorConfig{Config: Config{BaseURL: p.Base()}})
	x.format = nil
	p.Rewrite("", func(_ int, r map[string]any) {
		r["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"] = "ok"
	})
	mems, err := x.Extract(context.Background(), conversation(3))
	if len(mems) != 0 {
		t.Fatalf("memories %+v from unusable replies", mems)
	}
	var xe *llm.ExtractError
	if !errors.As(err, &xe) || !errors.Is(err, engram.ErrUnusableOutput) || xe.Backend != "openai-compatible" ||
		xe.Attempts != DefaultMaxAttempts || xe.FirstTurn != "t1" || xe.LastTurn != "t3" || xe.Output != "ok" {
		t.Fatalf("error %v", err)
	}
	reqs := p.Requests()
	if len(reqs) != DefaultMaxAttempts || len(w.all()) != 0 {
		t.Fatalf("%d requests, waits %v", len(reqs), w.all())
	}
	if _, ok := reqs[0].Body["response_format"]; ok {
		t.Error("response_format sent without a format")
	}
	second := reqs[1].Body["messages"].([]any)[1].(map[string]any)["content"].(string)
	if !strings.HasSuffix(second, llm.RetryReminder) {
		t.Error("the retry lacks the reminder")
	}
}

// TestExtract_ServerErrors: a missing model and a refused key are errors
// to retry later, not unusable output (the batch is not skipped); a 429 is
// waited for.
func TestExtract_ServerErrors(t *testing.T) {
	x, _ := mustExtractor(t, ExtractorConfig{Config: Config{Model: "no-such-chat-model"}})
	_, err := x.Extract(context.Background(), conversation(1))
	mustCode(t, err, engram.EUNAVAILABLE)
	if errors.Is(err, engram.ErrUnusableOutput) || !strings.Contains(engram.ErrorMessage(err), `model "no-such-chat-model" is not available`) {
		t.Errorf("missing model: %v", err)
	}
	if err := x.Check(context.Background()); engram.ErrorCode(err) != engram.EUNAVAILABLE || !strings.Contains(err.Error(), "no-such-chat-model") {
		t.Errorf("Check of a missing model: %v", err)
	}

	p := newProxy(t)
	x, w := mustExtractor(t, ExtractorConfig{Config: Config{BaseURL: p.Base()}})
	if err := x.Check(context.Background()); err != nil {
		t.Errorf("Check: %v", err)
	}
	limited := false
	p.Fault(func(_ int, w http.ResponseWriter, r *http.Request) bool {
		if !limited && r.URL.Path == "/v1/chat/completions" {
			limited = true
			answer(w, http.StatusTooManyRequests, map[string]string{"Retry-After": "3"}, "tokens per minute")
			return true
		}
		return false
	})
	if _, err := x.Extract(context.Background(), conversation(2)); err != nil {
		t.Fatal(err)
	}
	if got := w.all(); !slices.Equal(got, []time.Duration{3 * time.Second}) {
		t.Errorf("waits %v", got)
	}
	p.Fault(func(_ int, w http.ResponseWriter, _ *http.Request) bool {
		answer(w, http.StatusForbidden, nil, "project has no access to model")
		return true
	})
	_, err = x.Extract(context.Background(), conversation(2))
	mustCode(t, err, engram.EUNAVAILABLE)
	if errors.Is(err, engram.ErrUnusableOutput) || !strings.Contains(engram.ErrorMessage(err), "403 Forbidden") {
		t.Errorf("forbidden: %v", err)
	}
}

// TestCheck_ModelList: a server without GET /models/{model} (vLLM and
// llama.cpp's server answer 404) is asked for its list of models instead;
// a model it lists passes (Ollama lists "name:latest" for "name"), one it
// does not is named with the models it has.
func TestCheck_ModelList(t *testing.T) {
	p := newProxy(t)
	p.Fault(func(_ int, w http.ResponseWriter, r *http.Request) bool {
		if strings.HasPrefix(r.URL.Path, "/v1/models/") {
			answer(w, http.StatusNotFound, nil, "not found")
			return true
		}
		return false
	})
	x, _ := mustExtractor(t, ExtractorConfig{Config: Config{BaseURL: p.Base()}})
	if err := x.Check(context.Background()); err != nil {
		t.Fatalf("Check through the list: %v", err)
	}
	_, _, chat := testServer(t)
	y, _ := mustExtractor(t, ExtractorConfig{Config: Config{BaseURL: p.Base(), Model: "no-such-chat-model"}})
	err := y.Check(context.Background())
	mustCode(t, err, engram.EUNAVAILABLE)
	if msg := engram.ErrorMessage(err); !strings.Contains(msg, `model "no-such-chat-model" is not among the models`) || !strings.Contains(msg, chat) {
		t.Errorf("missing from the list: %v", err)
	}
	var paths []string
	for _, r := range p.Requests() {
		paths = append(paths, r.Method+" "+r.Path)
	}
	want := []string{"GET /v1/models/" + chat, "GET /v1/models", "GET /v1/models/no-such-chat-model", "GET /v1/models"}
	if !slices.Equal(paths, want) {
		t.Errorf("requests %v, want %v", paths, want)
	}
}

func TestNewExtractor(t *testing.T) {
	for _, tc := range []struct {
		cfg   ExtractorConfig
		field string
	}{
		{ExtractorConfig{Config: Config{}}, "openai.model"},
		{ExtractorConfig{Config: Config{Model: "m"}, BatchTurns: -1}, "openai.batch_turns"},
		{ExtractorConfig{Config: Config{Model: "m"}, MaxTokens: -1}, "openai.max_tokens"},
		{ExtractorConfig{Config: Config{Model: "m", BaseURL: "localhost:8080"}}, "openai.base_url"},
	} {
		if _, err := NewExtractor(tc.cfg); engram.ErrorCode(err) != engram.EINVALID || engram.ErrorField(err) != tc.field {
			t.Errorf("NewExtractor(%+v) = %v, want EINVALID on %s", tc.cfg, err, tc.field)
		}
	}
	x, err := NewExtractor(ExtractorConfig{Config: Config{Model: "gpt-4o-mini"}})
	if err != nil || x.Host() != DefaultBaseURL || x.BatchTurns() != DefaultBatchTurns || x.cfg.MaxTokens != DefaultMaxTokens ||
		x.cfg.Timeout != DefaultExtractTimeout || x.cfg.MaxRetries != DefaultMaxRetries {
		t.Fatalf("defaults: %+v, %v", x, err)
	}
}
