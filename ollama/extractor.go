package ollama

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ollama/ollama/api"
	"github.com/tidwall/gjson"

	engram "github.com/engram-dev/engram"
)

// Defaults for ExtractorConfig's zero values.
const (
	// DefaultChatModel is the extraction model when ExtractorConfig.Model is
	// empty: Qwen2.5 3B Instruct (about 1.9 GB at Ollama's default 4-bit
	// quantization), small enough for a laptop CPU, multilingual (English and
	// Chinese conversations alike) and good at filling a JSON schema. It is
	// not a reasoning model, so no hidden "thinking" eats MaxTokens.
	DefaultChatModel = "qwen2.5:3b-instruct"
	// DefaultBatchTurns is the most turns in one prompt.
	DefaultBatchTurns = 12
	// DefaultMaxTokens bounds the reply (Ollama's num_predict): room for
	// about fifteen memories.
	DefaultMaxTokens = 1024
	// DefaultMaxAttempts is how many times a batch is sent when the reply
	// is not usable JSON: once, then once more with a stricter reminder.
	DefaultMaxAttempts = 2
	// DefaultExtractTimeout bounds each request: generating a thousand
	// tokens with a 3B model on a few CPU cores takes minutes.
	DefaultExtractTimeout = 5 * time.Minute
)

