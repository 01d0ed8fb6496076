package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/pipeline"
)

// The LoCoMo benchmark ("Evaluating Very Long-Term Conversational Memory of
// LLM Agents", ACL 2024) measures retrieval: every turn of every conversation
// goes in through POST /v1/turns, every question of categories 1-4 goes to
// POST /v1/recall, and a result is a hit when one of its sources is an
// evidence turn of the question. The bench only maps the data set onto turns
// and questions; nothing in engram knows about it.
//
// Mapping (see runBenchLocomo's usage for the user-facing summary):
//   - one namespace per file, "locomo-<file name without .json>";
//   - session "session_<N>", speaker and role user for every turn (both
//     sides of a LoCoMo conversation are people);
//   - content: the turn's text; a shared photo's blip_caption is appended as
//     " [shares a photo: CAPTION]" (--captions=false leaves it out), since a
//     client that receives a photo would store what it shows;
//   - ts: the session's date_time (no zone given, read as UTC), plus 30 s per
//     turn before it in the session, so turns keep their order in time;
//   - id "<namespace>-<dia_id>", so a re-run on a kept home is a no-op;
//   - meta {"conversation": "<file name without .json>", "dia_id": "D1:3"}.

// LocomoDataRel is where the LoCoMo development set lives under an ancestor
// of the working directory: the project keeps it beside the repository and
// never inside it.
const LocomoDataRel = "shared/bench/locomo-dev"

// locomoTurnStep separates the timestamps of consecutive turns of a session.
const locomoTurnStep = 30 * time.Second

// locomoAdversarial is the category of questions with no answer in the
// conversation; they are not scored.
const locomoAdversarial = 5

// locomoCategories names the question categories by their numbers in the
// released data. The paper lists the types in another order (single-hop
// first); the numbers follow the data, where category 2 holds the "When
// did..." questions, 1 the questions with several evidence turns and 3 the
// "Would X likely..." inferences.
var locomoCategories = map[int]string{
	1: "multi-hop",
	2: "temporal",
	3: "open-domain",
	4: "single-hop",
	5: "adversarial",
}

// The layouts of a session's date_time, "1:56 pm on 8 May, 2023".
var locomoTimeLayouts = []string{"3:04 pm on 2 January, 2006", "3:04 PM on 2 January, 2006"}

var (
	locomoSessionKey = regexp.MustCompile(`^session_([0-9]+)$`)
	locomoDiaID      = regexp.MustCompile(`^D([0-9]+):([0-9]+)$`)
)

// LocomoOptions are the settings of a LoCoMo run: `engram bench locomo`'s
// flags.
type LocomoOptions struct {
	Data     string   // the folder of conversation files; "": LocomoDataRel in the working directory or above
	Modes    []string // the recall modes to measure; none: every mode the server accepts
	Kinds    []string // the result kinds asked for; none: the server's default
	K        int      // results asked per question, the largest rank scored
	Keep     string   // the folder of the private engram, kept afterwards; "": a temporary one
	Captions bool     // append a shared photo's caption to the turn
	Speakers bool     // send the turns' speakers (false: an ablation)
	// PerQuestion adds each question's ranks to the report (Questions of
	// each mode), for reading what a change moved.
	PerQuestion bool
	// SessionK, when above 0, adds the session-level figure MemPalace
	// publishes: the share of a question's evidence sessions among the
	// first SessionK distinct sessions of its results, over every
	// question (category 5 too; no evidence counts 1).
	SessionK int
}

// LocomoReport is the result of a LoCoMo run, as `engram bench locomo
// --json` prints it; the other types are its parts.
type (
	LocomoReport = locomoReport
	LocomoMode   = locomoMode
	LocomoScores = locomoScores
	LocomoAtK    = locomoAtK
)

// RunLocomo reads the conversations, ingests them into a private engram
// through its HTTP API, asks every scored question in each mode, and
// scores the answers. Progress goes to env.Stderr. A k below 1, or a mode
// or k the server refuses, is a *UsageError.
func RunLocomo(ctx context.Context, o LocomoOptions, env Env) (*LocomoReport, error) {
	env = env.locked()
	if o.K < 1 {
		return nil, &UsageError{Msg: fmt.Sprintf("--k must be at least 1, got %d", o.K)}
	}
	dir, convs, err := openLocomo(o.Data, o.Captions)
	if err != nil {
		return nil, err
	}
	if !o.Speakers {
		for _, c := range convs {
			for i := range c.sessions {
				for j := range c.sessions[i].turns {
					c.sessions[i].turns[j].Speaker = ""
				}
			}
		}
		fmt.Fprintln(env.Stderr, "engram bench locomo: speakers left out (--speakers=false)")
	}

	var rep *locomoReport
	err = onEngram(ctx, "locomo", o.Keep, env, func(b *benchEngram) (err error) {
		rep, err = runLocomo(ctx, env, b, convs, o)
		return err
	})
	if err != nil {
		return nil, err
	}
	rep.Data, rep.Captions = absPath(dir), o.Captions
	return rep, nil
}

// openLocomo reads the conversations of dir, or of FindLocomoData's folder
// when dir is "", and returns the folder with them.
func openLocomo(dir string, captions bool) (string, []*locomoConv, error) {
	if dir == "" {
		var err error
		if dir, err = FindLocomoData(); err != nil {
			return "", nil, err
		}
	}
	convs, err := loadLocomo(dir, captions)
	return dir, convs, err
}

