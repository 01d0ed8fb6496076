package archive

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"time"
	"unicode/utf8"

	"github.com/engram-dev/engram"
)

// Errors DecodeLine returns, wrapped with the detail of what is wrong.
var (
	// ErrChecksum means the line's bytes do not match its crc: the line was
	// damaged or edited after it was written.
	ErrChecksum = errors.New("archive: checksum mismatch")
	// ErrMalformed means the line is not a well-formed archive line (torn,
	// not JSON, not UTF-8, or a turn that misses a required field).
	ErrMalformed = errors.New("archive: malformed line")
)

// castagnoli is the CRC-32C table. CRC-32C rather than IEEE because CPUs
// compute it in hardware (SSE 4.2, ARMv8), so checking every line at Open
// costs little.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

const (
	crcPrefix = `,"crc":"`
	// crcSuffixLen is the length of `,"crc":"xxxxxxxx"}`.
	crcSuffixLen = len(crcPrefix) + 8 + len(`"}`)
)

// EncodeLine returns the archive line of t, ending in '\n': the JSON object
// of the turn with its fields in the order of engram.Turn, times in
// RFC 3339 UTC, and last a "crc" field holding the lowercase hex CRC-32C of
// every byte before `,"crc":"`. Meta is written compacted.
//
// EncodeLine returns an error wrapping ErrMalformed for a turn that
// DecodeLine would reject (no id, seq <= 0, a missing field, an unknown
// role, invalid UTF-8, meta that is not a JSON object, a time outside the
// years 0 to 9999), so that every line written can be read back.
func EncodeLine(t engram.Turn) ([]byte, error) {
	return appendLine(nil, t)
}

// appendLine appends the line of t to dst.
func appendLine(dst []byte, t engram.Turn) ([]byte, error) {
	if field, why := checkIdentity(&t); field != "" {
		return dst, fmt.Errorf("%w: %s %s", ErrMalformed, field, why)
	}
	if t.Forgotten != nil {
		return appendTombstone(dst, t)
	}
	meta, merr := engram.NormalizeMeta(t.Meta, 0)
	if merr != nil {
		return dst, fmt.Errorf("%w: meta: %s", ErrMalformed, merr.Message)
	}
	t.Meta = meta
	t.TS, t.ReceivedAt = t.TS.UTC(), t.ReceivedAt.UTC()
	if field, why := checkFields(&t); field != "" {
		return dst, fmt.Errorf("%w: %s %s", ErrMalformed, field, why)
	}

	start := len(dst)
	buf := bytes.NewBuffer(dst)
	enc := json.NewEncoder(buf)
	// Keep <, > and & as they are: the archive is read with cat and jq,
	// never embedded in HTML.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&t); err != nil {
		return dst, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return sealLine(buf.Bytes(), start), nil
}

// sealLine drops the "}\n" json.Encoder ended b with and appends the crc
// of b[start:] and the line end.
func sealLine(b []byte, start int) []byte {
	b = b[:len(b)-2]
	sum := crc32.Checksum(b[start:], castagnoli)
	b = append(b, crcPrefix...)
	b = appendHex8(b, sum)
	return append(b, '"', '}', '\n')
}

// tombstoneLine is the line of a forgotten turn: its id, seq and receive
// time, and when and why it was forgotten. Nothing the turn said is left.
type tombstoneLine struct {
	ID         string           `json:"id"`
	Seq        int64            `json:"seq"`
	ReceivedAt time.Time        `json:"received_at"`
	Forgotten  engram.Forgotten `json:"forgotten"`
}

// Tombstone returns the tombstone of t: only its id, seq and receive time,
// and f.
func Tombstone(t engram.Turn, f engram.Forgotten) engram.Turn {
	f.At = f.At.UTC()
	return engram.Turn{ID: t.ID, Seq: t.Seq, ReceivedAt: t.ReceivedAt.UTC(), Forgotten: &f}
}

