package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engram-dev/engram"
)

// Tool names.
const (
	ToolRemember = "remember"
	ToolRecall   = "recall"
	ToolKG       = "kg"
	ToolTimeline = "timeline"
	ToolMemories = "memories"
	ToolStatus   = "status"
	ToolForget   = "forget"
	ToolCorrect  = "correct"
	ToolRedact   = "redact"
)

// DefaultSession is the session of a turn remembered without one.
const DefaultSession = "mcp"

// MaxLimit is the largest limit of kg, timeline and memories (the HTTP
// API's MaxLayerLimit).
const MaxLimit = 1000

// memoryTypes are the memory types as the schema's enum lists them.
var memoryTypes = func() []any {
	var out []any
	for _, t := range engram.MemoryTypes() {
		out = append(out, t)
	}
	return out
}()

// RememberInput is the input of the remember tool.
type RememberInput struct {
	Content   string         `json:"content" jsonschema:"what to remember, in full sentences that name who and what (a conversation turn, or a note such as 'Alice moved to Berlin in March 2025')"`
	Session   string         `json:"session,omitempty" jsonschema:"conversation the turn belongs to; turns of one session are recalled together (default \"mcp\")"`
	Speaker   string         `json:"speaker,omitempty" jsonschema:"who said it, by name (for example Alice); recall and the persona layer use it"`
	Role      string         `json:"role,omitempty" jsonschema:"who produced the turn (default user)"`
	Namespace string         `json:"namespace,omitempty" jsonschema:"memory space to store into (default \"default\")"`
	TS        string         `json:"ts,omitempty" jsonschema:"when it was said, RFC 3339 (for example 2026-05-01T14:03:00Z); default now"`
	Meta      map[string]any `json:"meta,omitempty" jsonschema:"any JSON object kept with the turn and returned unchanged with every result that cites it"`
}

// RememberOutput is what remember stored.
type RememberOutput struct {
	ID        string   `json:"id" jsonschema:"the turn's id, cited as a source by recall"`
	Seq       int64    `json:"seq" jsonschema:"the turn's position in the archive"`
	Duplicate bool     `json:"duplicate,omitempty" jsonschema:"the turn was stored before; nothing was written"`
	Namespace string   `json:"namespace"`
	Session   string   `json:"session"`
	Warnings  []string `json:"warnings,omitempty"`
}

// RecallInput is the input of the recall tool.
type RecallInput struct {
	Query        string   `json:"query" jsonschema:"what to look for, as a question or keywords (for example 'where does Alice live')"`
	Mode         string   `json:"mode,omitempty" jsonschema:"auto (default: deep when the query says 'do you remember', else hybrid), hybrid (keyword and vector search of single turns with their sessions, fast), shallow (vector search only), deep (vector, keyword, session, scene, neighbour, layer and time signals fused), keyword (BM25 only)"`
	K            int      `json:"k,omitempty" jsonschema:"number of results, 1 to 200 (default 10)"`
	BudgetTokens int      `json:"budget_tokens,omitempty" jsonschema:"when set, also return 'context': the results packed into one block of at most this many tokens, ready to quote"`
	Kinds        []string `json:"kinds,omitempty" jsonschema:"kinds of results: turn and doc (the default), memory, scene, fact, persona"`
	AsOf         string   `json:"as_of,omitempty" jsonschema:"answer as of this moment: RFC 3339, or a date (2025-03-11, meaning the end of that day, UTC); relative times in the query resolve against it"`
	Namespace    string   `json:"namespace,omitempty" jsonschema:"memory space to search, \"*\" for all (default \"default\")"`
}

// KGInput is the input of the kg tool.
type KGInput struct {
	Entity    string `json:"entity" jsonschema:"the person, place or thing, by name (for example Alice)"`
	AsOf      string `json:"as_of,omitempty" jsonschema:"the facts valid at this moment: RFC 3339, or a date (the end of that day, UTC); default now"`
	Timeline  bool   `json:"timeline,omitempty" jsonschema:"every fact, those no longer valid included, in time order (excludes as_of)"`
	Namespace string `json:"namespace,omitempty" jsonschema:"memory space (default \"default\")"`
	Limit     int    `json:"limit,omitempty" jsonschema:"most facts, 1 to 1000 (default 100)"`
}