// absPath returns dir made absolute, or as it is where that fails.
func absPath(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}

// FindLocomoData looks for LocomoDataRel under the working directory and each
// folder above it.
func FindLocomoData() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; {
		p := filepath.Join(dir, filepath.FromSlash(LocomoDataRel))
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no LoCoMo data: %s is in neither %s nor a folder above it; pass --data DIR", LocomoDataRel, wd)
		}
		dir = parent
	}
}

// diaID names a turn of a LoCoMo conversation: "D<session>:<turn>".
type diaID struct{ session, turn int }

func (d diaID) String() string { return fmt.Sprintf("D%d:%d", d.session, d.turn) }

// parseDiaID parses "D<session>:<turn>". Numbers are read as numbers, so
// "D3:07" and "D3:7" are the same turn.
func parseDiaID(s string) (diaID, error) {
	sub := locomoDiaID.FindStringSubmatch(s)
	if sub == nil {
		return diaID{}, fmt.Errorf("%q is not a dialogue id like D1:3", s)
	}
	sess, err1 := strconv.Atoi(sub[1])
	turn, err2 := strconv.Atoi(sub[2])
	if err := errors.Join(err1, err2); err != nil {
		return diaID{}, fmt.Errorf("%q is not a dialogue id like D1:3: %w", s, err)
	}
	return diaID{sess, turn}, nil
}

// parseLocomoTime parses a session's date_time, "1:56 pm on 8 May, 2023", as
// UTC: the data gives no zone.
func parseLocomoTime(s string) (time.Time, error) {
	for _, layout := range locomoTimeLayouts {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a time like \"1:56 pm on 8 May, 2023\"", s)
}

// locomoConv is one conversation file, checked and mapped onto turns.
type locomoConv struct {
	file      string // base name, for messages
	name      string // file name without .json
	namespace string
	sessions  []locomoSession
	turns     map[diaID]bool
	questions []locomoQuestion
	// unscored are the questions of category 5 and those without usable
	// evidence: asked only for the session-level figure.
	unscored []locomoQuestion
	stats    locomoCounts
	// speakers are the conversation's speakers (speaker_a, speaker_b, or
	// those of the turns), and events the dataset authors' summaries of
	// what happened to each of them per session (events_session_N), which
	// the layers bench scores memories against.
	speakers []string
	events   []locomoEvent
}

// locomoEvent is one entry of events_session_N: something that happened to
// speaker in session N, as the dataset's authors wrote it.
type locomoEvent struct {
	session int
	speaker string
	text    string
}

// locomoMeta is the meta of an ingested turn: which turn of which
// conversation it is. Scoring reads it back from the results' sources.
type locomoMeta struct {
	Conversation string `json:"conversation"`
	DiaID        string `json:"dia_id"`
}

type locomoSession struct {
	name  string // "session_<N>"
	turns []engram.Turn
}

// locomoQuestion is a question of categories 1-4 with usable evidence.
type locomoQuestion struct {
	index    int // in the file's qa list
	category int
	text     string
	evidence []diaID // distinct, each a turn of the conversation
}

// locomoCounts counts what the data held and what the bench skipped.
type locomoCounts struct {
	Questions   int `json:"questions"`   // in the files, every category
	Scored      int `json:"scored"`      // categories 1-4 with usable evidence
	Adversarial int `json:"adversarial"` // category 5: unanswerable, not scored
	NoEvidence  int `json:"no_evidence"` // categories 1-4 without one usable evidence id

	EvidenceTurns int      `json:"evidence_turns"` // distinct evidence turns of scored questions
	Split         int      `json:"split"`          // entries holding several ids separated by ';'
	Malformed     int      `json:"malformed"`      // ids not of the form D<session>:<turn>, skipped
	Unknown       int      `json:"unknown"`        // well-formed ids naming no turn of the conversation, skipped
	Skipped       []string `json:"skipped,omitempty"`
}

func (c *locomoCounts) add(o locomoCounts) {
	c.Questions += o.Questions
	c.Scored += o.Scored
	c.Adversarial += o.Adversarial
	c.NoEvidence += o.NoEvidence
	c.EvidenceTurns += o.EvidenceTurns
	c.Split += o.Split
	c.Malformed += o.Malformed
	c.Unknown += o.Unknown
	c.Skipped = append(c.Skipped, o.Skipped...)
}

// loadLocomo reads and checks every *.json file of dir, in name order.
func loadLocomo(dir string, captions bool) ([]*locomoConv, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		if _, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("--data: %w", err)
		}
		return nil, fmt.Errorf("--data: no LoCoMo conversation files (*.json) in %s", dir)
	}
	sort.Strings(files)
	var convs []*locomoConv
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		c, err := parseLocomo(filepath.Base(f), b, captions)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		convs = append(convs, c)
	}
	return convs, nil
}

// jsonObject is a JSON object with its values still raw, so that each field
// can be checked and named in errors.
type jsonObject map[string]json.RawMessage

func decodeObject(raw json.RawMessage) (jsonObject, error) {
	var obj jsonObject
	err := json.Unmarshal(raw, &obj)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return nil, fmt.Errorf("not valid JSON at byte %d: %v", se.Offset, se)
	}
	if err != nil || obj == nil {
		return nil, fmt.Errorf("want a JSON object, got %s", jsonKind(raw))
	}
	return obj, nil
}