const (
	chatSeed      = 42   // with temperature 0: the same turns give the same reply
	maxTurnRunes  = 2000 // of a turn's content in the prompt; the rest is cut
	maxTextRunes  = 1000 // a longer memory text is a copy of the input, not a memory
	maxNameRunes  = 200  // of a subject, an entity or a relation part
	maxEntities   = 16
	maxExcerpt    = 512 // bytes of the model's output kept in an ExtractError
	maxCandidates = 8   // places in a reply where JSON is looked for
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
	if c.Model == "" {
		c.Model = DefaultChatModel
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultExtractTimeout
	}
	c.Config = c.Config.withDefaults()
	if c.BatchTurns == 0 {
		c.BatchTurns = DefaultBatchTurns
	}
	if c.MaxTokens == 0 {
		c.MaxTokens = DefaultMaxTokens
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
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
var ErrBadOutput = &engram.Error{Code: engram.EINVALID, Message: "the model's reply is not usable"}

// ExtractError reports a batch of turns whose replies stayed unusable after
// every attempt. Sending the batch again gives the same reply (the sampling
// is deterministic): record it and skip the batch.
type ExtractError struct {
	Model     string
	FirstTurn string // id of the batch's first turn
	LastTurn  string // id of the batch's last turn
	Attempts  int
	Reason    string // what was wrong with the last reply
	Output    string // the start of the last reply
}

// Error implements the error interface.
func (e *ExtractError) Error() string {
	return fmt.Sprintf("ollama model %q gave no usable reply for turns %s to %s in %d attempts: %s; the reply began %q",
		e.Model, e.FirstTurn, e.LastTurn, e.Attempts, e.Reason, e.Output)
}

// Unwrap returns ErrBadOutput.
func (e *ExtractError) Unwrap() error { return ErrBadOutput }

// Is makes errors.Is(err, engram.ErrUnusableOutput) hold, so the pipeline
// records the batch as skipped instead of retrying it.
func (e *ExtractError) Is(target error) bool { return target == engram.ErrUnusableOutput }

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
	return &Extractor{cfg: cfg, conn: conn, format: replySchema}, nil
}

// Model returns the chat model's name, as configured.
func (x *Extractor) Model() string { return x.cfg.Model }

// Host returns the server's base URL, e.g. "http://127.0.0.1:11434".
func (x *Extractor) Host() string { return x.conn.Host() }

// Close releases idle connections. The Extractor must not be used after.
func (x *Extractor) Close() error { return x.conn.Close() }

// Extract returns the memories the model finds in turns, in batch order,
// without duplicates. Tool and system turns are not shown to the model. The
// turns are sent in batches of at most BatchTurns, one request each.
//
// Errors: the errors of Embed for the server (EUNAVAILABLE when it is down,
// lacks the model or fails; the context's error when ctx is done), with no
// memories: retry later. When the replies for a batch stay unusable after
// MaxAttempts, the other batches are still extracted: Extract returns their
// memories with one *ExtractError per bad batch (joined; errors.As finds
// the first, errors.Is(err, ErrBadOutput) holds).
func (x *Extractor) Extract(ctx context.Context, turns []engram.Turn) ([]engram.Memory, error) {
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
	for batch := range slices.Chunk(shown, x.cfg.BatchTurns) {
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

func (x *Extractor) extractBatch(ctx context.Context, batch []*engram.Turn) ([]engram.Memory, error) {
	var reason, output string
	for attempt := 1; attempt <= x.cfg.MaxAttempts; attempt++ {
		reply, doneReason, err := x.chat(ctx, prompt(batch, attempt > 1))
		if err != nil {
			return nil, err
		}
		items, _, err := parseReply(reply)
		if err == nil {
			return memories(items, batch), nil
		}
		reason, output = err.Error(), excerpt(reply)
		if doneReason == "length" {
			reason += fmt.Sprintf(" (the reply reached max tokens, %d)", x.cfg.MaxTokens)
		}
	}
	return nil, &ExtractError{Model: x.cfg.Model, FirstTurn: batch[0].ID, LastTurn: batch[len(batch)-1].ID,
		Attempts: x.cfg.MaxAttempts, Reason: reason, Output: output}
}

// chat sends one request, with the retries of Config, and returns the
// reply's text and why the model stopped ("stop", "length").
func (x *Extractor) chat(ctx context.Context, msgs []api.Message) (reply, doneReason string, err error) {
	stream := false
	req := &api.ChatRequest{
		Model:    x.cfg.Model,
		Messages: msgs,
		Stream:   &stream,
		Format:   x.format,
		Options:  map[string]any{"temperature": 0, "seed": chatSeed, "num_predict": x.cfg.MaxTokens},
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

// --- the prompt ---

const systemPrompt = `You extract what is worth remembering from a conversation, for an assistant's long-term memory.
Reply with JSON only: {"memories":[...]}. Each memory:
- type: "fact" (about a person, place or thing), "decision" (something chosen), "preference" (a like or dislike), "plan" (an intention or todo) or "event" (something that happened)
- text: one short sentence that names who, e.g. "Alice decided to use SQLite"; keep the conversation's language
- rationale: why, for a decision; else ""
- subject: who or what it is about
- entities: names of the people, places, tools and projects in it
- importance: 0 (trivial) to 1 (essential)
- turn: the number of the turn it comes from
- relation (optional): {"subject":..., "predicate":..., "object":...}, the predicate a snake_case verb such as lives_in, works_at, likes, uses
Only what a speaker states as true: skip questions, hypotheticals, greetings and small talk. If nothing is worth keeping: {"memories":[]}`

const retryReminder = "\n\nYour last reply was not usable. Reply with the JSON object alone (no prose, no code fence), at most 8 memories with short texts."

// prompt returns the messages for a batch: the instructions, then the turns
// numbered from 1 with date and speaker. A retry adds a stricter reminder
// (with temperature 0, the same prompt would give the same reply).
func prompt(batch []*engram.Turn, retry bool) []api.Message {
	var b strings.Builder
	b.WriteString("Conversation:\n")
	for i, t := range batch {
		fmt.Fprintf(&b, "[%d] ", i+1)
		if !t.TS.IsZero() {
			b.WriteString(t.TS.UTC().Format("2006-01-02 "))
		}
		if t.Speaker != "" {
			fmt.Fprintf(&b, "%s (%s): ", oneLine(t.Speaker, maxNameRunes), t.Role)
		} else {
			fmt.Fprintf(&b, "%s: ", t.Role)
		}
		b.WriteString(oneLine(t.Content, maxTurnRunes))
		b.WriteByte('\n')
	}
	if retry {
		b.WriteString(retryReminder)
	}
	return []api.Message{{Role: "system", Content: systemPrompt}, {Role: "user", Content: b.String()}}
}

// oneLine collapses white space (newlines included) and cuts s to max runes.
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "\uFFFD")), " ")
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	return string([]rune(s)[:max]) + "…"
}

// replySchema is the reply's shape, given as the request's format: the
// server constrains sampling to it, so a model that follows it cannot emit
// prose or fences; it can still be cut off by MaxTokens.
var replySchema = json.RawMessage(`{"type":"object","properties":{"memories":{"type":"array","items":{"type":"object","properties":{` +
	`"type":{"type":"string","enum":["fact","decision","preference","plan","event"]},` +
	`"text":{"type":"string"},"rationale":{"type":"string"},"subject":{"type":"string"},` +
	`"entities":{"type":"array","items":{"type":"string"}},"importance":{"type":"number"},"turn":{"type":"integer"},` +
	`"relation":{"type":"object","properties":{"subject":{"type":"string"},"predicate":{"type":"string"},"object":{"type":"string"}},"required":["subject","predicate","object"]}},` +
	`"required":["type","text","subject","entities","importance","turn"]}}},"required":["memories"]}`)

// --- reading the reply ---

// Why a reply is not usable.
var (
	errNoJSON     = errors.New("no JSON object in the reply")
	errTruncated  = errors.New("the reply was cut off before the first complete memory")
	errSyntax     = errors.New("the reply is not valid JSON")
	errNoMemories = errors.New("the reply holds no list of memories")
)

// parseReply finds the memories in a model's reply and returns them with
// the repaired JSON they were read from. It tries the first few places where
// a JSON object or array starts (prose before the JSON, a code fence),
// repairs each (see repairJSON), and takes the first that holds a list of
// memories: the "memories" array, a top-level array, the first array of
// objects, or a single memory object. The error is that of the first place.
func parseReply(s string) ([]gjson.Result, string, error) {
	first := errNoJSON
	for i, n := 0, 0; i < len(s) && n < maxCandidates; i++ {
		if s[i] != '{' && s[i] != '[' {
			continue
		}
		n++
		fixed, err := repairJSON(s[i:])
		var items []gjson.Result
		if err == nil {
			items, err = memoryList(gjson.Parse(fixed))
		}
		if err == nil {
			return items, fixed, nil
		}
		if n == 1 {
			first = err
		}
	}
	return nil, "", first
}

// memoryList returns the objects of the list of memories in root.
func memoryList(root gjson.Result) ([]gjson.Result, error) {
	list := root
	if root.IsObject() {
		list = root.Get("memories")
		if !list.IsArray() {
			list = gjson.Result{}
			root.ForEach(func(_, v gjson.Result) bool {
				if v.IsArray() && (len(v.Array()) == 0 || v.Array()[0].IsObject()) {
					list = v
					return false
				}
				return true
			})
		}
		if !list.IsArray() && root.Get("text").Exists() && root.Get("type").Exists() {
			return []gjson.Result{root}, nil
		}
	}
	if !list.IsArray() {
		return nil, errNoMemories
	}
	var out []gjson.Result
	for _, v := range list.Array() {
		if v.IsObject() {
			out = append(out, v)
		}
	}
	if len(out) == 0 && len(list.Array()) > 0 {
		return nil, errNoMemories // a list of something else
	}
	return out, nil
}

// repairJSON returns the JSON value that s starts with, repaired for what
// small models get wrong: text after the value is dropped; trailing commas
// are removed; single-quoted strings become double-quoted (a quote closes
// only before : , } ] or the end, so "Alice's" stays whole); raw control
// characters and bad escapes inside strings are escaped; a closing bracket
// that skips an open one closes it too, and one that matches nothing is
// dropped. A value cut off before its end is cut back to its last complete
// memory (an element of the top-level array, or of an array directly in the
// top-level object) and closed; cut before any, it is errTruncated.
func repairJSON(s string) (string, error) {
	if s == "" || s[0] != '{' && s[0] != '[' {
		return "", errNoJSON
	}
	listDepth := 2 // {"memories": [ <memory> ...
	if s[0] == '[' {
		listDepth = 1
	}
	var (
		b        = make([]byte, 0, len(s)+16)
		stack    []byte // open brackets
		quote    byte   // the open string's quote, 0 outside strings
		cut      = -1   // where a cut-off value may end
		cutStack []byte
		complete int // memories complete at cut
		items    int
	)
	mark := func(done int) {
		cut, cutStack, complete = len(b), slices.Clone(stack), done
	}
	closers := func(st []byte) []byte {
		var out []byte
		for i := len(st) - 1; i >= 0; i-- {
			out = append(out, st[i]+2) // '{'+2 == '}', '['+2 == ']'
		}
		return out
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if quote != 0 {
			switch {
			case c == '\\' && i+1 < len(s):
				i++
				switch n := s[i]; {
				case strings.IndexByte(`"\/bfnrtu`, n) >= 0:
					b = append(b, '\\', n)
				case n == '\'':
					b = append(b, '\'')
				default:
					b = append(b, '\\', '\\', n)
				}
			case c == '\\':
				b = append(b, '\\', '\\')
			case c == quote && (quote == '"' || closesSingle(s[i+1:])):
				b = append(b, '"')
				quote = 0
			case c == '"':
				b = append(b, '\\', '"')
			case c < 0x20:
				b = appendEscaped(b, c)
			default:
				b = append(b, c)
			}
			continue
		}
		switch c {
		case '"', '\'':
			quote = c
			b = append(b, '"')
		case '{', '[':
			stack = append(stack, c)
			b = append(b, c)
			if len(stack) == listDepth && c == '[' {
				items = 0
				mark(0)
			}
		case '}', ']':
			open := c - 2
			j := bytes.LastIndexByte(stack, open)
			if j < 0 {
				continue // matches nothing
			}
			b = trimComma(b)
			b = append(b, closers(stack[j+1:])...)
			b = append(b, c)
			stack = stack[:j]
			switch {
			case len(stack) == 0:
				return validJSON(string(b))
			case len(stack) == listDepth && stack[len(stack)-1] == '[' && open == '{':
				items++
				mark(items)
			case len(stack) < listDepth:
				mark(-1) // the list is closed: nothing of it can be lost
			}
		default:
			b = append(b, c)
		}
	}
	if cut < 0 || complete == 0 {
		return "", errTruncated
	}
	b = append(trimComma(b[:cut]), closers(cutStack)...)
	return validJSON(string(b))
}

// closesSingle reports whether a single quote followed by rest ends a
// single-quoted string rather than being an apostrophe inside it.
func closesSingle(rest string) bool {
	rest = strings.TrimLeft(rest, " \t\r\n")
	return rest == "" || strings.IndexByte(":,}]", rest[0]) >= 0
}

func appendEscaped(b []byte, c byte) []byte {
	switch c {
	case '\n':
		return append(b, '\\', 'n')
	case '\r':
		return append(b, '\\', 'r')
	case '\t':
		return append(b, '\\', 't')
	}
	return fmt.Appendf(b, `\u%04x`, c)
}

// trimComma drops a trailing comma (and the white space after it) from b.
func trimComma(b []byte) []byte {
	t := len(b)
	for t > 0 && strings.IndexByte(" \t\r\n", b[t-1]) >= 0 {
		t--
	}
	if t > 0 && b[t-1] == ',' {
		return b[:t-1]
	}
	return b
}

func validJSON(s string) (string, error) {
	if !json.Valid([]byte(s)) {
		return "", errSyntax
	}
	return s, nil
}

// --- checking the memories ---

// Base importance of each memory type, when the model gives none (the
// rules extractor's values).
var typeImportance = map[string]float64{
	engram.MemoryDecision:   0.9,
	engram.MemoryPlan:       0.7,
	engram.MemoryPreference: 0.6,
	engram.MemoryFact:       0.6,
	engram.MemoryEvent:      0.5,
}

// memories turns the model's items into memories of batch, dropping the
// unusable ones: an unknown type, an empty or overlong text, a turn number
// outside the batch (or missing, unless the batch has one turn).
// Importance is clamped to 0..1, a relation with an empty part is dropped,
// and its predicate made snake_case.
func memories(items []gjson.Result, batch []*engram.Turn) []engram.Memory {
	out := make([]engram.Memory, 0, len(items))
	seen := make(map[string]bool)
	for _, it := range items {
		m, ok := memory(it, batch)
		if !ok || seen[m.ID] {
			continue
		}
		seen[m.ID] = true
		out = append(out, m)
	}
	return out
}

func memory(it gjson.Result, batch []*engram.Turn) (engram.Memory, bool) {
	typ := strings.ToLower(strings.TrimSpace(it.Get("type").String()))
	if typ == "todo" {
		typ = engram.MemoryPlan
	}
	base, known := typeImportance[typ]
	text := clean(it.Get("text"), maxTextRunes)
	if !known || text == "" {
		return engram.Memory{}, false
	}
	n := 1
	if tr := it.Get("turn"); tr.Exists() || len(batch) != 1 {
		var ok bool
		if n, ok = turnNumber(tr); !ok || n < 1 || n > len(batch) {
			return engram.Memory{}, false
		}
	}
	t := batch[n-1]
	ns := t.Namespace
	if ns == "" {
		ns = engram.DefaultNamespace
	}
	subject := clean(it.Get("subject"), maxNameRunes)
	if subject == "" {
		subject = cleanString(t.Speaker, maxNameRunes)
	}
	if subject == "" {
		subject = string(t.Role)
	}
	return engram.Memory{
		ID:         engram.MemoryID(ns, typ, text, t.ID),
		Namespace:  ns,
		Type:       typ,
		Text:       text,
		Rationale:  clean(it.Get("rationale"), maxTextRunes),
		Subject:    subject,
		Entities:   entities(it.Get("entities")),
		Importance: importance(it.Get("importance"), base),
		TS:         t.TS,
		ValidFrom:  t.TS,
		Sources:    []string{t.ID},
		Relation:   relation(it.Get("relation")),
	}, true
}

// clean returns a string value with its white space collapsed, "" for
// anything else or for a value longer than max runes.
func clean(v gjson.Result, max int) string {
	if v.Type != gjson.String {
		return ""
	}
	return cleanString(v.Str, max)
}

func cleanString(s string, max int) string {
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "\uFFFD")), " ")
	if utf8.RuneCountInString(s) > max {
		return ""
	}
	return s
}

