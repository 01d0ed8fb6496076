package engram

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Role says who produced a turn.
type Role string

// The roles a turn may have.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleSystem    Role = "system"
	RoleTool      Role = "tool"
)

// DefaultNamespace is used when a turn names none.
const DefaultNamespace = "default"

// Valid reports whether r is one of the known roles.
func (r Role) Valid() bool {
	switch r {
	case RoleUser, RoleAssistant, RoleSystem, RoleTool:
		return true
	}
	return false
}

// Turn is one conversation turn as it is stored in the L0 archive. ID, Seq
// and ReceivedAt are assigned by the archive when the turn is appended (ID
// only when the client sent none).
type Turn struct {
	ID         string          `json:"id"`
	Seq        int64           `json:"seq"`
	Namespace  string          `json:"namespace"`
	Session    string          `json:"session"`
	Role       Role            `json:"role"`
	Speaker    string          `json:"speaker,omitempty"`
	Content    string          `json:"content"`
	TS         time.Time       `json:"ts"`
	Meta       json.RawMessage `json:"meta,omitempty"`
	ReceivedAt time.Time       `json:"received_at"`
	// Redacted, when set, says that spans of the turn were replaced by a
	// marker (see Redaction).
	Redacted *Redaction `json:"redacted,omitempty"`
	// Forgotten, when set, makes the turn a tombstone: the archive's record
	// that a turn of this id and seq was forgotten. Only ID, Seq,
	// ReceivedAt and Forgotten are set then.
	Forgotten *Forgotten `json:"forgotten,omitempty"`
	// Resurrect asks the archive to archive the turn again when its id was
	// forgotten (a re-sent forgotten id is otherwise a duplicate). It is
	// never stored.
	Resurrect bool `json:"-"`
}

// Limits bound what a client may send. Zero values mean the defaults.
type Limits struct {
	MaxContentBytes int // longest content of one turn, in bytes
	MaxFieldBytes   int // longest id, namespace, session or speaker, in bytes
	MaxMetaBytes    int // largest meta object, in bytes
	MaxBatch        int // most turns in one request
}

// Default limits.
const (
	DefaultMaxContentBytes = 256 << 10
	DefaultMaxFieldBytes   = 256
	DefaultMaxMetaBytes    = 64 << 10
	DefaultMaxBatch        = 10000
)

// WithDefaults returns l with zero fields replaced by the defaults.
func (l Limits) WithDefaults() Limits {
	if l.MaxContentBytes <= 0 {
		l.MaxContentBytes = DefaultMaxContentBytes
	}
	if l.MaxFieldBytes <= 0 {
		l.MaxFieldBytes = DefaultMaxFieldBytes
	}
	if l.MaxMetaBytes <= 0 {
		l.MaxMetaBytes = DefaultMaxMetaBytes
	}
	if l.MaxBatch <= 0 {
		l.MaxBatch = DefaultMaxBatch
	}
	return l
}

// TurnInput is a turn as a client sends it (HTTP body or a line of an ingest
// file). Turn validates it and fills in the defaults.
type TurnInput struct {
	ID        string          `json:"id,omitempty"`
	Namespace string          `json:"namespace,omitempty"`
	Session   string          `json:"session"`
	Role      string          `json:"role,omitempty"`
	Speaker   string          `json:"speaker,omitempty"`
	Content   string          `json:"content"`
	TS        string          `json:"ts,omitempty"`
	Meta      json.RawMessage `json:"meta,omitempty"`
	// Resurrect archives the turn again although its id was forgotten.
	Resurrect bool `json:"resurrect,omitempty"`
}

// TextField is one of a turn's text fields, by its JSON name.
type TextField struct {
	Name, Value string
	Required    bool // it may not be empty
}

// NameFields returns the fields that name a turn and its place (id,
// namespace, session, speaker), the ones every writer checks alike.
// An array, not a slice: the archive checks every line it reads with it.
func (t *Turn) NameFields() [4]TextField {
	return [4]TextField{
		{"id", t.ID, false},
		{"namespace", t.Namespace, true},
		{"session", t.Session, true},
		{"speaker", t.Speaker, false},
	}
}