// str returns the string field key. A field that is missing (or null) is an
// error only when required.
func (o jsonObject) str(key string, required bool) (string, error) {
	raw, ok := o[key]
	if !ok || string(raw) == "null" {
		if required {
			return "", fmt.Errorf("%s: missing", key)
		}
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%s: want a string, got %s", key, jsonKind(raw))
	}
	return s, nil
}

// jsonKind describes a raw JSON value for an error message.
func jsonKind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "a list"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	if len(raw) > 20 {
		raw = raw[:20]
	}
	return string(raw)
}

// parseLocomo checks one conversation file and maps it onto turns and
// questions. The file is LoCoMo's per-conversation object: speaker_a,
// speaker_b, session_<N> (a list of turns {speaker, dia_id, text, optional
// blip_caption}), session_<N>_date_time and qa; the upstream shape that nests
// the sessions in a "conversation" object is read too. Errors name the file's
// field at fault.
func parseLocomo(file string, data []byte, captions bool) (*locomoConv, error) {
	name := strings.TrimSuffix(file, filepath.Ext(file))
	c := &locomoConv{file: file, name: name, namespace: "locomo-" + name, turns: make(map[diaID]bool)}
	top, err := decodeObject(data)
	if err != nil {
		return nil, err
	}
	conv := top
	if raw, ok := top["conversation"]; ok {
		if conv, err = decodeObject(raw); err != nil {
			return nil, fmt.Errorf("conversation: %w", err)
		}
	}

	// Sessions in number order; a date without turns is no session.
	var nums []int
	for key := range conv {
		if sub := locomoSessionKey.FindStringSubmatch(key); sub != nil {
			n, err := strconv.Atoi(sub[1])
			if err != nil {
				return nil, fmt.Errorf("%s: bad session number: %w", key, err)
			}
			nums = append(nums, n)
		}
	}
	if len(nums) == 0 {
		return nil, errors.New("no session_<N> lists of turns")
	}
	slices.Sort(nums)
	for _, n := range nums {
		key := fmt.Sprintf("session_%d", n)
		if _, ok := conv[key]; !ok {
			return nil, fmt.Errorf("session %d is named with leading zeros; want %s", n, key)
		}
		s, err := conv.str(key+"_date_time", true)
		if err != nil {
			return nil, err
		}
		start, err := parseLocomoTime(s)
		if err != nil {
			return nil, fmt.Errorf("%s_date_time: %w", key, err)
		}
		var raws []json.RawMessage
		if err := json.Unmarshal(conv[key], &raws); err != nil {
			return nil, fmt.Errorf("%s: want a list of turns, got %s", key, jsonKind(conv[key]))
		}
		sess := locomoSession{name: key}
		for i, raw := range raws {
			t, err := c.turn(raw, n, captions)
			if err != nil {
				return nil, fmt.Errorf("%s[%d].%w", key, i, err)
			}
			t.Session = key
			t.TS = start.Add(time.Duration(i) * locomoTurnStep)
			sess.turns = append(sess.turns, t)
		}
		c.sessions = append(c.sessions, sess)
	}
	if len(c.turns) == 0 {
		return nil, errors.New("no turns in any session")
	}

	var qa []json.RawMessage
	raw, ok := top["qa"]
	if !ok {
		raw, ok = conv["qa"]
	}
	if !ok {
		return nil, errors.New("qa: missing")
	}
	if err := json.Unmarshal(raw, &qa); err != nil {
		return nil, fmt.Errorf("qa: want a list of questions, got %s", jsonKind(raw))
	}
	for i, raw := range qa {
		if err := c.question(i, raw); err != nil {
			return nil, fmt.Errorf("qa[%d].%w", i, err)
		}
	}
	_, nested := top["conversation"]
	if err := c.readEvents(top, conv, nested); err != nil {
		return nil, err
	}
	return c, nil
}

// turn maps one turn of session n. Errors start with the field's name.
func (c *locomoConv) turn(raw json.RawMessage, n int, captions bool) (engram.Turn, error) {
	obj, err := decodeObject(raw)
	if err != nil {
		return engram.Turn{}, fmt.Errorf("turn: %w", err)
	}
	speaker, err := obj.str("speaker", true)
	if err != nil {
		return engram.Turn{}, err
	}
	if strings.TrimSpace(speaker) == "" {
		return engram.Turn{}, errors.New("speaker: blank")
	}
	rawID, err := obj.str("dia_id", true)
	if err != nil {
		return engram.Turn{}, err
	}
	id, err := parseDiaID(rawID)
	if err != nil {
		return engram.Turn{}, fmt.Errorf("dia_id: %w", err)
	}
	if id.session != n {
		return engram.Turn{}, fmt.Errorf("dia_id: %s is not a turn of session %d", rawID, n)
	}
	if c.turns[id] {
		return engram.Turn{}, fmt.Errorf("dia_id: %s appears twice", rawID)
	}
	c.turns[id] = true
	if !slices.Contains(c.speakers, speaker) {
		c.speakers = append(c.speakers, speaker)
	}
	text, err := obj.str("text", true)
	if err != nil {
		return engram.Turn{}, err
	}
	caption, err := obj.str("blip_caption", false)
	if err != nil {
		return engram.Turn{}, err
	}
	content := strings.TrimSpace(text)
	if caption = strings.TrimSpace(caption); captions && caption != "" {
		content = strings.TrimSpace(content + " [shares a photo: " + caption + "]")
	}
	if content == "" {
		return engram.Turn{}, errors.New("text: blank, and no photo caption")
	}
	m, err := json.Marshal(locomoMeta{Conversation: c.name, DiaID: rawID})
	if err != nil {
		return engram.Turn{}, err
	}
	return engram.Turn{
		ID:        c.namespace + "-" + rawID,
		Namespace: c.namespace,
		Role:      engram.RoleUser,
		Speaker:   speaker,
		Content:   content,
		Meta:      m,
	}, nil
}

