package archive

import (
	"encoding/json"
	"time"

	"github.com/engram-dev/engram"
)

// decodeCanonical reads a turn's line body (the line without its crc
// field) of exactly the shape appendLine writes: the fields of engram.Turn
// in their order, speaker and meta optional, nothing else. It reports false
// for anything else (a redaction, a tombstone, a hand-edited line, a
// string with a control character, a number json would refuse), which
// DecodeLine then reads with encoding/json, so that both read a line
// alike. Reading every line of the archive is most of the time of a start;
// this shape is nearly all of them, and reading it directly takes a
// fraction of encoding/json's time.
func decodeCanonical(b []byte) (t engram.Turn, ok bool) {
	r := canonReader{b: b}
	if !r.lit(`{"id":`) || !r.str(&t.ID) || !r.lit(`,"seq":`) || !r.int(&t.Seq) ||
		!r.lit(`,"namespace":`) || !r.str(&t.Namespace) || !r.lit(`,"session":`) || !r.str(&t.Session) {
		return t, false
	}
	var role string
	if !r.lit(`,"role":`) || !r.str(&role) {
		return t, false
	}
	t.Role = engram.Role(role)
	if r.lit(`,"speaker":`) && !r.str(&t.Speaker) {
		return t, false
	}
	if !r.lit(`,"content":`) || !r.str(&t.Content) || !r.lit(`,"ts":`) || !r.time(&t.TS) {
		return t, false
	}
	if r.lit(`,"meta":`) && !r.object(&t.Meta) {
		return t, false
	}
	if !r.lit(`,"received_at":`) || !r.time(&t.ReceivedAt) {
		return t, false
	}
	return t, r.i == len(r.b)
}

// canonReader reads the tokens of a canonical line from b at i.
type canonReader struct {
	b []byte
	i int
}

// lit consumes s if the input continues with it.
func (r *canonReader) lit(s string) bool {
	if len(r.b)-r.i < len(s) || string(r.b[r.i:r.i+len(s)]) != s {
		return false
	}
	r.i += len(s)
	return true
}

// span returns the end of the JSON string starting at r.i, and whether it
// holds an escape; false for a control character or no closing quote.
func (r *canonReader) span() (end int, escaped, ok bool) {
	if r.i >= len(r.b) || r.b[r.i] != '"' {
		return 0, false, false
	}
	for j := r.i + 1; j < len(r.b); j++ {
		switch c := r.b[j]; {
		case c == '"':
			return j + 1, escaped, true
		case c == '\\':
			escaped = true
			j++
		case c < 0x20:
			return 0, false, false
		}
	}
	return 0, false, false
}

func (r *canonReader) str(dst *string) bool {
	end, escaped, ok := r.span()
	if !ok {
		return false
	}
	if escaped {
		if json.Unmarshal(r.b[r.i:end], dst) != nil {
			return false
		}
	} else {
		*dst = string(r.b[r.i+1 : end-1])
	}
	r.i = end
	return true
}

// int reads a positive integer as encoding/json writes it: no sign, no
// leading zero, no fraction or exponent.
func (r *canonReader) int(dst *int64) bool {
	j, v := r.i, int64(0)
	for ; j < len(r.b) && r.b[j] >= '0' && r.b[j] <= '9'; j++ {
		if j-r.i >= 18 {
			return false
		}
		v = v*10 + int64(r.b[j]-'0')
	}
	if j == r.i || (r.b[r.i] == '0' && j-r.i > 1) || (j < len(r.b) && (r.b[j] == '.' || r.b[j] == 'e' || r.b[j] == 'E')) {
		return false
	}
	*dst, r.i = v, j
	return true
}

// time reads an RFC 3339 string as time.Time's UnmarshalJSON does (it is
// what encoding/json calls).
func (r *canonReader) time(dst *time.Time) bool {
	end, escaped, ok := r.span()
	if !ok || escaped || dst.UnmarshalJSON(r.b[r.i:end]) != nil {
		return false
	}
	r.i = end
	return true
}

// object reads a JSON object whole, checked as encoding/json checks a
// json.RawMessage.
func (r *canonReader) object(dst *json.RawMessage) bool {
	if r.i >= len(r.b) || r.b[r.i] != '{' {
		return false
	}
	depth, j := 0, r.i
	for ; j < len(r.b); j++ {
		switch r.b[j] {
		case '"':
			for j++; j < len(r.b) && r.b[j] != '"'; j++ {
				if r.b[j] == '\\' {
					j++
				}
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		}
		if depth == 0 {
			break
		}
	}
	if j >= len(r.b) || !json.Valid(r.b[r.i:j+1]) {
		return false
	}
	*dst = append(json.RawMessage(nil), r.b[r.i:j+1]...)
	r.i = j + 1
	return true
}