func appendTombstone(dst []byte, t engram.Turn) ([]byte, error) {
	if field, why := checkTombstone(&t); field != "" {
		return dst, fmt.Errorf("%w: %s %s", ErrMalformed, field, why)
	}
	start := len(dst)
	buf := bytes.NewBuffer(dst)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	line := tombstoneLine{ID: t.ID, Seq: t.Seq, ReceivedAt: t.ReceivedAt.UTC(), Forgotten: *t.Forgotten}
	line.Forgotten.At = line.Forgotten.At.UTC()
	if err := enc.Encode(&line); err != nil {
		return dst, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return sealLine(buf.Bytes(), start), nil
}

// checkTombstone checks that a tombstone holds nothing of the turn it
// replaces, and times a line can hold.
func checkTombstone(t *engram.Turn) (field, why string) {
	switch {
	case t.Namespace != "" || t.Session != "" || t.Speaker != "" || t.Content != "" || t.Role != "" ||
		len(t.Meta) > 0 || !t.TS.IsZero() || t.Redacted != nil:
		return "forgotten", "is set on a line that still holds the turn"
	case !utf8.ValidString(t.Forgotten.Reason):
		return "forgotten", "reason is not valid UTF-8"
	}
	if y := t.Forgotten.At.Year(); y < 0 || y > 9999 {
		return "forgotten", "at is outside the years 0 to 9999"
	}
	if y := t.ReceivedAt.Year(); y < 0 || y > 9999 {
		return "received_at", "is outside the years 0 to 9999"
	}
	return "", ""
}

// DecodeLine parses one archive line, with or without its trailing '\n'.
// It returns an error wrapping ErrChecksum when the crc does not match the
// bytes, and one wrapping ErrMalformed when the crc suffix is missing (a
// torn line), the line is not valid UTF-8 or JSON, or the turn lacks an id,
// namespace, session or content, has seq <= 0, an unknown role, or meta
// that is not a JSON object. It never panics.
func DecodeLine(line []byte) (engram.Turn, error) {
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
	}
	n := len(line)
	want, err := lineCRC(line)
	if err != nil {
		return engram.Turn{}, err
	}
	if got := crc32.Checksum(line[:n-crcSuffixLen], castagnoli); got != want {
		return engram.Turn{}, fmt.Errorf("%w: the line's bytes have crc %08x, the line says %08x", ErrChecksum, got, want)
	}
	// encoding/json would replace invalid UTF-8 with U+FFFD without a word.
	if !utf8.Valid(line) {
		return engram.Turn{}, fmt.Errorf("%w: not valid UTF-8", ErrMalformed)
	}
	t, ok := decodeCanonical(line[:n-crcSuffixLen])
	if !ok {
		if err := json.Unmarshal(line, &t); err != nil {
			return engram.Turn{}, fmt.Errorf("%w: %v", ErrMalformed, err)
		}
	}
	t.TS, t.ReceivedAt = t.TS.UTC(), t.ReceivedAt.UTC()
	if string(t.Meta) == "null" {
		t.Meta = nil
	}
	if field, why := checkIdentity(&t); field != "" {
		return engram.Turn{}, fmt.Errorf("%w: %s %s", ErrMalformed, field, why)
	}
	if t.Forgotten != nil {
		t.Forgotten.At = t.Forgotten.At.UTC()
		if field, why := checkTombstone(&t); field != "" {
			return engram.Turn{}, fmt.Errorf("%w: %s %s", ErrMalformed, field, why)
		}
		return t, nil
	}
	if field, why := checkFields(&t); field != "" {
		return engram.Turn{}, fmt.Errorf("%w: %s %s", ErrMalformed, field, why)
	}
	return t, nil
}

// checkIdentity checks the fields the archive assigns.
func checkIdentity(t *engram.Turn) (field, why string) {
	switch {
	case t.ID == "":
		return "id", "is missing"
	case t.Seq <= 0:
		return "seq", "must be positive"
	}
	return "", ""
}