// question checks the i-th question and keeps it when it is scored. Errors
// start with the field's name.
func (c *locomoConv) question(i int, raw json.RawMessage) error {
	obj, err := decodeObject(raw)
	if err != nil {
		return fmt.Errorf("question: %w", err)
	}
	c.stats.Questions++
	craw, ok := obj["category"]
	if !ok {
		return errors.New("category: missing")
	}
	var cat int
	if err := json.Unmarshal(craw, &cat); err != nil {
		return fmt.Errorf("category: want an integer, got %s", jsonKind(craw))
	}
	if _, ok := locomoCategories[cat]; !ok {
		return fmt.Errorf("category: %d is not a LoCoMo category (1-5)", cat)
	}
	text, err := obj.str("question", true)
	if err != nil {
		return err
	}
	if strings.TrimSpace(text) == "" {
		return errors.New("question: blank")
	}
	eraw, ok := obj["evidence"]
	if !ok {
		return errors.New("evidence: missing")
	}
	var entries []string
	if err := json.Unmarshal(eraw, &entries); err != nil {
		return fmt.Errorf("evidence: want a list of dialogue ids, got %s", jsonKind(eraw))
	}
	q := locomoQuestion{index: i, category: cat, text: text}
	if cat == locomoAdversarial {
		// Not scored at the turn level (unanswerable), but asked for the
		// session-level figure, with whatever evidence names a turn.
		c.stats.Adversarial++
		for _, entry := range entries {
			for _, p := range strings.Split(entry, ";") {
				if id, err := parseDiaID(strings.TrimSpace(p)); err == nil && c.turns[id] && !slices.Contains(q.evidence, id) {
					q.evidence = append(q.evidence, id)
				}
			}
		}
		c.unscored = append(c.unscored, q)
		return nil
	}
	for _, entry := range entries {
		parts := strings.Split(entry, ";")
		if len(parts) > 1 {
			c.stats.Split++
		}
		for _, p := range parts {
			p = strings.TrimSpace(p)
			id, err := parseDiaID(p)
			switch {
			case err != nil:
				c.stats.Malformed++
				c.stats.Skipped = append(c.stats.Skipped, fmt.Sprintf("%s qa[%d]: evidence %q: malformed id %q", c.file, i, entry, p))
			case !c.turns[id]:
				c.stats.Unknown++
				c.stats.Skipped = append(c.stats.Skipped, fmt.Sprintf("%s qa[%d]: evidence %q: no turn %s in the conversation", c.file, i, entry, p))
			case !slices.Contains(q.evidence, id):
				q.evidence = append(q.evidence, id)
			}
		}
	}
	if len(q.evidence) == 0 {
		c.stats.NoEvidence++
		c.unscored = append(c.unscored, q)
		return nil
	}
	c.stats.Scored++
	c.stats.EvidenceTurns += len(q.evidence)
	c.questions = append(c.questions, q)
	return nil
}

// locomoReport is the result of `engram bench locomo`, as --json prints it.
// Scores are fractions of questions (0 to 1); recall is the mean over
// questions of the fraction of their evidence turns found.
type locomoReport struct {
	Benchmark string       `json:"benchmark"`
	Data      string       `json:"data"`
	Files     []string     `json:"files"`
	Captions  bool         `json:"captions"`
	Kinds     []string     `json:"kinds,omitempty"`
	K         int          `json:"k"`
	Cutoffs   []int        `json:"cutoffs"`
	Ingest    locomoIngest `json:"ingest"`
	Counts    locomoCounts `json:"counts"`
	Modes     []locomoMode `json:"modes"`
}

type locomoIngest struct {
	Conversations int      `json:"conversations"`
	Sessions      int      `json:"sessions"`
	Turns         int      `json:"turns"`
	Archived      int      `json:"archived"`
	Duplicates    int      `json:"duplicates"`              // already in a kept home
	Requests      int      `json:"requests"`                // one POST /v1/turns per session
	Seconds       float64  `json:"seconds"`                 // until every turn was searchable
	LayerSeconds  float64  `json:"layer_seconds,omitempty"` // running the layer jobs after that
	Memories      int64    `json:"memories,omitempty"`      // active L1 memories built
	Scenes        int64    `json:"scenes,omitempty"`
	Facts         int64    `json:"facts,omitempty"` // L4 triples
	Warnings      []string `json:"warnings,omitempty"`
}

// locomoMode is the result of one recall mode.
type locomoMode struct {
	Mode       string         `json:"mode"` // as asked
	Ran        map[string]int `json:"ran"`  // the mode the server reports it ran, with the number of questions
	Overall    locomoScores   `json:"overall"`
	Categories []locomoScores `json:"categories"`
	// Conversations are the scores of each conversation (Name: its file),
	// for choosing constants by leaving one conversation out.
	Conversations []locomoScores `json:"conversations"`
	Latency       latencyReport  `json:"latency"`
	Warnings      []string       `json:"warnings,omitempty"` // distinct recall warnings
	// ForeignSources counts result sources that are no turn of the asked
	// conversation (no meta.dia_id, or another conversation's); never hits.
	ForeignSources int `json:"foreign_sources"`
	// TurnsPerResult is the mean number of turns a result stems from (a
	// burst of messages or a layer result holds several): what a result
	// costs to read.
	TurnsPerResult float64 `json:"turns_per_result"`
	// Sessions is the session-level figure (LocomoOptions.SessionK).
	Sessions *locomoSessions `json:"sessions,omitempty"`
	// Questions, with --per-question, says where each question's evidence
	// ranked.
	Questions []locomoQuestionRanks `json:"questions,omitempty"`
}

