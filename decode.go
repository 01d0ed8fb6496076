package engram

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// turnFields maps each JSON field of a TurnInput to the place it decodes into.
func turnFields(in *TurnInput) map[string]any {
	return map[string]any{
		"id":        &in.ID,
		"namespace": &in.Namespace,
		"session":   &in.Session,
		"role":      &in.Role,
		"speaker":   &in.Speaker,
		"content":   &in.Content,
		"ts":        &in.TS,
		"meta":      &in.Meta,
		"resurrect": &in.Resurrect,
	}
}

// DecodeTurnInput decodes one turn object strictly: the body must be a JSON
// object, unknown fields are refused, and each field must have the right
// type. Errors are EINVALID and name the field as prefix + name.
func DecodeTurnInput(raw []byte, prefix string) (TurnInput, error) {
	var in TurnInput
	if !utf8.Valid(raw) {
		return in, FieldError(strings.TrimSuffix(prefix, ".")+orBody(prefix), "not valid UTF-8")
	}
	obj, err := decodeObject(raw, strings.TrimSuffix(prefix, "."))
	if err != nil {
		return in, err
	}
	fields := turnFields(&in)
	for _, k := range sortedKeys(obj) {
		dst, ok := fields[k]
		if !ok {
			return in, FieldError(prefix+k, "unknown field %q (known: id, namespace, session, role, speaker, content, ts, meta, resurrect)", k)
		}
		v := obj[k]
		if k == "meta" {
			in.Meta = v
			continue
		}
		if string(v) == "null" {
			continue
		}
		if err := json.Unmarshal(v, dst); err != nil {
			if k == "resurrect" {
				return in, FieldError(prefix+k, "must be true or false")
			}
			return in, FieldError(prefix+k, "must be a string")
		}
	}
	return in, nil
}

// DecodeTurnInputs decodes a POST /v1/turns body: one turn object, or
// {"turns": [...]}. body must already be known to be valid UTF-8 or not: it
// is checked here too.
func DecodeTurnInputs(body []byte) ([]TurnInput, []string, error) {
	if !utf8.Valid(body) {
		return nil, nil, FieldError("body", "request body is not valid UTF-8")
	}
	obj, err := decodeObject(body, "body")
	if err != nil {
		return nil, nil, err
	}
	raw, batch := obj["turns"]
	if !batch {
		in, err := DecodeTurnInput(body, "")
		if err != nil {
			return nil, nil, err
		}
		return []TurnInput{in}, []string{""}, nil
	}
	if len(obj) > 1 {
		for _, k := range sortedKeys(obj) {
			if k != "turns" {
				return nil, nil, FieldError(k, "a batch body holds only \"turns\"; put %q inside each turn", k)
			}
		}
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, nil, FieldError("turns", "must be an array of turn objects")
	}
	if len(items) == 0 {
		return nil, nil, FieldError("turns", "at least one turn is required")
	}
	ins := make([]TurnInput, len(items))
	prefixes := make([]string, len(items))
	for i, item := range items {
		prefixes[i] = fmt.Sprintf("turns[%d].", i)
		in, err := DecodeTurnInput(item, prefixes[i])
		if err != nil {
			return nil, nil, err
		}
		ins[i] = in
	}
	return ins, prefixes, nil
}

func decodeObject(raw []byte, field string) (map[string]json.RawMessage, error) {
	if field == "" {
		field = "body"
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, FieldError(field, "is empty; expected a JSON object")
	}
	if raw[0] != '{' {
		return nil, FieldError(field, "must be a JSON object")
	}
	var obj map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&obj); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, FieldError(field, "malformed JSON at byte %d", se.Offset)
		}
		return nil, FieldError(field, "malformed JSON")
	}
	if dec.More() {
		return nil, FieldError(field, "unexpected data after the JSON object")
	}
	return obj, nil
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func orBody(prefix string) string {
	if prefix == "" {
		return "body"
	}
	return ""
}
