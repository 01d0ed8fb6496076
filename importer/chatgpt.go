package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/engram-dev/engram"
)

// ChatGPTIDPrefix starts the id of every turn imported from a ChatGPT export;
// the message's own id follows.
const ChatGPTIDPrefix = "chatgpt-"

// ChatGPTSpeaker is the speaker of assistant turns whose message names no model.
const ChatGPTSpeaker = "chatgpt"

// ErrNotChatGPTExport is returned by ReadChatGPT when the input is not a JSON
// array (conversations.json of the ChatGPT data export is one).
var ErrNotChatGPTExport = errors.New("not a ChatGPT export: conversations.json holds a JSON array of conversations")

// The reasons ReadChatGPT gives in Record.Skip.
const (
	SkipSystem  = "system message"
	SkipHidden  = "hidden message"
	SkipEmpty   = "empty message"
	SkipNonText = "non-text content" // followed by the content type: "non-text content (code)"
	SkipRole    = "unknown author role"
)

// ChatGPTStats counts what ReadChatGPT read.
type ChatGPTStats struct {
	Conversations int // conversations read, malformed ones included
	Messages      int // messages on the current branches, skipped ones included
}

// ReadChatGPT streams the conversations of a ChatGPT export (the
// conversations.json of "Export data") from r and calls emit for each message
// on each conversation's current branch, in order, with namespace ns (empty:
// the default). It decodes one conversation at a time, so the export may be
// larger than memory. A conversation that cannot be read is one Record with
// Err; the next one is read on. It stops at the first error emit returns.
//
// Errors: ErrNotChatGPTExport when r does not hold a JSON array; a
// *json.SyntaxError (wrapped) when the JSON breaks off, after which nothing
// more can be read; whatever emit returns.
func ReadChatGPT(r io.Reader, ns string, emit func(Record) error) (ChatGPTStats, error) {
	var st ChatGPTStats
	dec := json.NewDecoder(r)
	tok, err := dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return st, ErrNotChatGPTExport
		}
		return st, fmt.Errorf("%w (%v)", ErrNotChatGPTExport, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return st, ErrNotChatGPTExport
	}
	for dec.More() {
		// Decode to raw bytes first: a conversation of an unexpected shape is
		// then one bad record, not the end of the import.
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return st, fmt.Errorf("conversation %d: %w", st.Conversations+1, err)
		}
		st.Conversations++
		n, err := chatgptConversation(raw, st.Conversations, ns, emit)
		st.Messages += n
		if err != nil {
			return st, err
		}
	}
	if _, err := dec.Token(); err != nil {
		return st, fmt.Errorf("after conversation %d: %w", st.Conversations, err)
	}
	return st, nil
}

type gptConversation struct {
	ID             string             `json:"id"`
	ConversationID string             `json:"conversation_id"`
	Title          string             `json:"title"`
	CreateTime     epoch              `json:"create_time"`
	UpdateTime     epoch              `json:"update_time"`
	CurrentNode    string             `json:"current_node"`
	Mapping        map[string]gptNode `json:"mapping"`
}

type gptNode struct {
	ID       string      `json:"id"`
	Parent   string      `json:"parent"`
	Children []string    `json:"children"`
	Message  *gptMessage `json:"message"`
}

type gptMessage struct {
	ID     string `json:"id"`
	Author struct {
		Role string `json:"role"`
		Name string `json:"name"`
	} `json:"author"`
	CreateTime epoch `json:"create_time"`
	Content    struct {
		ContentType string            `json:"content_type"`
		Parts       []json.RawMessage `json:"parts"`
		Text        string            `json:"text"`
	} `json:"content"`
	Metadata struct {
		Hidden    bool   `json:"is_visually_hidden_from_conversation"`
		ModelSlug string `json:"model_slug"`
	} `json:"metadata"`
}

// epoch is a time in float seconds since 1970; exports have null for
// unknown times, and some tools rewrite the numbers as strings.
type epoch float64

func (e *epoch) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "null" || s == "" {
		*e = 0
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Errorf("time %s is not a number of seconds", b)
	}
	*e = epoch(f)
	return nil
}

// time returns e as a time, and false for no time or one out of range.
func (e epoch) time() (time.Time, bool) {
	f := float64(e)
	if f <= 0 || f >= maxEpoch {
		return time.Time{}, false
	}
	sec, frac := math.Modf(f)
	// Round to microseconds: float seconds carry no more, and the noise
	// would otherwise change the timestamp between runs of another tool.
	return time.Unix(int64(sec), int64(math.Round(frac*1e6))*1e3).UTC(), true
}

// maxEpoch bounds the times an export may give: 9e9 s is in the year
// 2255; beyond is garbage.
const maxEpoch = 9e9

// check reports a time given but out of range (0 is null: no time). Such a
// time is the record's error, not replaced by another one: the turn would
// be stamped with a time it never had.
func (e epoch) check(name string) error {
	if f := float64(e); f < 0 || f >= maxEpoch {
		return fmt.Errorf("%s %v is out of range (seconds since 1970, before the year 2255)", name, f)
	}
	return nil
}