// turnNumber reads a turn number given as 3, 3.0, "3" or "[3]".
func turnNumber(v gjson.Result) (int, bool) {
	switch v.Type {
	case gjson.Number:
		if v.Num != math.Trunc(v.Num) || math.Abs(v.Num) > 1e6 {
			return 0, false
		}
		return int(v.Num), true
	case gjson.String:
		n, err := strconv.Atoi(strings.Trim(v.Str, " []#"))
		return n, err == nil
	}
	return 0, false
}

// importance reads a number (or a numeric string) clamped to 0..1, and
// returns def when there is none.
func importance(v gjson.Result, def float64) float64 {
	f := def
	switch v.Type {
	case gjson.Number:
		f = v.Num
	case gjson.String:
		if p, err := strconv.ParseFloat(strings.TrimSpace(v.Str), 64); err == nil {
			f = p
		}
	}
	if math.IsNaN(f) {
		f = def
	}
	return math.Round(min(1, max(0, f))*100) / 100
}

// entities returns the distinct non-empty names of a list of strings.
func entities(v gjson.Result) []string {
	var out []string
	for _, e := range v.Array() {
		if s := clean(e, maxNameRunes); s != "" && !slices.Contains(out, s) && len(out) < maxEntities {
			out = append(out, s)
		}
	}
	return out
}

