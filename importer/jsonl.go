package importer

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/engram-dev/engram"
)

// JSONLIDPrefix starts the id of every turn imported from JSON Lines.
const JSONLIDPrefix = "jsonl-"

// MappingFields are the turn fields a Mapping can fill, in the order
// --map lists them.
var MappingFields = []string{"content", "ts", "session", "role", "speaker", "id", "namespace", "meta"}

// Mapping says where in each JSON line the fields of a turn are, as gjson
// paths (https://github.com/tidwall/gjson/blob/master/SYNTAX.md). Content
// is required; an empty path leaves the field to its default.
type Mapping struct {
	Content, TS, Session, Role, Speaker, ID, Namespace, Meta string
}

func (m *Mapping) field(name string) *string {
	switch name {
	case "content":
		return &m.Content
	case "ts":
		return &m.TS
	case "session":
		return &m.Session
	case "role":
		return &m.Role
	case "speaker":
		return &m.Speaker
	case "id":
		return &m.ID
	case "namespace":
		return &m.Namespace
	case "meta":
		return &m.Meta
	}
	return nil
}

// ErrNoContentPath is returned by ParseMapping for a mapping without content.
var ErrNoContentPath = errors.New("the mapping needs content=PATH")

// Parse parses "content=PATH,ts=PATH,...". A comma splits the list only
// where a name and "=" follow it, so paths may hold commas (gjson's
// multipaths "{a,b}"). It may be called again with more of the list: fields
// of s replace those already set in m.
//
// Errors: an unknown or repeated field, an empty path, or a path that is
// not valid gjson syntax; ErrNoContentPath when, after s, content is unset.
func (m *Mapping) Parse(s string) error {
	seen := make(map[string]bool)
	for _, item := range splitMapping(s) {
		name, path, ok := strings.Cut(item, "=")
		name = strings.TrimSpace(name)
		dst := m.field(name)
		switch {
		case !ok || dst == nil:
			return fmt.Errorf("%q: want FIELD=PATH with FIELD one of %s", item, strings.Join(MappingFields, ", "))
		case seen[name]:
			return fmt.Errorf("%s is mapped twice", name)
		case strings.TrimSpace(path) == "":
			return fmt.Errorf("%s: the path is empty", name)
		}
		seen[name] = true
		*dst = strings.TrimSpace(path)
	}
	if m.Content == "" {
		return ErrNoContentPath
	}
	return nil
}

// ParseMapping returns the Mapping that s describes (see Mapping.Parse).
func ParseMapping(s string) (Mapping, error) {
	var m Mapping
	err := m.Parse(s)
	return m, err
}

func splitMapping(s string) []string {
	var items []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] != ',' {
			continue
		}
		if startsField(strings.TrimLeft(s[i+1:], " ")) {
			items = append(items, s[start:i])
			start = i + 1
		}
	}
	return append(items, s[start:])
}

// startsField reports whether s starts with a name and "=" (not "=="), so a
// misspelt field is an error rather than a part of the path before it.
func startsField(s string) bool {
	i := 0
	for i < len(s) && (s[i] == '_' || 'a' <= s[i] && s[i] <= 'z' || 'A' <= s[i] && s[i] <= 'Z') {
		i++
	}
	return i > 0 && i < len(s) && s[i] == '=' && (i+1 == len(s) || s[i+1] != '=')
}

// String returns the mapping as Parse reads it.
func (m Mapping) String() string {
	var parts []string
	for _, f := range MappingFields {
		if p := *m.field(f); p != "" {
			parts = append(parts, f+"="+p)
		}
	}
	return strings.Join(parts, ",")
}

// JSONL turns lines of JSON into turns through a Mapping.
type JSONL struct {
	Map Mapping
	// Source names the file, for ids and the default session; its base
	// name is used, so the same file imports to the same ids from any folder.
	Source string
	// Namespace is used for lines whose namespace is unmapped or missing.
	Namespace string
}