func chatgptConversation(raw json.RawMessage, n int, ns string, emit func(Record) error) (int, error) {
	var c gptConversation
	if err := json.Unmarshal(raw, &c); err != nil {
		return 0, emit(Record{Where: fmt.Sprintf("conversation %d", n), Err: fmt.Errorf("not a conversation: %v", err)})
	}
	id := c.ID
	if id == "" {
		id = c.ConversationID
	}
	where := fmt.Sprintf("conversation %d (%s)", n, id)
	if id == "" {
		return 0, emit(Record{Where: fmt.Sprintf("conversation %d", n), Err: errors.New("no id or conversation_id")})
	}
	path, err := currentBranch(c)
	if err != nil {
		return 0, emit(Record{Where: where, Err: err})
	}
	convTS, ok := c.CreateTime.time()
	if !ok {
		convTS, _ = c.UpdateTime.time()
	}
	// A conversation time out of range is reported on the messages that
	// would take it (those without a time of their own).
	var convErr error
	if convTS.IsZero() {
		convErr = c.CreateTime.check("the conversation's create_time")
	}
	msgs := 0
	for _, nodeID := range path {
		node := c.Mapping[nodeID]
		m := node.Message
		if m == nil {
			continue // the root of most exports: a node without a message
		}
		msgs++
		if m.ID == "" {
			m.ID = nodeID
		}
		rec := chatgptMessage(c, id, m, convTS, convErr, ns)
		rec.Where = where + ", message " + m.ID
		if err := emit(rec); err != nil {
			return msgs, err
		}
	}
	return msgs, nil
}

// currentBranch returns the node ids from the root to the current node. With
// no usable current_node it follows the last child from the root, which is
// the latest edit or regeneration.
func currentBranch(c gptConversation) ([]string, error) {
	if len(c.Mapping) == 0 {
		return nil, errors.New("no messages (mapping is empty)")
	}
	seen := make(map[string]bool)
	var path []string
	if _, ok := c.Mapping[c.CurrentNode]; ok {
		for id := c.CurrentNode; id != ""; id = c.Mapping[id].Parent {
			if _, ok := c.Mapping[id]; !ok {
				return nil, fmt.Errorf("node %s names parent %s, which is not in the mapping", path[len(path)-1], id)
			}
			if seen[id] {
				return nil, fmt.Errorf("the parents of node %s form a cycle", id)
			}
			seen[id] = true
			path = append(path, id)
		}
		for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
			path[i], path[j] = path[j], path[i]
		}
		return path, nil
	}
	var root string
	for id, node := range c.Mapping {
		if _, ok := c.Mapping[node.Parent]; node.Parent == "" || !ok {
			if root != "" {
				return nil, errors.New("no current_node, and more than one root")
			}
			root = id
		}
	}
	if root == "" {
		return nil, errors.New("no current_node, and no root")
	}
	for id := root; id != "" && !seen[id]; {
		seen[id] = true
		path = append(path, id)
		next := ""
		if ch := c.Mapping[id].Children; len(ch) > 0 {
			next = ch[len(ch)-1]
		}
		if _, ok := c.Mapping[next]; !ok {
			break
		}
		id = next
	}
	return path, nil
}

func chatgptMessage(c gptConversation, convID string, m *gptMessage, convTS time.Time, convErr error, ns string) Record {
	var role engram.Role
	var speaker string
	switch m.Author.Role {
	case "system":
		return Record{Skip: SkipSystem}
	case "user":
		role, speaker = engram.RoleUser, "user"
	case "assistant":
		role, speaker = engram.RoleAssistant, ChatGPTSpeaker
		if m.Metadata.ModelSlug != "" {
			speaker = m.Metadata.ModelSlug
		}
	case "tool":
		role, speaker = engram.RoleTool, "tool"
		if m.Author.Name != "" {
			speaker = m.Author.Name
		}
	default:
		return Record{Skip: SkipRole}
	}
	if m.Metadata.Hidden {
		return Record{Skip: SkipHidden}
	}
	var text string
	switch ct := m.Content.ContentType; ct {
	case "text", "multimodal_text":
		text = joinParts(m.Content.Parts)
	default:
		if ct == "" {
			ct = "none"
		}
		return Record{Skip: SkipNonText + " (" + ct + ")"}
	}
	if strings.TrimSpace(text) == "" {
		return Record{Skip: SkipEmpty}
	}
	in := engram.TurnInput{
		ID:        ChatGPTIDPrefix + m.ID,
		Namespace: ns,
		Session:   convID,
		Role:      string(role),
		Speaker:   speaker,
		Content:   text,
	}
	if err := m.CreateTime.check("create_time"); err != nil {
		return Record{Err: err}
	}
	ts, ok := m.CreateTime.time()
	if !ok {
		if convErr != nil {
			return Record{Err: convErr}
		}
		ts, ok = convTS, !convTS.IsZero()
	}
	if ok {
		in.TS = ts.Format(time.RFC3339Nano)
	}
	meta, err := json.Marshal(map[string]any{"chatgpt": map[string]string{
		"conversation": convID, "title": c.Title, "message": m.ID,
	}})
	if err != nil {
		return Record{Err: err}
	}
	in.Meta = meta
	return Record{Turn: in}
}

// joinParts joins the parts of a message: text as it is, audio transcripts
// by their text, anything else (images, files) as a placeholder naming it.
func joinParts(parts []json.RawMessage) string {
	var texts []string
	for _, p := range parts {
		p = bytes.TrimSpace(p)
		if len(p) == 0 || string(p) == "null" {
			continue
		}
		var s string
		if json.Unmarshal(p, &s) == nil {
			if strings.TrimSpace(s) != "" {
				texts = append(texts, s)
			}
			continue
		}
		var obj struct {
			ContentType string `json:"content_type"`
			Text        string `json:"text"`
		}
		if json.Unmarshal(p, &obj) != nil {
			continue
		}
		switch {
		case strings.TrimSpace(obj.Text) != "":
			texts = append(texts, obj.Text)
		case obj.ContentType == "image_asset_pointer":
			texts = append(texts, "[image]")
		case strings.HasPrefix(obj.ContentType, "audio"):
			texts = append(texts, "[audio]")
		case obj.ContentType != "":
			texts = append(texts, "["+obj.ContentType+"]")
		default:
			texts = append(texts, "[attachment]")
		}
	}
	return strings.Join(texts, "\n")
}