// relation returns the triple in v, nil unless all three parts are given.
func relation(v gjson.Result) *engram.Relation {
	if !v.IsObject() {
		return nil
	}
	r := &engram.Relation{
		Subject:   clean(v.Get("subject"), maxNameRunes),
		Predicate: snakeCase(clean(v.Get("predicate"), maxNameRunes)),
		Object:    clean(v.Get("object"), maxNameRunes),
	}
	if r.Subject == "" || r.Predicate == "" || r.Object == "" {
		return nil
	}
	return r
}

// snakeCase turns "Lives In", "lives-in" and "livesIn" into "lives_in".
func snakeCase(s string) string {
	var b strings.Builder
	sep, prev := false, rune(0)
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			sep = true
		} else {
			if unicode.IsUpper(r) && (unicode.IsLower(prev) || unicode.IsDigit(prev)) {
				sep = true
			}
			if sep && b.Len() > 0 {
				b.WriteByte('_')
			}
			sep = false
			b.WriteRune(unicode.ToLower(r))
		}
		prev = r
	}
	return b.String()
}

// excerpt returns the start of a reply, at most maxExcerpt bytes.
func excerpt(s string) string {
	if len(s) <= maxExcerpt {
		return s
	}
	n := maxExcerpt
	for n > maxExcerpt-utf8.UTFMax && !utf8.RuneStart(s[n]) {
		n--
	}
	return strings.ToValidUTF8(s[:n], "\uFFFD") + "…"
}