// locomoQuestionRanks is one question's outcome: the 0-based rank of the
// first result holding an evidence turn and of each evidence turn (-1:
// not in the results), and the turns the results stem from, in order.
type locomoQuestionRanks struct {
	File     string   `json:"file"`
	Index    int      `json:"index"`
	Category int      `json:"category"`
	Question string   `json:"question"`
	Evidence []string `json:"evidence"`
	First    int      `json:"first"`
	Ranks    []int    `json:"ranks"`
	Results  []string `json:"results"`
}

// questionRanks reports q's outcome from its ranks and results.
func (c *locomoConv) questionRanks(q locomoQuestion, r locomoRanks, results []engram.Result) locomoQuestionRanks {
	out := locomoQuestionRanks{File: c.file, Index: q.index, Category: q.category, Question: q.text, First: r.first, Ranks: r.evidence}
	for _, e := range q.evidence {
		out.Evidence = append(out.Evidence, e.String())
	}
	for _, res := range results {
		var ids []string
		for _, s := range res.Sources {
			var meta locomoMeta
			if json.Unmarshal(s.Meta, &meta) == nil && meta.Conversation == c.name {
				ids = append(ids, meta.DiaID)
			}
		}
		out.Results = append(out.Results, strings.Join(ids, "+"))
	}
	return out
}

// locomoScores are the scores of a group of questions.
type locomoScores struct {
	Category  int         `json:"category,omitempty"` // absent for the overall scores
	Name      string      `json:"name,omitempty"`
	Questions int         `json:"questions"`
	At        []locomoAtK `json:"at"` // by cutoff; sums until finish divides them
}

// locomoAtK holds the scores at one cutoff.
type locomoAtK struct {
	K       int     `json:"k"`
	Any     float64 `json:"any"`     // some evidence turn in the top k
	Recall  float64 `json:"recall"`  // mean fraction of evidence turns in the top k
	All     float64 `json:"all"`     // every evidence turn in the top k
	Session float64 `json:"session"` // some result from an evidence turn's session in the top k
}

// runLocomo ingests convs into b through the HTTP API, then asks every scored
// question in each mode and scores the answers.
func runLocomo(ctx context.Context, env Env, b *benchEngram, convs []*locomoConv, o LocomoOptions) (*locomoReport, error) {
	kinds, k := o.Kinds, o.K
	modes, err := b.recallModes(ctx, o.Modes, k)
	if err != nil {
		return nil, err
	}
	rep := &locomoReport{Benchmark: "locomo", K: k, Cutoffs: cutoffs(k), Kinds: kinds}
	for _, c := range convs {
		rep.Files = append(rep.Files, c.file)
		rep.Counts.add(c.stats)
	}
	if err := rep.ingest(ctx, b, convs); err != nil {
		return nil, err
	}
	in := rep.Ingest
	fmt.Fprintf(env.Stderr, "engram bench locomo: %s of %s searchable after %.2f s\n",
		plural(in.Turns, "turn"), plural(in.Conversations, "conversation"), in.Seconds)
	for _, mode := range modes {
		md, err := askLocomo(ctx, b, convs, mode, kinds, k, rep.Cutoffs, o.PerQuestion)
		if err != nil {
			return nil, err
		}
		if o.SessionK > 0 {
			if md.Sessions, err = askSessions(ctx, b, convs, mode, kinds, o.SessionK); err != nil {
				return nil, err
			}
		}
		fmt.Fprintf(env.Stderr, "engram bench locomo: mode %s: %d questions, recall p50 %.2f ms\n",
			mode, md.Overall.Questions, md.Latency.ClientP50MS)
		rep.Modes = append(rep.Modes, md)
	}
	return rep, nil
}

// ingest sends every session of convs as one POST /v1/turns and waits until
// the server has made every turn searchable, then runs the layer jobs.
func (rep *locomoReport) ingest(ctx context.Context, b *benchEngram, convs []*locomoConv) error {
	return ingestLocomo(ctx, b, convs, &rep.Ingest)
}

