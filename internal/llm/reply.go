package llm

import (
	"bytes"
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

	"github.com/tidwall/gjson"

	"github.com/engram-dev/engram"
)

// Why a reply is not usable (ExtractError.Reason is the text of one).
var (
	ErrNoJSON     = errors.New("no JSON object in the reply")
	ErrTruncated  = errors.New("the reply was cut off before the first complete memory")
	ErrSyntax     = errors.New("the reply is not valid JSON")
	ErrNoMemories = errors.New("the reply holds no list of memories")
)

// ParseReply finds the memories in a model's reply and returns them with
// the repaired JSON they were read from. It tries the first few places where
// a JSON object or array starts (prose before the JSON, a code fence),
// repairs each (see repairJSON), and takes the first that holds a list of
// memories: the "memories" array, a top-level array, the first array of
// objects, or a single memory object. The error is that of the first place.
func ParseReply(s string) ([]gjson.Result, string, error) {
	first := ErrNoJSON
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
		return nil, ErrNoMemories
	}
	var out []gjson.Result
	for _, v := range list.Array() {
		if v.IsObject() {
			out = append(out, v)
		}
	}
	if len(out) == 0 && len(list.Array()) > 0 {
		return nil, ErrNoMemories // a list of something else
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
// top-level object) and closed; cut before any, it is ErrTruncated.
func repairJSON(s string) (string, error) {
	if s == "" || s[0] != '{' && s[0] != '[' {
		return "", ErrNoJSON
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
		return "", ErrTruncated
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
		return "", ErrSyntax
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

// Memories turns the model's items into memories of batch, dropping the
// unusable ones: an unknown type, an empty or overlong text, a turn number
// outside the batch (or missing, unless the batch has one turn).
// Importance is clamped to 0..1, a relation with an empty part is dropped,
// and its predicate made snake_case. valid_from, a date (2006-01-02) or a
// time (RFC 3339) no later than the turn, becomes the memory's ValidFrom;
// anything else leaves the turn's time there.
func Memories(items []gjson.Result, batch []*engram.Turn) []engram.Memory {
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
		ValidFrom:  validFrom(it.Get("valid_from"), t.TS),
		Sources:    []string{t.ID},
		Relation:   relation(it.Get("relation")),
	}, true
}

// validFrom reads a memory's valid_from: a date or an RFC 3339 time, not
// after the turn's time ts (a date of the turn's day counts); else ts.
func validFrom(v gjson.Result, ts time.Time) time.Time {
	if v.Type != gjson.String || ts.IsZero() {
		return ts
	}
	s := strings.TrimSpace(v.Str)
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		if t, err = time.Parse(time.RFC3339, s); err != nil {
			return ts
		}
	}
	if t = t.UTC(); t.After(ts) {
		return ts // a plan's date, or a mistake: the statement holds from when it was made
	}
	return t
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
		if s := clean(e, maxNameRunes); s != "" && !slices.Contains(out, s) && len(out) < MaxEntities {
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
		Predicate: SnakeCase(clean(v.Get("predicate"), maxNameRunes)),
		Object:    clean(v.Get("object"), maxNameRunes),
	}
	if r.Subject == "" || r.Predicate == "" || r.Object == "" {
		return nil
	}
	return r
}

// SnakeCase turns "Lives In", "lives-in" and "livesIn" into "lives_in".
func SnakeCase(s string) string {
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

// Excerpt returns the start of a reply, at most maxExcerpt bytes.
func Excerpt(s string) string {
	if len(s) <= maxExcerpt {
		return s
	}
	n := maxExcerpt
	for n > maxExcerpt-utf8.UTFMax && !utf8.RuneStart(s[n]) {
		n--
	}
	return strings.ToValidUTF8(s[:n], "\uFFFD") + "…"
}