// Turn validates in and returns the turn to archive. now is used when no
// timestamp is given. Errors are *Error with code EINVALID (ETOOLARGE for
// content over the limit) whose Field is prefix + the field's name, so a
// batch can say "turns[3].session".
func (in TurnInput) Turn(prefix string, now time.Time, lim Limits) (Turn, error) {
	lim = lim.WithDefaults()
	t := Turn{
		ID:        in.ID,
		Namespace: in.Namespace,
		Session:   in.Session,
		Role:      Role(in.Role),
		Speaker:   in.Speaker,
		Content:   in.Content,
		Resurrect: in.Resurrect,
	}
	if t.Namespace == "" {
		t.Namespace = DefaultNamespace
	}
	if t.Role == "" {
		t.Role = RoleUser
	}
	for _, f := range t.NameFields() {
		if err := checkName(prefix+f.Name, f.Value, f.Required, lim.MaxFieldBytes); err != nil {
			return Turn{}, err
		}
	}
	if p := NamespaceProblem(t.Namespace); p != "" {
		return Turn{}, FieldError(prefix+"namespace", "namespace %q cannot be written to: %s", t.Namespace, p)
	}
	if !t.Role.Valid() {
		return Turn{}, FieldError(prefix+"role", "unknown role %q (want user, assistant, system or tool)", in.Role)
	}
	if strings.TrimSpace(t.Content) == "" {
		return Turn{}, FieldError(prefix+"content", "content is required and must not be blank")
	}
	if !utf8.ValidString(t.Content) {
		return Turn{}, FieldError(prefix+"content", "content is not valid UTF-8")
	}
	if len(t.Content) > lim.MaxContentBytes {
		return Turn{}, &Error{Code: ETOOLARGE, Field: prefix + "content",
			Message: fmt.Sprintf("content is %d bytes, over the limit of %d", len(t.Content), lim.MaxContentBytes)}
	}
	if in.TS == "" {
		t.TS = now.UTC()
	} else {
		ts, err := time.Parse(time.RFC3339Nano, in.TS)
		if err != nil {
			return Turn{}, FieldError(prefix+"ts", "timestamp %q is not RFC 3339 (for example 2026-05-01T14:03:00Z)", in.TS)
		}
		if !InTimeRange(ts) {
			return Turn{}, OutOfRange(prefix+"ts", fmt.Sprintf("timestamp %q", in.TS))
		}
		t.TS = ts.UTC()
	}
	meta, err := NormalizeMeta(in.Meta, lim.MaxMetaBytes)
	if err != nil {
		err.Field = prefix + "meta"
		return Turn{}, err
	}
	t.Meta = meta
	return t, nil
}

// NormalizeMeta checks that raw is absent, null or a JSON object no larger
// than max bytes, and returns it compacted (nil when absent or null).
func NormalizeMeta(raw json.RawMessage, max int) (json.RawMessage, *Error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] != '{' {
		return nil, &Error{Code: EINVALID, Message: "meta must be a JSON object"}
	}
	if !utf8.Valid(raw) {
		return nil, &Error{Code: EINVALID, Message: "meta is not valid UTF-8"}
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, &Error{Code: EINVALID, Message: "meta is not valid JSON"}
	}
	if max > 0 && buf.Len() > max {
		return nil, &Error{Code: ETOOLARGE, Message: fmt.Sprintf("meta is %d bytes, over the limit of %d", buf.Len(), max)}
	}
	return json.RawMessage(buf.Bytes()), nil
}

// checkName validates a short identifier-like field: valid UTF-8, no control
// characters, no surrounding white space, at most max bytes.
func checkName(field, v string, required bool, max int) error {
	if v == "" {
		if required {
			return FieldError(field, "%s is required", fieldBase(field))
		}
		return nil
	}
	if !utf8.ValidString(v) {
		return FieldError(field, "not valid UTF-8")
	}
	if len(v) > max {
		return &Error{Code: ETOOLARGE, Field: field, Message: fmt.Sprintf("%d bytes, over the limit of %d", len(v), max)}
	}
	if strings.TrimSpace(v) != v {
		return FieldError(field, "must not begin or end with white space")
	}
	for _, r := range v {
		if unicode.IsControl(r) {
			return FieldError(field, "must not contain control characters")
		}
	}
	return nil
}

func fieldBase(field string) string {
	if i := strings.LastIndexByte(field, '.'); i >= 0 {
		return field[i+1:]
	}
	return field
}

// EmbedText is the text embedded for a turn: the speaker's name, when known,
// before the content, because questions name people. The pipeline embeds
// stored turns this way and deep recall its candidates.
func (t Turn) EmbedText() string {
	if t.Speaker == "" {
		return t.Content
	}
	return t.Speaker + ": " + t.Content
}