// ingestLocomo sends every session of convs as one POST /v1/turns, waits
// until the server has made every turn searchable, and, when the server has
// an extractor, runs the layer jobs once each, in order, as the scheduler
// would; in records what happened.
func ingestLocomo(ctx context.Context, b *benchEngram, convs []*locomoConv, in *locomoIngest) error {
	start := time.Now()
	for _, c := range convs {
		in.Conversations++
		for _, s := range c.sessions {
			if len(s.turns) == 0 {
				continue
			}
			res, err := b.client.Ingest(ctx, s.turns)
			if err != nil {
				return fmt.Errorf("%s %s: POST /v1/turns: %w", c.file, s.name, err)
			}
			in.Sessions++
			in.Requests++
			in.Turns += len(s.turns)
			for _, a := range res.Turns {
				if a.Duplicate {
					in.Duplicates++
				} else {
					in.Archived++
				}
			}
			for _, w := range res.Warnings {
				if !slices.Contains(in.Warnings, w) {
					in.Warnings = append(in.Warnings, w)
				}
			}
		}
	}
	if err := b.waitIndexed(ctx, time.Minute); err != nil {
		return err
	}
	in.Seconds = time.Since(start).Seconds()
	// The derived layers, as the scheduled jobs would build them; without
	// them, the vectors of the sessions (retrieval units) all the same.
	jobs := []string{pipeline.WorkerLayerVectors}
	if b.srv.Engine.HasLayers() {
		jobs = []string{pipeline.WorkerMemories, pipeline.WorkerScenes, pipeline.WorkerPersona, pipeline.WorkerGraph, pipeline.WorkerLayerVectors}
	}
	start = time.Now()
	for _, name := range jobs {
		st, err := b.srv.Engine.RunJob(ctx, name)
		for engram.ErrorCode(err) == engram.ECONFLICT && ctx.Err() == nil {
			time.Sleep(50 * time.Millisecond) // the scheduler's own run of the job ends first
			st, err = b.srv.Engine.RunJob(ctx, name)
		}
		if err != nil {
			return fmt.Errorf("job %s: %w", name, err)
		}
		if st.LastError != "" {
			return fmt.Errorf("job %s: %s", name, st.LastError)
		}
	}
	in.LayerSeconds = time.Since(start).Seconds()
	st, err := b.srv.Engine.Stats(ctx)
	if err != nil {
		return err
	}
	for _, l := range st.Layers {
		in.Memories += l["memories"]
		in.Scenes += l["scenes"]
		in.Facts += l["facts"]
	}
	return nil
}

// askLocomo asks every scored question of convs in mode, in a fixed order,
// one request at a time (so latencies do not overlap), and scores them.
func askLocomo(ctx context.Context, b *benchEngram, convs []*locomoConv, mode string, kinds []string, k int, cuts []int, perQuestion bool) (locomoMode, error) {
	md := locomoMode{Mode: mode, Ran: make(map[string]int), Overall: newLocomoScores(0, cuts)}
	byCat := make(map[int]*locomoScores)
	var client []time.Duration
	var server []float64
	var results, sources int
	for _, c := range convs {
		conv := newLocomoScores(0, cuts)
		conv.Name = c.file
		for _, q := range c.questions {
			start := time.Now()
			resp, err := b.client.Recall(ctx, engram.RecallRequest{Namespace: c.namespace, Query: q.text, K: k, Mode: mode, Kinds: kinds})
			if err != nil {
				return md, fmt.Errorf("%s qa[%d], mode %s: POST /v1/recall: %w", c.file, q.index, mode, err)
			}
			client = append(client, time.Since(start))
			server = append(server, resp.TookMS)
			md.Ran[resp.Mode]++
			for _, w := range resp.Warnings {
				if !slices.Contains(md.Warnings, w) {
					md.Warnings = append(md.Warnings, w)
				}
			}
			r, foreign := c.rank(q, resp.Results)
			md.ForeignSources += foreign
			for _, res := range resp.Results {
				results++
				sources += len(res.Sources)
			}
			if perQuestion {
				md.Questions = append(md.Questions, c.questionRanks(q, r, resp.Results))
			}
			md.Overall.add(r)
			conv.add(r)
			cat := byCat[q.category]
			if cat == nil {
				s := newLocomoScores(q.category, cuts)
				cat = &s
				byCat[q.category] = cat
			}
			cat.add(r)
		}
		conv.finish()
		md.Conversations = append(md.Conversations, conv)
	}
	md.Overall.finish()
	if results > 0 {
		md.TurnsPerResult = float64(sources) / float64(results)
	}
	for _, n := range slices.Sorted(maps.Keys(byCat)) {
		byCat[n].finish()
		md.Categories = append(md.Categories, *byCat[n])
	}
	md.Latency = newLatencyReport(client, server)
	return md, nil
}

// locomoSessions is the session-level figure of one mode.
type locomoSessions struct {
	K         int     `json:"k"`         // distinct sessions counted
	Pool      int     `json:"pool"`      // results asked per question to find them
	Questions int     `json:"questions"` // every question, category 5 and those without evidence too
	Recall    float64 `json:"recall"`    // mean share of a question's evidence sessions among the first K
}

// sessionPool is how many results a question asks for to find its first
// distinct sessions: results of one session often come in runs.
const sessionPool = 50

// askSessions asks every question of convs (category 5 and those without
// usable evidence too) for sessionPool results in mode and scores the
// share of its evidence sessions among the first k distinct sessions of
// the results; a question without evidence counts 1, as MemPalace counts
// it.
func askSessions(ctx context.Context, b *benchEngram, convs []*locomoConv, mode string, kinds []string, k int) (*locomoSessions, error) {
	out := &locomoSessions{K: k, Pool: max(k, sessionPool)}
	for _, c := range convs {
		for _, q := range append(append([]locomoQuestion{}, c.questions...), c.unscored...) {
			resp, err := b.client.Recall(ctx, engram.RecallRequest{Namespace: c.namespace, Query: q.text, K: out.Pool, Mode: mode, Kinds: kinds})
			if err != nil {
				return nil, fmt.Errorf("%s qa[%d], mode %s: POST /v1/recall: %w", c.file, q.index, mode, err)
			}
			out.Questions++
			want := map[string]bool{}
			for _, e := range q.evidence {
				want[fmt.Sprintf("session_%d", e.session)] = true
			}
			if len(want) == 0 {
				out.Recall++
				continue
			}
			var top []string
			for _, r := range resp.Results {
				for _, src := range r.Sources {
					var meta locomoMeta
					if json.Unmarshal(src.Meta, &meta) != nil || meta.Conversation != c.name || slices.Contains(top, src.Session) {
						continue
					}
					if len(top) < k {
						top = append(top, src.Session)
					}
				}
			}
			found := 0
			for _, s := range top {
				if want[s] {
					found++
				}
			}
			out.Recall += float64(found) / float64(len(want))
		}
	}
	if out.Questions > 0 {
		out.Recall /= float64(out.Questions)
	}
	return out, nil
}