// TimelineInput is the input of the timeline tool.
type TimelineInput struct {
	Entity    string `json:"entity" jsonschema:"the person, place or thing, by name (for example Alice)"`
	Namespace string `json:"namespace,omitempty" jsonschema:"memory space (default \"default\")"`
	Limit     int    `json:"limit,omitempty" jsonschema:"most facts, 1 to 1000 (default 100)"`
}

// KGOutput is an entity's knowledge-graph facts.
type KGOutput struct {
	Entity engram.Entity `json:"entity"`
	// Facts are the triples read as sentences, with their validity.
	Facts   []string        `json:"facts" jsonschema:"the triples as sentences with the period they hold, for example 'Alice lives in Berlin (2025-03-11 ..)'"`
	Triples []engram.Triple `json:"triples" jsonschema:"the triples, with the turns they stem from as sources"`
}

// MemoriesInput is the input of the memories tool.
type MemoriesInput struct {
	Query      string `json:"query,omitempty" jsonschema:"keywords to rank by (BM25); default: newest first"`
	Type       string `json:"type,omitempty" jsonschema:"only memories of this type"`
	Subject    string `json:"subject,omitempty" jsonschema:"only memories about this person or thing"`
	Superseded bool   `json:"superseded,omitempty" jsonschema:"include memories a newer one replaced"`
	From       string `json:"from,omitempty" jsonschema:"only memories said at or after this moment (RFC 3339 or a date)"`
	To         string `json:"to,omitempty" jsonschema:"only memories said before this moment (RFC 3339 or a date, meaning its start)"`
	Namespace  string `json:"namespace,omitempty" jsonschema:"memory space, \"*\" for all (default \"default\")"`
	Limit      int    `json:"limit,omitempty" jsonschema:"most memories, 1 to 1000 (default 10)"`
}

// MemoriesOutput is a list of L1 memories.
type MemoriesOutput struct {
	Memories []engram.Memory `json:"memories" jsonschema:"facts, decisions, preferences, plans and events extracted from conversations, with their source turns"`
}

// StatusInput is the (empty) input of the status tool.
type StatusInput struct{}

// StatusOutput is engram's health and counts.
type StatusOutput struct {
	Health engram.Health `json:"health"`
	Stats  *engram.Stats `json:"stats,omitempty" jsonschema:"counts per namespace and layer, and of the archive"`
	// StatsError says why the counts are missing.
	StatsError string `json:"stats_error,omitempty"`
}

// tool declares one tool: what clients see of it, what its input schema
// says beyond the Go type (refine), and its handler.
type tool struct {
	name, title, description string
	// annotations are the tool's hints; nil: read-only and idempotent.
	annotations *sdk.ToolAnnotations
	refine      func(*schema)
	register    func(s *Server, srv *sdk.Server, t *sdk.Tool, refine func(*schema)) error
}

// handler makes a tool's register from its typed handler, a method of
// Server: its schemas come from In and Out, its errors and panics become
// tool errors (guard).
func handler[In, Out any](h func(*Server, context.Context, In) (Out, error)) func(*Server, *sdk.Server, *sdk.Tool, func(*schema)) error {
	return func(s *Server, srv *sdk.Server, t *sdk.Tool, refine func(*schema)) error {
		return add(srv, t, refine, guard(s, t.Name, func(ctx context.Context, in In) (Out, error) { return h(s, ctx, in) }))
	}
}