// checkFields checks what every line must hold apart from id and seq, and
// returns the JSON name of the first bad field and why it is bad. Times are
// expected in UTC and meta compacted or nil. It holds the rules shared by
// Append (before it assigns id and seq), EncodeLine and DecodeLine, so that
// whatever is appended can be encoded, and whatever is encoded decoded.
func checkFields(t *engram.Turn) (field, why string) {
	for _, f := range t.NameFields() {
		if why := checkText(f); why != "" {
			return f.Name, why
		}
	}
	if why := checkText(engram.TextField{Name: "content", Value: t.Content, Required: true}); why != "" {
		return "content", why
	}
	if !t.Role.Valid() {
		return "role", fmt.Sprintf("%q is not a known role (user, assistant, system or tool)", t.Role)
	}
	if len(t.Meta) > 0 && t.Meta[0] != '{' {
		return "meta", "is not a JSON object"
	}
	// RFC 3339 has four-digit years; encoding/json refuses any other.
	if y := t.TS.Year(); y < 0 || y > 9999 {
		return "ts", "is outside the years 0 to 9999"
	}
	if y := t.ReceivedAt.Year(); y < 0 || y > 9999 {
		return "received_at", "is outside the years 0 to 9999"
	}
	return "", ""
}

// checkText says why a text field is bad, "" when it is not.
func checkText(f engram.TextField) string {
	switch {
	case f.Required && f.Value == "":
		return "is missing"
	case !utf8.ValidString(f.Value):
		return "is not valid UTF-8"
	}
	return ""
}

const hexDigits = "0123456789abcdef"

func appendHex8(b []byte, v uint32) []byte {
	for shift := 28; shift >= 0; shift -= 4 {
		b = append(b, hexDigits[v>>uint(shift)&0xf])
	}
	return b
}

// LineCRC returns the crc a line (without its '\n') says its bytes have,
// and false when it does not end in a well-formed crc field: what a store
// of archive lines keeps beside each one.
func LineCRC(line []byte) (uint32, bool) {
	crc, err := lineCRC(line)
	return crc, err == nil
}

// lineCRC reads the crc field a line (without its '\n') ends with.
func lineCRC(line []byte) (uint32, error) {
	n := len(line)
	if n < crcSuffixLen+2 || string(line[n-crcSuffixLen:n-crcSuffixLen+len(crcPrefix)]) != crcPrefix ||
		line[n-2] != '"' || line[n-1] != '}' {
		return 0, fmt.Errorf("%w: the line does not end in a crc field", ErrMalformed)
	}
	crc, ok := parseHex8(line[n-10 : n-2])
	if !ok {
		return 0, fmt.Errorf("%w: the crc is not 8 lowercase hex digits", ErrMalformed)
	}
	return crc, nil
}

// parseHex8 parses exactly 8 lowercase hex digits; uppercase is refused so
// that every crc has one spelling.
func parseHex8(b []byte) (uint32, bool) {
	if len(b) != 8 {
		return 0, false
	}
	var v uint32
	for _, c := range b {
		switch {
		case '0' <= c && c <= '9':
			v = v<<4 | uint32(c-'0')
		case 'a' <= c && c <= 'f':
			v = v<<4 | uint32(c-'a'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

// dayOf returns the day (YYYY-MM-DD) a receive time files a turn under.
func dayOf(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// peekSeq returns the seq of a line as appendLine and appendTombstone write
// it ({"id":"...","seq":N,...), without decoding or checking the rest, and
// false for a line of another shape (DecodeLine reads those). Within the
// id's string every quote is escaped, so the first `","seq":` ends the id.
func peekSeq(line []byte) (int64, bool) {
	const start, key = `{"id":"`, `","seq":`
	if !bytes.HasPrefix(line, []byte(start)) {
		return 0, false
	}
	i := bytes.Index(line[len(start):], []byte(key))
	if i < 0 {
		return 0, false
	}
	rest := line[len(start)+i+len(key):]
	var seq int64
	n := 0
	for ; n < len(rest) && rest[n] >= '0' && rest[n] <= '9'; n++ {
		if n >= 18 { // more digits than a seq has
			return 0, false
		}
		seq = seq*10 + int64(rest[n]-'0')
	}
	if n == 0 || n == len(rest) || (rest[n] != ',' && rest[n] != '}') {
		return 0, false
	}
	return seq, true
}