// locomoRanks say where a question's evidence showed up in a result list:
// 0-based ranks, -1 for nowhere.
type locomoRanks struct {
	first    int   // the first result with an evidence turn among its sources
	session  int   // the first result with a source in an evidence turn's session
	evidence []int // for each evidence turn, the first result that has it as a source
}

// rank finds q's evidence among the sources of results. A source counts
// only when its meta names a turn of this conversation; the others are
// returned as foreign.
func (c *locomoConv) rank(q locomoQuestion, results []engram.Result) (r locomoRanks, foreign int) {
	r = locomoRanks{first: -1, session: -1, evidence: make([]int, len(q.evidence))}
	for i := range r.evidence {
		r.evidence[i] = -1
	}
	sessions := make(map[string]bool)
	for _, e := range q.evidence {
		sessions[fmt.Sprintf("session_%d", e.session)] = true
	}
	for i, res := range results {
		for _, s := range res.Sources {
			var meta locomoMeta
			if json.Unmarshal(s.Meta, &meta) != nil || meta.Conversation != c.name {
				foreign++
				continue
			}
			if sessions[s.Session] && r.session < 0 {
				r.session = i
			}
			id, err := parseDiaID(meta.DiaID)
			if err != nil {
				foreign++
				continue
			}
			if j := slices.Index(q.evidence, id); j >= 0 {
				if r.first < 0 {
					r.first = i
				}
				if r.evidence[j] < 0 {
					r.evidence[j] = i
				}
			}
		}
	}
	return r, foreign
}

func newLocomoScores(category int, cuts []int) locomoScores {
	s := locomoScores{Category: category, Name: locomoCategories[category], At: make([]locomoAtK, len(cuts))}
	for i, k := range cuts {
		s.At[i].K = k
	}
	return s
}

// add counts one question; finish turns the sums into fractions.
func (s *locomoScores) add(r locomoRanks) {
	s.Questions++
	in := func(rank, k int) bool { return rank >= 0 && rank < k }
	for i := range s.At {
		at := &s.At[i]
		if in(r.first, at.K) {
			at.Any++
		}
		if in(r.session, at.K) {
			at.Session++
		}
		found := 0
		for _, e := range r.evidence {
			if in(e, at.K) {
				found++
			}
		}
		at.Recall += float64(found) / float64(len(r.evidence))
		if found == len(r.evidence) {
			at.All++
		}
	}
}

func (s *locomoScores) finish() {
	if s.Questions == 0 {
		return
	}
	n := float64(s.Questions)
	for i := range s.At {
		s.At[i].Any /= n
		s.At[i].Recall /= n
		s.At[i].All /= n
		s.At[i].Session /= n
	}
}