// tools are engram's tools but the browsing ones (browseTools).
var tools = []tool{{
	name: ToolRemember, title: "Remember",
	description: "Store a conversation turn or a note in long-term memory, durably. Use it for anything worth " +
		"recalling in a later conversation: facts about people, decisions and their reasons, preferences, plans. " +
		"Write self-contained text that names who and what. Returns the turn's id, which recall cites as a source.",
	annotations: &sdk.ToolAnnotations{Title: "Remember", DestructiveHint: new(false), IdempotentHint: false, OpenWorldHint: new(false)},
	refine: func(sc *schema) {
		sc.enum("role", string(engram.RoleUser), string(engram.RoleAssistant), string(engram.RoleSystem), string(engram.RoleTool))
		sc.minLength("content", 1)
	},
	register: handler((*Server).remember),
}, {
	name: ToolRecall, title: "Recall",
	description: "Search long-term memory before answering a question that may depend on earlier conversations. " +
		"Returns the best matching results, each with its sources (the archived turns it stems from, with their " +
		"ids and timestamps); with budget_tokens, also a packed context block to quote. Ask kinds=[\"memory\",\"fact\"] " +
		"for extracted facts and decisions, as_of for what was true at a past moment.",
	annotations: &sdk.ToolAnnotations{Title: "Recall", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)},
	refine: func(sc *schema) {
		sc.enum("mode", engram.ModeAuto, engram.ModeHybrid, engram.ModeShallow, engram.ModeDeep, engram.ModeKeyword)
		sc.itemsEnum("kinds", engram.KindTurn, engram.KindDoc, engram.KindMemory, engram.KindScene, engram.KindFact, engram.KindPersona)
		sc.minLength("query", 1)
		sc.between("k", 1, engram.MaxK)
		sc.between("budget_tokens", 0, 1<<20)
	},
	register: handler((*Server).recall),
}, {
	name: ToolKG, title: "Knowledge graph",
	description: "What is known about one person, place or thing: its knowledge-graph facts (subject, predicate, " +
		"object) valid now, or as of a past date with as_of, or its whole history with timeline=true. Each fact " +
		"names the turns it stems from. Fails with not_found when the entity is unknown; try recall then.",
	refine:   entityLimit,
	register: handler((*Server).kg),
}, {
	name: ToolTimeline, title: "Timeline",
	description: "How what is known about one person, place or thing changed over time: every knowledge-graph fact " +
		"about it, those no longer valid included, in time order with the period each held (for example where " +
		"someone lived before and after a move).",
	refine:   entityLimit,
	register: handler((*Server).timeline),
}, {
	name: ToolMemories, title: "Memories",
	description: "List the memories extracted from conversations (facts, decisions with their rationale, " +
		"preferences, plans, events), newest first or ranked by query keywords, filtered by type, subject and " +
		"period. Each memory names the turns it stems from.",
	refine: func(sc *schema) {
		sc.enum("type", memoryTypes...)
		sc.between("limit", 1, MaxLimit)
	},
	register: handler((*Server).memories),
}, {
	name: ToolStatus, title: "Status",
	description: "engram's health (ok or degraded, with the problems) and counts: turns archived, how far indexing " +
		"lags, memories, scenes and facts per namespace. Use it when recall seems to miss something recent.",
	register: handler((*Server).status),
}, {
	name: ToolForget, title: "Forget",
	description: "Forget conversation turns for good, when the user asks to forget something or pasted a secret: " +
		"the turns named by ids (the sources recall cites), or every turn of a session, or of a namespace. " +
		"They leave the archive (a tombstone keeps only the id, the time and the reason), the search indexes, " +
		"the vectors, and every memory, scene, persona facet and fact that stood only on them. It cannot be undone: " +
		"call it with dry_run=true first to see what would go. Fails with not_found when nothing matches.",
	annotations: &sdk.ToolAnnotations{Title: "Forget", DestructiveHint: new(true), IdempotentHint: true, OpenWorldHint: new(false)},
	refine:      func(sc *schema) { sc.maxLength("reason", engram.MaxReasonBytes) },
	register:    handler((*Server).forget),
}, {
	name: ToolCorrect, title: "Correct",
	description: "Correct what engram extracted, when the user says a memory or a fact is wrong: target memory " +
		"(an id from memories or recall) with wrong=true or a new text, or target fact (a triple id from kg) with " +
		"wrong=true or a new object; restore=true takes the corrections of the item back. A correction is kept " +
		"apart from extraction and wins over it, also after a rebuild. Fails with not_found for an unknown id.",
	annotations: &sdk.ToolAnnotations{Title: "Correct", DestructiveHint: new(false), IdempotentHint: true, OpenWorldHint: new(false)},
	refine: func(sc *schema) {
		sc.enum("target", engram.CorrectMemory, engram.CorrectFact)
		sc.minLength("id", 1)
		sc.maxLength("text", 4000)
		sc.maxLength("reason", engram.MaxReasonBytes)
	},
	register: handler((*Server).correct),
}, {
	name: ToolRedact, title: "Redact",
	description: "Replace a span (a secret, a name) by a marker wherever engram keeps the text, when the user pasted " +
		"something that must go but the rest of the conversation should stay: texts are the spans (3 bytes or more), " +
		"in the turns named by ids, or of a session or a namespace, or in every turn that holds them. The archive line " +
		"is rewritten (content, speaker and meta), the indexes, memories, scenes, persona, graph entities and " +
		"corrections lose the span, every model's vectors of the turns are made again (warnings name a model that " +
		"could not). It cannot be undone: call it with dry_run=true first to see what would change.",
	annotations: &sdk.ToolAnnotations{Title: "Redact", DestructiveHint: new(true), IdempotentHint: true, OpenWorldHint: new(false)},
	refine:      func(sc *schema) { sc.maxLength("reason", engram.MaxReasonBytes) },
	register:    handler((*Server).redact),
}}