// Line returns the turn of line number n (1-based), or why the line is not
// one. The turn's id is JSONLIDPrefix and the mapped id; without one, a hash
// of the source's base name, n and the content. Its session is the mapped
// one, else the source's base name. Unmapped or missing fields take the
// defaults of a turn (role user, ts now); a mapped role must be one that
// NormalizeRole knows.
func (j *JSONL) Line(n int, line []byte) (engram.TurnInput, error) {
	var in engram.TurnInput
	line = bytes.TrimSpace(line)
	if !gjson.ValidBytes(line) {
		return in, errors.New("not valid JSON")
	}
	base := filepath.Base(j.Source)
	get := func(path string) gjson.Result {
		if path == "" {
			return gjson.Result{}
		}
		return gjson.GetBytes(line, path)
	}
	c := get(j.Map.Content)
	if !c.Exists() || c.Type == gjson.Null {
		return in, fmt.Errorf("content: nothing at %q", j.Map.Content)
	}
	in.Content = text(c)
	if strings.TrimSpace(in.Content) == "" {
		return in, fmt.Errorf("content: %q is blank", j.Map.Content)
	}
	var err error
	if in.Session, err = str("session", get(j.Map.Session)); err != nil {
		return in, err
	}
	if in.Session == "" {
		in.Session = base
	}
	if in.Namespace, err = str("namespace", get(j.Map.Namespace)); err != nil {
		return in, err
	}
	if in.Namespace == "" {
		in.Namespace = j.Namespace
	}
	if in.Speaker, err = str("speaker", get(j.Map.Speaker)); err != nil {
		return in, err
	}
	if r := get(j.Map.Role); r.Exists() && r.Type != gjson.Null {
		role, ok := NormalizeRole(r.String())
		if !ok {
			return in, fmt.Errorf("role: unknown role %q (want user, assistant, system or tool, or a synonym such as human, ai, function)", r.String())
		}
		in.Role = string(role)
	}
	if t := get(j.Map.TS); t.Exists() && t.Type != gjson.Null {
		ts, err := ParseTime(t)
		if err != nil {
			return in, fmt.Errorf("ts: %w", err)
		}
		in.TS = ts.Format(time.RFC3339Nano)
	}
	id, err := str("id", get(j.Map.ID))
	if err != nil {
		return in, err
	}
	if id != "" {
		in.ID = JSONLIDPrefix + id
	} else {
		h := sha256.New()
		fmt.Fprintf(h, "%s\x00%d\x00%s", base, n, in.Content)
		in.ID = JSONLIDPrefix + hex.EncodeToString(h.Sum(nil))[:32]
	}
	if m := get(j.Map.Meta); m.Exists() && m.Type != gjson.Null {
		if !m.IsObject() {
			return in, fmt.Errorf("meta: %q is not an object", j.Map.Meta)
		}
		in.Meta = json.RawMessage(m.Raw)
	}
	return in, nil
}

// text is the content in r: a string as it is, the elements of an array (as
// a path like "messages.#.text" yields) one per line, anything else as JSON.
func text(r gjson.Result) string {
	switch {
	case r.Type == gjson.String:
		return r.Str
	case r.IsArray():
		var parts []string
		for _, e := range r.Array() {
			if e.Type == gjson.Null {
				continue
			}
			if s := text(e); strings.TrimSpace(s) != "" {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, "\n")
	}
	return r.Raw
}

// str is a short field: a string, or a number as written.
func str(field string, r gjson.Result) (string, error) {
	switch r.Type {
	case gjson.Null:
		return "", nil
	case gjson.String:
		return r.Str, nil
	case gjson.Number:
		return r.Raw, nil
	}
	return "", fmt.Errorf("%s: want a string or a number, not %s", field, r.Raw)
}

// timeLayouts are the layouts ParseTime tries after RFC 3339; those
// without a zone are read as UTC.
var timeLayouts = []string{
	"2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999 -0700",
	"2006-01-02 15:04:05.999999999 -0700 MST",
	"2006-01-02 15:04:05.999999999 MST",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04",
	"2006-01-02 15:04",
	"2006-01-02",
	"2006/01/02 15:04:05.999999999",
	"2006/01/02",
	time.RFC1123Z,
	time.RFC1123,
	time.RFC850,
	time.RFC822Z,
	time.RFC822,
	time.UnixDate,
	time.RubyDate,
	time.ANSIC,
}

// ParseTime reads a timestamp: RFC 3339, one of a few common layouts, or
// a number (or a string of digits) of Unix seconds, milliseconds,
// microseconds or nanoseconds, told apart by size (numbers of seconds stop
// before 1e11, the year 5138).
func ParseTime(r gjson.Result) (time.Time, error) {
	switch r.Type {
	case gjson.Number:
		return unixTime(r.Raw)
	case gjson.String:
	default:
		return time.Time{}, fmt.Errorf("%s is not a time", r.Raw)
	}
	s := strings.TrimSpace(r.Str)
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return unixTime(s)
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a time (want RFC 3339, such as 2026-05-01T14:03:00Z, or Unix seconds or milliseconds)", s)
}

func unixTime(s string) (time.Time, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return time.Time{}, fmt.Errorf("%s is not a Unix time", s)
	}
	var scale float64
	switch {
	case f >= 1e17:
		scale = 1
	case f >= 1e14:
		scale = 1e3
	case f >= 1e11:
		scale = 1e6
	default:
		scale = 1e9
	}
	ns := f * scale
	if ns >= math.MaxInt64 {
		return time.Time{}, fmt.Errorf("%s is out of range", s)
	}
	if scale == 1 {
		// Integers this large lose digits as floats: read them exactly.
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return time.Unix(0, n).UTC(), nil
		}
	}
	// Round to microseconds: float seconds carry no more.
	return time.Unix(0, int64(math.Round(ns/1e3))*1e3).UTC(), nil
}

// Read reads the lines of r, and calls emit with each line's turn or
// with why it is not one (Err). Blank lines are passed over. It stops at the
// first error emit returns or that reading r returns. It returns the number
// of non-blank lines read.
func (j *JSONL) Read(r io.Reader, emit func(Record) error) (int, error) {
	return eachLine(r, emit, j.Line)
}