// Print writes the report as tables.
func (rep *locomoReport) Print(w io.Writer) error {
	c, in := rep.Counts, rep.Ingest
	fmt.Fprintf(w, "LoCoMo retrieval: %s (%s)\n", rep.Data, strings.Join(rep.Files, ", "))
	fmt.Fprintf(w, "ingest:    %s, %s, %s in %s; all searchable after %.2f s (%d archived, %d already present)\n",
		plural(in.Conversations, "conversation"), plural(in.Sessions, "session"), plural(in.Turns, "turn"),
		plural(in.Requests, "request"), in.Seconds, in.Archived, in.Duplicates)
	if in.LayerSeconds > 0 {
		fmt.Fprintf(w, "layers:    %d memories, %d scenes, %d facts built by the layer jobs in %.2f s\n",
			in.Memories, in.Scenes, in.Facts, in.LayerSeconds)
	}
	if rep.Captions {
		fmt.Fprintln(w, `photos:    a shared photo's caption is appended to the turn as "[shares a photo: CAPTION]"`)
	} else {
		fmt.Fprintln(w, "photos:    captions left out (--captions=false)")
	}
	fmt.Fprintf(w, "questions: %d scored (categories 1-4) of %d; skipped %d adversarial (category 5) and %d without usable evidence\n",
		c.Scored, c.Questions, c.Adversarial, c.NoEvidence)
	fmt.Fprintf(w, "evidence:  %s; entries split on ';': %d; skipped: %s, %s naming no turn\n",
		plural(c.EvidenceTurns, "turn"), c.Split, plural(c.Malformed, "malformed id"), plural(c.Unknown, "id"))
	for _, s := range c.Skipped {
		fmt.Fprintf(w, "  skipped %s\n", s)
	}
	for _, s := range in.Warnings {
		fmt.Fprintf(w, "  ingest warning: %s\n", s)
	}
	for _, md := range rep.Modes {
		ran := slices.Sorted(maps.Keys(md.Ran))
		for i, r := range ran {
			if len(ran) > 1 {
				ran[i] = fmt.Sprintf("%s %d", r, md.Ran[r])
			}
		}
		fmt.Fprintf(w, "\nmode %s (the server ran %s), k %d: %% of questions\n", md.Mode, strings.Join(ran, ", "), rep.K)
		fmt.Fprintf(w, "%-20s", "")
		for _, name := range []string{"any@k", "recall@k", "all@k", "session@k"} {
			fmt.Fprintf(w, "  %*s", 6*len(rep.Cutoffs), name)
		}
		fmt.Fprintf(w, "\n%-15s%5s", "category", "n")
		for range 4 {
			fmt.Fprint(w, "  ")
			for _, k := range rep.Cutoffs {
				fmt.Fprintf(w, "%6s", "@"+strconv.Itoa(k))
			}
		}
		fmt.Fprintln(w)
		row := func(label string, s locomoScores) {
			fmt.Fprintf(w, "%-15s%5d", label, s.Questions)
			for _, metric := range []func(locomoAtK) float64{
				func(a locomoAtK) float64 { return a.Any },
				func(a locomoAtK) float64 { return a.Recall },
				func(a locomoAtK) float64 { return a.All },
				func(a locomoAtK) float64 { return a.Session },
			} {
				fmt.Fprint(w, "  ")
				for _, a := range s.At {
					fmt.Fprintf(w, "%6.1f", 100*metric(a))
				}
			}
			fmt.Fprintln(w)
		}
		for _, s := range md.Categories {
			row(fmt.Sprintf("%d %s", s.Category, s.Name), s)
		}
		row("all", md.Overall)
		if len(md.Conversations) > 1 {
			for _, s := range md.Conversations {
				row("  "+strings.TrimSuffix(s.Name, ".json"), s)
			}
		}
		l := md.Latency
		fmt.Fprintf(w, "latency:   %d recalls; client p50 %.2f ms, p95 %.2f ms, max %.2f ms; server took_ms p50 %.2f ms\n",
			l.Requests, l.ClientP50MS, l.ClientP95MS, l.ClientMaxMS, l.ServerP50MS)
		if ss := md.Sessions; ss != nil {
			fmt.Fprintf(w, "sessions:  %.1f%% of the evidence sessions among the first %d sessions of %d results, over %s (every category; none counts 1)\n",
				100*ss.Recall, ss.K, ss.Pool, plural(ss.Questions, "question"))
		}
		fmt.Fprintf(w, "results:   %.2f turns per result (a burst of messages or a layer result stems from several)\n", md.TurnsPerResult)
		if md.ForeignSources > 0 {
			fmt.Fprintf(w, "foreign:   %d result sources named no turn of the asked conversation\n", md.ForeignSources)
		}
		for _, s := range md.Warnings {
			fmt.Fprintf(w, "warning:   %s\n", s)
		}
	}
	_, err := fmt.Fprint(w, `
any@k: an evidence turn is among the sources of the top k results; recall@k: the mean fraction
of a question's evidence turns found there; all@k: every evidence turn is there; session@k: a
top-k result comes from the session of an evidence turn. Indented rows: each conversation.
`)
	return err
}

var locomoEventsKey = regexp.MustCompile(`^events_session_([0-9]+)$`)

// readEvents reads the optional events_session_N objects ({"<speaker>":
// ["...", ...], "date": "..."}) at the top of the file, in conv, or in the
// upstream shape's "event_summary" object. A session without turns or a
// speaker who never speaks is an error: the summaries would score memories
// against a conversation they do not describe.
func (c *locomoConv) readEvents(top, conv jsonObject, nested bool) error {
	holders := []jsonObject{top}
	if nested {
		holders = append(holders, conv)
	}
	if raw, ok := top["event_summary"]; ok {
		es, err := decodeObject(raw)
		if err != nil {
			return fmt.Errorf("event_summary: %w", err)
		}
		holders = append(holders, es)
	}
	seen := map[string]bool{}
	for _, h := range holders {
		for _, key := range slices.Sorted(maps.Keys(h)) {
			sub := locomoEventsKey.FindStringSubmatch(key)
			if sub == nil || seen[key] {
				continue
			}
			seen[key] = true
			n, err := strconv.Atoi(sub[1])
			if err != nil {
				return fmt.Errorf("%s: bad session number: %w", key, err)
			}
			if !slices.ContainsFunc(c.sessions, func(s locomoSession) bool { return s.name == fmt.Sprintf("session_%d", n) }) {
				return fmt.Errorf("%s: the conversation has no session_%d with turns", key, n)
			}
			obj, err := decodeObject(h[key])
			if err != nil {
				return fmt.Errorf("%s: %w", key, err)
			}
			for _, speaker := range slices.Sorted(maps.Keys(obj)) {
				if speaker == "date" {
					continue
				}
				var texts []string
				if err := json.Unmarshal(obj[speaker], &texts); err != nil {
					return fmt.Errorf("%s.%s: want a list of strings, got %s", key, speaker, jsonKind(obj[speaker]))
				}
				if len(texts) > 0 && !slices.Contains(c.speakers, speaker) {
					return fmt.Errorf("%s.%s: no turn of the conversation has this speaker", key, speaker)
				}
				for _, text := range texts {
					if text = strings.TrimSpace(text); text != "" {
						c.events = append(c.events, locomoEvent{session: n, speaker: speaker, text: text})
					}
				}
			}
		}
	}
	slices.SortStableFunc(c.events, func(a, b locomoEvent) int { return a.session - b.session })
	return nil
}