// entityLimit refines the schema of kg and timeline.
func entityLimit(sc *schema) {
	sc.minLength("entity", 1)
	sc.between("limit", 1, MaxLimit)
}

func (s *Server) addTools(srv *sdk.Server) error {
	for _, t := range slices.Concat(tools, browseTools) {
		ann := &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)}
		if t.annotations != nil {
			a := *t.annotations // each server its own copy
			ann = &a
		}
		st := &sdk.Tool{Name: t.name, Title: t.title, Description: t.description, Annotations: ann}
		if err := t.register(s, srv, st, t.refine); err != nil {
			return err
		}
	}
	return nil
}

func (s *Server) remember(ctx context.Context, in RememberInput) (RememberOutput, error) {
	ti := engram.TurnInput{Namespace: in.Namespace, Session: in.Session, Role: in.Role, Speaker: in.Speaker,
		Content: in.Content, TS: in.TS}
	if ti.Session == "" {
		ti.Session = DefaultSession
	}
	if in.Meta != nil {
		b, err := json.Marshal(in.Meta)
		if err != nil {
			return RememberOutput{}, engram.FieldError("meta", "meta is not a JSON object: %v", err)
		}
		ti.Meta = b
	}
	turn, err := ti.Turn("", s.Now(), s.Limits)
	if err != nil {
		return RememberOutput{}, err
	}
	res, err := s.Ingest.Ingest(ctx, []engram.Turn{turn})
	if err != nil {
		return RememberOutput{}, err
	}
	if len(res.Turns) != 1 {
		return RememberOutput{}, fmt.Errorf("ingest acknowledged %d turns for 1", len(res.Turns))
	}
	a := res.Turns[0]
	return RememberOutput{ID: a.ID, Seq: a.Seq, Duplicate: a.Duplicate, Namespace: turn.Namespace, Session: turn.Session,
		Warnings: res.Warnings}, nil
}

func (s *Server) recall(ctx context.Context, in RecallInput) (engram.RecallResponse, error) {
	req := engram.RecallRequest{Namespace: in.Namespace, Query: in.Query, K: in.K, Mode: in.Mode,
		BudgetTokens: in.BudgetTokens, Kinds: in.Kinds}
	if req.Namespace == "" {
		req.Namespace = engram.DefaultNamespace
	}
	var err error
	if req.AsOf, err = parseTime("as_of", in.AsOf, true); err != nil {
		return engram.RecallResponse{}, err
	}
	resp, err := s.Recall.Recall(ctx, req)
	resp.Results = nonNil(resp.Results)
	return resp, err
}

func (s *Server) kg(ctx context.Context, in KGInput) (KGOutput, error) {
	q := engram.GraphQuery{Namespace: in.Namespace, Entity: in.Entity, Timeline: in.Timeline, Limit: in.Limit}
	var err error
	if q.AsOf, err = parseTime("as_of", in.AsOf, true); err != nil {
		return KGOutput{}, err
	}
	if q.Timeline && !q.AsOf.IsZero() {
		return KGOutput{}, engram.FieldError("as_of", "as_of and timeline do not go together: a timeline holds every fact")
	}
	return s.graph(ctx, q)
}

