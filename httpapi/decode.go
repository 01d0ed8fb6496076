package httpapi

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/engram-dev/engram"
)

// field is a member of a JSON request body: its name, where its value
// decodes to, and what it must be (for the error: "a string", "true or
// false").
type field struct {
	name string
	dst  any
	want string
}

// bodyShape says what decodeBody accepts.
type bodyShape struct {
	like     string // an example body, for the error of one that is no object
	optional bool   // an empty body is the empty object
	fields   []field
}

// decodeBody decodes body, a JSON object, strictly: a member that is no
// field is refused with the names of the known ones, a value of the wrong
// type with what it must be, and null leaves a field as it was. Every error
// is EINVALID and names the member ("body" for the body as a whole); of
// several faults the first member in name order is reported.
func decodeBody(body []byte, shape bodyShape) error {
	if shape.optional && len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	if !utf8.Valid(body) {
		return engram.FieldError("body", "request body is not valid UTF-8")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil || obj == nil {
		return engram.FieldError("body", "must be a JSON object like %s", shape.like)
	}
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		i := slices.IndexFunc(shape.fields, func(f field) bool { return f.name == k })
		if i < 0 {
			names := make([]string, len(shape.fields))
			for j, f := range shape.fields {
				names[j] = f.name
			}
			return engram.FieldError(k, "unknown field %q (known: %s)", k, strings.Join(names, ", "))
		}
		v := obj[k]
		if string(v) == "null" {
			continue
		}
		if err := json.Unmarshal(v, shape.fields[i].dst); err != nil {
			return engram.FieldError(k, "must be %s", shape.fields[i].want)
		}
	}
	return nil
}
