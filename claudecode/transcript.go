package claudecode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/engram-dev/engram"
)

// Speakers of the turns.
const (
	SpeakerUser   = "user"
	SpeakerClaude = "claude"
)

// IDPrefix is put before an entry's uuid to make the turn id.
const IDPrefix = "cc-"

// Defaults of the mapping.
const (
	DefaultResultChars = 300 // tool results are cut to this many characters
	DefaultInputChars  = 200 // a tool's key input is cut to this many characters
)

// Entry is one line of a transcript, the fields engram uses.
type Entry struct {
	Type        string   `json:"type"`
	UUID        string   `json:"uuid"`
	ParentUUID  *string  `json:"parentUuid"`
	SessionID   string   `json:"sessionId"`
	CWD         string   `json:"cwd"`
	Timestamp   string   `json:"timestamp"`
	IsSidechain bool     `json:"isSidechain"`
	IsMeta      bool     `json:"isMeta"`
	Message     *Message `json:"message"`
}

// Message is the message of a user or assistant entry.
type Message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"` // a string or a list of blocks
}

// Block is one content block.
type Block struct {
	Type    string          `json:"type"`
	Text    string          `json:"text"`
	Name    string          `json:"name"`    // tool_use
	Input   json.RawMessage `json:"input"`   // tool_use
	Content json.RawMessage `json:"content"` // tool_result: a string or blocks
	IsError bool            `json:"is_error"`
}

// Meta is the turn's meta: {"claude_code": {...}}.
type Meta struct {
	ClaudeCode MetaCC `json:"claude_code"`
}

// MetaCC is what a turn records of its transcript entry.
type MetaCC struct {
	UUID      string `json:"uuid"`
	Parent    string `json:"parent,omitempty"`
	Sidechain bool   `json:"sidechain,omitempty"`
	CWD       string `json:"cwd,omitempty"`
	Session   string `json:"session"`
}

// Mapper maps transcript entries to turns. The zero value is ready to use.
type Mapper struct {
	// Namespace of every turn; "" means Namespace(cwd) of each entry.
	Namespace string
	// ResultChars cuts tool results; 0 means DefaultResultChars.
	ResultChars int
}

// Map decodes one transcript line and returns its turn. ok is false, with
// no error, for a line that carries no turn: a summary, system or other
// entry, a meta entry, or one whose content is only thinking. err is
// non-nil for a line that is not a JSON object or lacks its uuid or session.
func (mp Mapper) Map(line []byte) (in engram.TurnInput, ok bool, err error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return in, false, nil
	}
	var e Entry
	if err := json.Unmarshal(line, &e); err != nil {
		return in, false, fmt.Errorf("not a transcript entry: %w", err)
	}
	return mp.MapEntry(e)
}

// MapEntry returns the turn of a decoded entry; see Map.
func (mp Mapper) MapEntry(e Entry) (in engram.TurnInput, ok bool, err error) {
	if (e.Type != "user" && e.Type != "assistant") || e.IsMeta || e.Message == nil {
		return in, false, nil
	}
	if e.UUID == "" || e.SessionID == "" {
		return in, false, fmt.Errorf("%s entry without uuid or sessionId", e.Type)
	}
	content, onlyResults := mp.content(e.Message.Content, e.CWD)
	if strings.TrimSpace(content) == "" {
		return in, false, nil
	}
	in = engram.TurnInput{
		ID:        IDPrefix + e.UUID,
		Namespace: mp.Namespace,
		Session:   e.SessionID,
		Content:   content,
		TS:        e.Timestamp,
	}
	if in.Namespace == "" {
		in.Namespace = Namespace(e.CWD)
	}
	switch {
	case e.Type == "assistant":
		in.Role, in.Speaker = string(engram.RoleAssistant), SpeakerClaude
	case onlyResults:
		in.Role = string(engram.RoleTool)
	default:
		in.Role, in.Speaker = string(engram.RoleUser), SpeakerUser
	}
	meta := Meta{ClaudeCode: MetaCC{UUID: e.UUID, Sidechain: e.IsSidechain, CWD: e.CWD, Session: e.SessionID}}
	if e.ParentUUID != nil {
		meta.ClaudeCode.Parent = *e.ParentUUID
	}
	in.Meta, err = json.Marshal(meta)
	if err != nil {
		return in, false, err
	}
	return in, true, nil
}

