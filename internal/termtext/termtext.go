// Package termtext shows text that clients stored (a turn's content, a
// memory, an id, a session, a document's path) on a terminal without the
// terminal acting on the control characters in it: ESC starts sequences
// that set the window's title, colours, links (OSC 8) or the clipboard
// (OSC 52 in some terminals), CR overwrites the line. Escape, Printf and
// Println show a control character as an escape instead; newline and tab
// pass, since output is laid out with them. JSON escapes the control
// characters encoding/json leaves raw.
package termtext

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"unicode/utf8"
)

// Escape returns s with each control character but newline and tab
// written as an escape: the C0 controls, DEL and the bytes that are not
// UTF-8 as \xHH, the C1 controls (U+0080 to U+009F) as \u00HH.
func Escape(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r <= 0x9f:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// needsEscape reports whether s holds a character Escape escapes.
func needsEscape(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size <= 1) || (r >= 0x80 && r <= 0x9f) {
			return true
		}
		i += size
	}
	return false
}

// Args returns a with its text (strings and string types, errors,
// byte slices) passed through Escape.
func Args(a []any) []any {
	out := make([]any, len(a))
	for i, v := range a {
		switch x := v.(type) {
		case error:
			out[i] = Escape(x.Error())
		case []byte:
			out[i] = Escape(string(x))
		case json.RawMessage:
			out[i] = Escape(string(x))
		default:
			if rv := reflect.ValueOf(v); rv.Kind() == reflect.String {
				out[i] = Escape(rv.String())
			} else {
				out[i] = v
			}
		}
	}
	return out
}

// Printf is fmt.Fprintf for a terminal: the text of the arguments is
// escaped as Escape does (the format is the program's own).
func Printf(w io.Writer, format string, a ...any) (int, error) {
	return fmt.Fprintf(w, format, Args(a)...)
}

// Println is fmt.Fprintln for a terminal, as Printf.
func Println(w io.Writer, a ...any) (int, error) {
	return fmt.Fprintln(w, Args(a)...)
}

// JSON escapes, in JSON that encoding/json wrote, the characters
// it leaves raw that a terminal acts on: DEL and the C1 controls. They can
// only be inside strings, where \u escapes mean the same.
func JSON(js []byte) []byte {
	if !bytes.ContainsFunc(js, func(r rune) bool { return r == 0x7f || (r >= 0x80 && r <= 0x9f) }) {
		return js
	}
	var b bytes.Buffer
	b.Grow(len(js) + 16)
	for i := 0; i < len(js); {
		r, size := utf8.DecodeRune(js[i:])
		if r == 0x7f || (r >= 0x80 && r <= 0x9f) {
			fmt.Fprintf(&b, `\u%04x`, r)
		} else {
			b.Write(js[i : i+size])
		}
		i += size
	}
	return b.Bytes()
}