func (s *Server) timeline(ctx context.Context, in TimelineInput) (KGOutput, error) {
	return s.graph(ctx, engram.GraphQuery{Namespace: in.Namespace, Entity: in.Entity, Timeline: true, Limit: in.Limit})
}

func (s *Server) graph(ctx context.Context, q engram.GraphQuery) (KGOutput, error) {
	if s.Layers == nil {
		return KGOutput{}, errNoLayers
	}
	if strings.TrimSpace(q.Entity) == "" {
		return KGOutput{}, engram.FieldError("entity", "entity is required (a name, for example Alice)")
	}
	if q.Namespace == "" {
		q.Namespace = engram.DefaultNamespace
	}
	if q.Namespace == engram.AllNamespaces {
		return KGOutput{}, engram.FieldError("namespace", engram.AllNamespacesRefused)
	}
	if err := checkLimit(q.Limit); err != nil {
		return KGOutput{}, err
	}
	res, err := s.Layers.Graph(ctx, q)
	if err != nil {
		return KGOutput{}, err
	}
	out := KGOutput{Entity: res.Entity, Triples: nonNil(res.Triples), Facts: make([]string, len(res.Triples))}
	for i, t := range res.Triples {
		to := ""
		if !t.ValidTo.IsZero() {
			to = " " + day(t.ValidTo)
		}
		out.Facts[i] = fmt.Sprintf("%s (%s ..%s)", t.Sentence(), day(t.ValidFrom), to)
	}
	return out, nil
}

func (s *Server) memories(ctx context.Context, in MemoriesInput) (MemoriesOutput, error) {
	if s.Layers == nil {
		return MemoriesOutput{}, errNoLayers
	}
	q := engram.MemoryQuery{Namespace: namespaceOrDefault(in.Namespace), Type: in.Type, Subject: in.Subject, Text: in.Query,
		Superseded: in.Superseded, Limit: in.Limit}
	if err := checkLimit(q.Limit); err != nil {
		return MemoriesOutput{}, err
	}
	var err error
	if q.From, q.To, err = period(in.From, in.To); err != nil {
		return MemoriesOutput{}, err
	}
	mems, err := s.Layers.Memories(ctx, q)
	return MemoriesOutput{Memories: nonNil(mems)}, err
}

func (s *Server) status(ctx context.Context, _ StatusInput) (StatusOutput, error) {
	out := StatusOutput{Health: s.Status.Health(ctx)}
	st, err := s.Status.Stats(ctx)
	if err != nil {
		out.StatsError = s.toolError(ToolStatus, err).Error()
	} else {
		if st.Layers == nil { // null would not match the output schema
			st.Layers = map[string]map[string]int64{}
		}
		out.Stats = &st
	}
	return out, nil
}

var errNoLayers = engram.Errorf(engram.EUNSUPPORTED, "the derived layers (memories, knowledge graph) are not available on this server")

// parseTime reads an RFC 3339 time or a date: the end of that day (UTC)
// when endOfDay, its start otherwise. "" is the zero time.
func parseTime(field, s string, endOfDay bool) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, ok := engram.ParseTimeOrDate(s, time.UTC, endOfDay)
	if !ok {
		return time.Time{}, engram.FieldError(field, "%q is neither a date (2025-03-11) nor RFC 3339 (2025-03-11T14:03:00Z)", s)
	}
	if !engram.InTimeRange(t) {
		return time.Time{}, engram.OutOfRange(field, strconv.Quote(s))
	}
	return t.UTC(), nil
}

// period reads from and to (RFC 3339 or dates, meaning their start); to
// must be after from when both are given.
func period(from, to string) (f, t time.Time, err error) {
	if f, err = parseTime("from", from, false); err != nil {
		return f, t, err
	}
	if t, err = parseTime("to", to, false); err != nil {
		return f, t, err
	}
	if !f.IsZero() && !t.IsZero() && !t.After(f) {
		return f, t, engram.FieldError("to", "to (%s) must be after from (%s)", to, from)
	}
	return f, t, nil
}

// nonNil makes a nil slice empty: null would not match the output schema.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func checkLimit(n int) error {
	if n < 0 || n > MaxLimit {
		return engram.FieldError("limit", "limit must be from 1 to %d, got %d", MaxLimit, n)
	}
	return nil
}

func day(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Format(time.DateOnly)
}

