package engram

import (
	"bytes"
	"encoding/json"
	"strings"
)

// RedactSpans returns t with every occurrence of each span replaced by
// marker in its content, its speaker and every string value of its meta,
// and how many occurrences it replaced. The spans are found in one pass
// (see Spans: where two overlap, the longer one that starts first is
// replaced), each as given (case matters). The meta's keys, numbers and
// layout stay byte for byte, so that a meta without a span comes back as
// it was (the same slice) and one with a span differs only in the values
// that held it.
func (t Turn) RedactSpans(spans []string, marker string) (Turn, int) {
	return t.RedactWith(NewSpans(spans), marker)
}

// RedactWith is RedactSpans with the spans' matcher made once, for many
// turns.
func (t Turn) RedactWith(m *Spans, marker string) (Turn, int) {
	n := 0
	red := func(s string) string {
		s, c := m.Replace(s, marker)
		n += c
		return s
	}
	t.Content = red(t.Content)
	t.Speaker = red(t.Speaker)
	t.Meta = mapJSONStrings(t.Meta, red)
	return t, n
}

// Unredactable returns the fields of t that hold a span of m where a
// redaction does not reach (RedactWith replaces none there): "id",
// "namespace", "session", "meta keys". Only a forget removes a span from
// them: the id is what a re-send and the layers name the turn by, the
// namespace and the session what it is filed under, and a meta key is
// kept byte for byte. nil for a tombstone or when none holds one.
func (t Turn) Unredactable(m *Spans) []string {
	if t.IsTombstone() {
		return nil
	}
	var out []string
	for _, f := range []struct{ name, value string }{{"id", t.ID}, {"namespace", t.Namespace}, {"session", t.Session}} {
		if m.Contains(f.value) {
			out = append(out, f.name)
		}
	}
	if metaKeysHold(t.Meta, m) {
		out = append(out, "meta keys")
	}
	return out
}

// metaKeysHold reports whether a key of an object in raw, a JSON value,
// holds a span of m.
func metaKeysHold(raw json.RawMessage, m *Spans) bool {
	if len(raw) == 0 {
		return false
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	var walk func(v any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if m.Contains(k) || walk(x) {
					return true
				}
			}
		case []any:
			for _, x := range v {
				if walk(x) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}

// mapJSONStrings returns raw, a JSON value, with every string value (not
// an object's keys) replaced by what fn makes of it; raw itself when fn
// changes none, or when raw is not JSON.
func mapJSONStrings(raw json.RawMessage, fn func(string) string) json.RawMessage {
	var out []byte
	done := 0 // raw[:done] is in out
	for i := 0; i < len(raw); i++ {
		if raw[i] != '"' {
			continue
		}
		end := i + 1
		for end < len(raw) && raw[end] != '"' {
			if raw[end] == '\\' {
				end++
			}
			end++
		}
		if end >= len(raw) {
			return raw
		}
		lit := raw[i : end+1]
		next := end + 1
		for next < len(raw) && strings.IndexByte(" \t\r\n", raw[next]) >= 0 {
			next++
		}
		if next < len(raw) && raw[next] == ':' {
			i = end // a key
			continue
		}
		var s string
		if err := json.Unmarshal(lit, &s); err != nil {
			return raw
		}
		if r := fn(s); r != s {
			out = append(out, raw[done:i]...)
			out = append(out, encodeJSONString(r)...)
			done = end + 1
		}
		i = end
	}
	if out == nil {
		return raw
	}
	return append(out, raw[done:]...)
}

// encodeJSONString is s as a JSON string, with <, > and & as they are (the
// meta of a turn is stored as its client sent it).
func encodeJSONString(s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// RemovedSpans returns the spans whose replacement by marker makes before
// into after, reading after's text between markers in before from left to
// right; false when after is not before with spans replaced by marker. It
// is RedactSpans read backwards: what a server that holds the turn as it
// was learns of a redaction another made, from the turn as it is now.
func RemovedSpans(before, after, marker string) ([]string, bool) {
	if before == after {
		return nil, true
	}
	if marker == "" {
		return nil, false
	}
	parts := strings.Split(after, marker)
	rest, ok := strings.CutPrefix(before, parts[0])
	if !ok || len(parts) < 2 {
		return nil, false
	}
	var spans []string
	for i, p := range parts[1:] {
		var at int
		if i == len(parts)-2 {
			// The last part ends the text.
			if !strings.HasSuffix(rest, p) || len(rest) == len(p) {
				return nil, false
			}
			at = len(rest) - len(p)
		} else {
			// A span is never empty: look past its first byte.
			j := strings.Index(rest[min(1, len(rest)):], p)
			if j < 0 || len(rest) == 0 {
				return nil, false
			}
			at = j + 1
		}
		spans = append(spans, rest[:at])
		rest = rest[at+len(p):]
	}
	return spans, true
}