// content renders a message's content. onlyResults reports that every
// block rendered was a tool result.
func (mp Mapper) content(raw json.RawMessage, cwd string) (s string, onlyResults bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", false
	}
	if raw[0] == '"' {
		var str string
		if json.Unmarshal(raw, &str) != nil {
			return "", false
		}
		return strings.TrimSpace(str), false
	}
	var blocks []Block
	if json.Unmarshal(raw, &blocks) != nil {
		return "", false
	}
	var parts []string
	results, others := 0, 0
	for _, b := range blocks {
		var p string
		switch b.Type {
		case "text":
			p = strings.TrimSpace(b.Text)
			if p != "" {
				others++
			}
		case "tool_use":
			p = ToolLine(b.Name, b.Input, cwd)
			others++
		case "tool_result":
			p = mp.resultLine(b)
			results++
		default: // thinking, redacted_thinking, image, ...
		}
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "\n"), results > 0 && others == 0
}

func (mp Mapper) resultLine(b Block) string {
	n := mp.ResultChars
	if n <= 0 {
		n = DefaultResultChars
	}
	text := blockText(b.Content)
	text = cut(strings.Join(strings.Fields(text), " "), n)
	label := "tool result"
	if b.IsError {
		label = "tool error"
	}
	if text == "" {
		return "[" + label + "]"
	}
	return "[" + label + ": " + text + "]"
}

// blockText is the text of a tool result's content: a string, or the text
// blocks of a list.
func blockText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	if raw[0] == '"' {
		var s string
		json.Unmarshal(raw, &s)
		return s
	}
	var blocks []Block
	if json.Unmarshal(raw, &blocks) != nil {
		return ""
	}
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" && b.Text != "" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, " ")
}

// keyInputs are, per tool, the input fields that say what a call did, in
// order of preference; tools not listed fall back to genericKeys.
var keyInputs = map[string][]string{
	"Bash":         {"command"},
	"Read":         {"file_path"},
	"Write":        {"file_path"},
	"Edit":         {"file_path"},
	"MultiEdit":    {"file_path"},
	"NotebookEdit": {"notebook_path"},
	"Glob":         {"pattern"},
	"Grep":         {"pattern"},
	"WebFetch":     {"url"},
	"WebSearch":    {"query"},
	"Task":         {"description"},
	"TodoWrite":    {},
}

var genericKeys = []string{"command", "file_path", "path", "pattern", "query", "url", "description", "prompt"}

var pathKeys = map[string]bool{"file_path": true, "notebook_path": true, "path": true}

// ToolLine renders a tool call as "[tool NAME: key input]", the key input
// folded to one line, cut to DefaultInputChars characters, and, for a file
// path, made relative to cwd when it lies inside it.
func ToolLine(name string, input json.RawMessage, cwd string) string {
	if name == "" {
		name = "?"
	}
	var fields map[string]any
	json.Unmarshal(input, &fields)
	keys, known := keyInputs[name]
	if !known {
		keys = genericKeys
	}
	for _, k := range keys {
		v, ok := fields[k].(string)
		if !ok || strings.TrimSpace(v) == "" {
			continue
		}
		if pathKeys[k] && cwd != "" && filepath.IsAbs(v) {
			if rel, err := filepath.Rel(cwd, v); err == nil && !strings.HasPrefix(rel, "..") {
				v = rel
			}
		}
		return "[tool " + name + ": " + cut(strings.Join(strings.Fields(v), " "), DefaultInputChars) + "]"
	}
	return "[tool " + name + "]"
}

// cut returns s cut to at most n characters, with "…" when cut.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

var unsafeName = regexp.MustCompile(`[^a-z0-9._-]+`)

// Namespace is the default namespace of a project: "cc-" and the base name
// of its folder, lower-cased, runs of other characters than a-z, 0-9, '.',
// '_' and '-' replaced by '-'. A cwd of "" or "/" gives "cc-default".
func Namespace(cwd string) string {
	base := ""
	if cwd != "" {
		base = filepath.Base(filepath.Clean(cwd))
	}
	base = strings.Trim(unsafeName.ReplaceAllString(strings.ToLower(base), "-"), "-.")
	if base == "" || base == "." {
		base = "default"
	}
	if len(base) > 64 {
		base = base[:64]
	}
	return "cc-" + base
}