// ForgetInput is the input of the forget tool.
type ForgetInput struct {
	IDs       []string `json:"ids,omitempty" jsonschema:"ids of the turns to forget (the source ids recall returns)"`
	Session   string   `json:"session,omitempty" jsonschema:"forget every turn of this session (of namespace, default \"default\")"`
	Namespace string   `json:"namespace,omitempty" jsonschema:"forget every turn of this namespace (with session: the session's namespace)"`
	Reason    string   `json:"reason,omitempty" jsonschema:"why, kept in the tombstone (at most 1024 bytes)"`
	DryRun    bool     `json:"dry_run,omitempty" jsonschema:"true: report what would be forgotten and change nothing"`
}

func (s *Server) forget(ctx context.Context, in ForgetInput) (engram.ForgetReport, error) {
	if s.Forget == nil {
		return engram.ForgetReport{}, engram.Errorf(engram.EUNSUPPORTED, "forgetting is not available on this server")
	}
	req := engram.ForgetRequest{IDs: in.IDs, Session: in.Session, Namespace: in.Namespace, Reason: in.Reason, DryRun: in.DryRun}
	if err := req.Validate(); err != nil {
		return engram.ForgetReport{}, err
	}
	return s.Forget.Forget(ctx, req)
}

// RedactInput is the input of the redact tool.
type RedactInput struct {
	Texts     []string `json:"texts" jsonschema:"the spans to replace, each at least 3 bytes (an API key, a name)"`
	IDs       []string `json:"ids,omitempty" jsonschema:"only in these turns (the source ids recall returns)"`
	Session   string   `json:"session,omitempty" jsonschema:"only in this session (of namespace, default \"default\")"`
	Namespace string   `json:"namespace,omitempty" jsonschema:"only in this namespace; with neither ids nor session, every turn holding a span"`
	Marker    string   `json:"marker,omitempty" jsonschema:"what replaces each span (default [redacted])"`
	Reason    string   `json:"reason,omitempty" jsonschema:"why, kept with the turn (at most 1024 bytes)"`
	DryRun    bool     `json:"dry_run,omitempty" jsonschema:"true: report what would change and change nothing"`
}

func (s *Server) redact(ctx context.Context, in RedactInput) (engram.RedactReport, error) {
	if s.Redact == nil {
		return engram.RedactReport{}, engram.Errorf(engram.EUNSUPPORTED, "redacting is not available on this server")
	}
	req := engram.RedactRequest{Texts: in.Texts, IDs: in.IDs, Session: in.Session, Namespace: in.Namespace,
		Marker: in.Marker, Reason: in.Reason, DryRun: in.DryRun}
	if err := req.Validate(); err != nil {
		return engram.RedactReport{}, err
	}
	return s.Redact.Redact(ctx, req)
}

// CorrectInput is the input of the correct tool.
type CorrectInput struct {
	Target  string `json:"target" jsonschema:"memory (an L1 memory) or fact (a knowledge-graph triple)"`
	ID      string `json:"id" jsonschema:"the memory's or the triple's id"`
	Wrong   bool   `json:"wrong,omitempty" jsonschema:"true: it is wrong; recall, the listings, the persona and the graph leave it out"`
	Text    string `json:"text,omitempty" jsonschema:"a memory's correct text"`
	Object  string `json:"object,omitempty" jsonschema:"a fact's correct object (for example Porto in 'Ana lives in Porto')"`
	Restore bool   `json:"restore,omitempty" jsonschema:"true: take the corrections back; what extraction produced stands again"`
	Reason  string `json:"reason,omitempty" jsonschema:"why, kept with the correction (at most 1024 bytes)"`
}

func (s *Server) correct(ctx context.Context, in CorrectInput) (engram.Correction, error) {
	if s.Correct == nil {
		return engram.Correction{}, engram.Errorf(engram.EUNSUPPORTED, "correcting is not available on this server")
	}
	req := engram.CorrectionRequest{Target: in.Target, ID: in.ID, Wrong: in.Wrong, Text: in.Text, Object: in.Object,
		Restore: in.Restore, Reason: in.Reason}
	if err := req.Validate(); err != nil {
		return engram.Correction{}, err
	}
	return s.Correct.Correct(ctx, req)
}
