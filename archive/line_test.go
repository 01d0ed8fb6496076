package archive_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
)

// fullTurn is a turn that uses every field.
func fullTurn() engram.Turn {
	return engram.Turn{
		ID:         "01JTURN0000000000000000001",
		Seq:        7,
		Namespace:  "work",
		Session:    "s-1",
		Role:       engram.RoleAssistant,
		Speaker:    "Ada",
		Content:    "a < b && c > d, \"quoted\", line\nbreak, 日本語 \u2028",
		TS:         time.Date(2026, 5, 1, 14, 3, 0, 0, time.FixedZone("CEST", 2*3600)),
		Meta:       json.RawMessage(`{"lang":"en","tags":["x","<y>"],"n":1.5}`),
		ReceivedAt: time.Date(2026, 5, 1, 12, 3, 0, 123456789, time.UTC),
	}
}

// lineWithCRC appends a valid crc to body, an object missing its final '}'.
func lineWithCRC(body string) []byte {
	return fmt.Appendf(nil, "%s,\"crc\":\"%08x\"}\n", body, crc32.Checksum([]byte(body), crc32.MakeTable(crc32.Castagnoli)))
}

func TestEncodeLine(t *testing.T) {
	line, err := archive.EncodeLine(fullTurn())
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"01JTURN0000000000000000001","seq":7,"namespace":"work","session":"s-1","role":"assistant",` +
		`"speaker":"Ada","content":"a < b && c > d, \"quoted\", line\nbreak, 日本語 \u2028",` +
		`"ts":"2026-05-01T12:03:00Z","meta":{"lang":"en","tags":["x","<y>"],"n":1.5},` +
		`"received_at":"2026-05-01T12:03:00.123456789Z"`
	if !bytes.HasPrefix(line, []byte(want)) {
		t.Fatalf("line\n%s\nwant prefix\n%s", line, want)
	}
	if want := lineWithCRC(want); !bytes.Equal(line, want) {
		t.Fatalf("line\n%s\nwant\n%s", line, want)
	}
	if !json.Valid(line) {
		t.Fatal("line is not JSON")
	}

	// Empty speaker and meta are left out.
	tn := fullTurn()
	tn.Speaker, tn.Meta = "", nil
	line, err = archive.EncodeLine(tn)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(line, []byte(`"speaker"`)) || bytes.Contains(line, []byte(`"meta"`)) {
		t.Fatalf("empty fields written: %s", line)
	}
}

func TestEncodeLineRefuses(t *testing.T) {
	for name, edit := range map[string]func(*engram.Turn){
		"no id":          func(t *engram.Turn) { t.ID = "" },
		"seq 0":          func(t *engram.Turn) { t.Seq = 0 },
		"no session":     func(t *engram.Turn) { t.Session = "" },
		"bad role":       func(t *engram.Turn) { t.Role = "robot" },
		"meta array":     func(t *engram.Turn) { t.Meta = json.RawMessage(`[1]`) },
		"meta not JSON":  func(t *engram.Turn) { t.Meta = json.RawMessage(`{"a":`) },
		"content utf-8":  func(t *engram.Turn) { t.Content = "a\xffb" },
		"ts year 10000":  func(t *engram.Turn) { t.TS = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) },
		"received < y 0": func(t *engram.Turn) { t.ReceivedAt = time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC) },
	} {
		t.Run(name, func(t *testing.T) {
			tn := fullTurn()
			edit(&tn)
			if _, err := archive.EncodeLine(tn); !errors.Is(err, archive.ErrMalformed) {
				t.Fatalf("error %v, want ErrMalformed", err)
			}
		})
	}
}

func TestDecodeLineRoundTrip(t *testing.T) {
	in := fullTurn()
	line, err := archive.EncodeLine(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range [][]byte{line, bytes.TrimSuffix(line, []byte("\n"))} {
		got, err := archive.DecodeLine(l)
		if err != nil {
			t.Fatal(err)
		}
		want := in
		want.TS = want.TS.UTC()
		assertTurn(t, got, want)
	}
}

// assertTurn compares two turns field by field, meta byte for byte.
func assertTurn(tb testing.TB, got, want engram.Turn) {
	tb.Helper()
	if got.ID != want.ID || got.Seq != want.Seq || got.Namespace != want.Namespace || got.Session != want.Session ||
		got.Role != want.Role || got.Speaker != want.Speaker || got.Content != want.Content ||
		!got.TS.Equal(want.TS) || !got.ReceivedAt.Equal(want.ReceivedAt) || !bytes.Equal(got.Meta, want.Meta) {
		tb.Fatalf("turn\n%+v\nwant\n%+v", got, want)
	}
	if got.TS.Location() != time.UTC || got.ReceivedAt.Location() != time.UTC {
		tb.Fatalf("times not in UTC: %v %v", got.TS, got.ReceivedAt)
	}
}

func TestDecodeLineRejects(t *testing.T) {
	good, err := archive.EncodeLine(fullTurn())
	if err != nil {
		t.Fatal(err)
	}
	body := string(good[:bytes.LastIndex(good, []byte(`,"crc":"`))])
	const valid = `{"id":"a","seq":1,"namespace":"n","session":"s","role":"user","content":"c","ts":"2026-05-01T00:00:00Z","received_at":"2026-05-01T00:00:00Z"`
	for _, tc := range []struct {
		name string
		line []byte
		want error
	}{
		{"empty", nil, archive.ErrMalformed},
		{"newline only", []byte("\n"), archive.ErrMalformed},
		{"torn", good[:len(good)/2], archive.ErrMalformed},
		{"torn before crc end", good[:len(good)-4], archive.ErrMalformed},
		{"no crc", []byte(body + "}\n"), archive.ErrMalformed},
		{"crc uppercase", upperCRC(t, lineWithCRC(valid)), archive.ErrMalformed},
		{"crc not hex", []byte(body + `,"crc":"0000000g"}`), archive.ErrMalformed},
		{"crc short", []byte(body + `,"crc":"0000000"}`), archive.ErrMalformed},
		{"crc mismatch", []byte(body + `,"crc":"00000000"}`), archive.ErrChecksum},
		{"flipped byte", bytes.Replace(good, []byte("quoted"), []byte("quotes"), 1), archive.ErrChecksum},
		{"trailing CR", append(bytes.TrimSuffix(good, []byte("\n")), '\r', '\n'), archive.ErrMalformed},
		{"not JSON", lineWithCRC(`not json`), archive.ErrMalformed},
		{"JSON array", lineWithCRC(`[1,2`), archive.ErrMalformed},
		{"invalid UTF-8", lineWithCRC(strings.Replace(valid, `"c"`, "\"c\xff\"", 1)), archive.ErrMalformed},
		{"valid", lineWithCRC(valid), nil},
		{"no id", lineWithCRC(strings.Replace(valid, `"id":"a",`, ``, 1)), archive.ErrMalformed},
		{"null id", lineWithCRC(strings.Replace(valid, `"id":"a"`, `"id":null`, 1)), archive.ErrMalformed},
		{"no session", lineWithCRC(strings.Replace(valid, `"session":"s",`, ``, 1)), archive.ErrMalformed},
		{"no namespace", lineWithCRC(strings.Replace(valid, `"namespace":"n",`, ``, 1)), archive.ErrMalformed},
		{"empty content", lineWithCRC(strings.Replace(valid, `"content":"c"`, `"content":""`, 1)), archive.ErrMalformed},
		{"seq 0", lineWithCRC(strings.Replace(valid, `"seq":1`, `"seq":0`, 1)), archive.ErrMalformed},
		{"seq negative", lineWithCRC(strings.Replace(valid, `"seq":1`, `"seq":-5`, 1)), archive.ErrMalformed},
		{"seq float", lineWithCRC(strings.Replace(valid, `"seq":1`, `"seq":1.5`, 1)), archive.ErrMalformed},
		{"seq string", lineWithCRC(strings.Replace(valid, `"seq":1`, `"seq":"1"`, 1)), archive.ErrMalformed},
		{"unknown role", lineWithCRC(strings.Replace(valid, `"user"`, `"robot"`, 1)), archive.ErrMalformed},
		{"no role", lineWithCRC(strings.Replace(valid, `"role":"user",`, ``, 1)), archive.ErrMalformed},
		{"bad ts", lineWithCRC(strings.Replace(valid, `"2026-05-01T00:00:00Z"`, `"yesterday"`, 1)), archive.ErrMalformed},
		{"ts past 9999 in UTC", lineWithCRC(strings.Replace(valid, `"2026-05-01T00:00:00Z"`, `"9999-12-31T23:00:00-02:00"`, 1)), archive.ErrMalformed},
		{"meta array", lineWithCRC(valid + `,"meta":[1]`), archive.ErrMalformed},
		{"meta string", lineWithCRC(valid + `,"meta":"x"`), archive.ErrMalformed},
		{"meta null", lineWithCRC(valid + `,"meta":null`), nil},
		{"unknown field", lineWithCRC(valid + `,"future":true`), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := archive.DecodeLine(tc.line)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("error %v, want none", err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
		})
	}
}

// upperCRC returns line with its crc digits in upper case.
func upperCRC(tb testing.TB, line []byte) []byte {
	tb.Helper()
	n := len(line)
	digits := line[n-11 : n-3] // before `"}` and '\n'
	if !bytes.ContainsAny(digits, "abcdef") {
		tb.Fatalf("crc %s has no letter to upper-case", digits)
	}
	out := bytes.Clone(line)
	copy(out[n-11:n-3], bytes.ToUpper(digits))
	return out
}

// FuzzDecodeLine checks that DecodeLine never panics and that every line
// it accepts encodes again to a line that decodes to the same turn. Random
// bytes almost never carry a matching crc, so each input is also tried with
// its crc recomputed: that lets the fuzzer reach the JSON and field checks.
func FuzzDecodeLine(f *testing.F) {
	line, err := archive.EncodeLine(fullTurn())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(line)
	f.Add(line[:len(line)/2])
	f.Fuzz(func(t *testing.T, line []byte) {
		checkDecode(t, line)
		body := bytes.TrimSuffix(line, []byte("\n"))
		if i := bytes.LastIndex(body, []byte(`,"crc":"`)); i >= 0 {
			body = body[:i]
		}
		checkDecode(t, lineWithCRC(string(body)))
	})
}

func checkDecode(t *testing.T, line []byte) {
	checkCanonical(t, line)
	got, err := archive.DecodeLine(line)
	if err != nil {
		if !errors.Is(err, archive.ErrMalformed) && !errors.Is(err, archive.ErrChecksum) {
			t.Fatalf("error %v wraps neither sentinel", err)
		}
		return
	}
	again, err := archive.EncodeLine(got)
	if err != nil {
		t.Fatalf("decoded turn does not encode: %v\n%+v", err, got)
	}
	back, err := archive.DecodeLine(again)
	if err != nil {
		t.Fatalf("re-encoded line does not decode: %v\n%s", err, again)
	}
	want := got
	if len(want.Meta) > 0 {
		var buf bytes.Buffer
		if err := json.Compact(&buf, want.Meta); err != nil {
			t.Fatal(err)
		}
		want.Meta = buf.Bytes()
	}
	assertTurn(t, back, want)
}

// TestPeekSeq: the seq peeked from a line is the one DecodeLine reads,
// whatever the id holds (quotes, backslashes, the key itself), for turns
// and tombstones; a line of another shape is left to DecodeLine.
func TestPeekSeq(t *testing.T) {
	for _, id := range []string{"01JTURN0000000000000000001", `a","seq":99,"x":"`, `ends in a backslash\`, `\","seq":5`, "日本語"} {
		live := fullTurn()
		live.ID, live.Seq = id, 123456789
		gone := engram.Turn{ID: id, Seq: 42, ReceivedAt: live.ReceivedAt, Forgotten: &engram.Forgotten{At: live.ReceivedAt, Reason: `"seq":1`}}
		for _, tn := range []engram.Turn{live, gone} {
			line, err := archive.EncodeLine(tn)
			if err != nil {
				t.Fatal(err)
			}
			seq, ok := archive.PeekSeq(line)
			if !ok || seq != tn.Seq {
				t.Fatalf("id %q: peeked %d, %v from %s; want %d", id, seq, ok, line, tn.Seq)
			}
		}
	}
	for _, line := range []string{
		`{"seq":5,"id":"x"}`,
		`{"id":"x","seq":"5"}`,
		`{"id":"x","seq":5`,
		`{"id":"x","seq":-5,"content":""}`,
		`{"id":"x","seq":,"content":""}`,
		`{"id":"x","seq":12345678901234567890123,"content":""}`,
		`{"id":"x"}`,
		`not json`,
	} {
		if seq, ok := archive.PeekSeq([]byte(line)); ok {
			t.Errorf("%s: peeked %d, want no seq", line, seq)
		}
	}
}

// checkCanonical checks that a line the direct reader takes reads as
// encoding/json reads it.
func checkCanonical(tb testing.TB, line []byte) bool {
	tb.Helper()
	body := bytes.TrimSuffix(line, []byte("\n"))
	if len(body) < archive.CRCSuffixLen || !utf8.Valid(body) { // DecodeLine refuses invalid UTF-8 first
		return false
	}
	got, ok := archive.DecodeCanonical(body[:len(body)-archive.CRCSuffixLen])
	if !ok {
		return false
	}
	var want engram.Turn
	if err := json.Unmarshal(body, &want); err != nil {
		tb.Fatalf("the direct reader took a line encoding/json refuses (%v): %q", err, line)
	}
	if got.ID != want.ID || got.Seq != want.Seq || got.Namespace != want.Namespace || got.Session != want.Session ||
		got.Role != want.Role || got.Speaker != want.Speaker || got.Content != want.Content ||
		got.TS.Format(time.RFC3339Nano) != want.TS.Format(time.RFC3339Nano) || !got.ReceivedAt.Equal(want.ReceivedAt) ||
		!bytes.Equal(got.Meta, want.Meta) || want.Redacted != nil || want.Forgotten != nil {
		tb.Fatalf("direct reader\n%+v\nencoding/json\n%+v", got, want)
	}
	return true
}

// TestDecodeCanonical: the lines the archive writes are read directly, and
// as encoding/json reads them; every other shape is left to encoding/json.
func TestDecodeCanonical(t *testing.T) {
	ts := time.Date(2026, 5, 1, 14, 3, 0, 0, time.UTC)
	for _, tn := range []engram.Turn{
		fullTurn(),
		{ID: "a", Seq: 1, Namespace: "n", Session: "s", Role: engram.RoleUser, Content: "plain", TS: ts, ReceivedAt: ts},
		{ID: `q"uo\te`, Seq: 123456789, Namespace: "n", Session: "s", Role: engram.RoleTool, Speaker: "Zoë 😀",
			Content: "tab\t, nul \x00, \u2029, </script>", TS: ts.Add(time.Nanosecond), ReceivedAt: ts,
			Meta: json.RawMessage(`{"a":{"b":["}",{"c":"\\\""}]},"d":null}`)},
	} {
		line, err := archive.EncodeLine(tn)
		if err != nil {
			t.Fatal(err)
		}
		if !checkCanonical(t, line) {
			t.Fatalf("the direct reader left a line the archive wrote to encoding/json: %s", line)
		}
	}
	red := fullTurn()
	red.Redacted = &engram.Redaction{At: ts, Rules: map[string]int64{"email": 1}}
	tomb := archive.Tombstone(fullTurn(), engram.Forgotten{At: ts, Reason: "asked"})
	const valid = `{"id":"a","seq":1,"namespace":"n","session":"s","role":"user","content":"c","ts":"2026-05-01T00:00:00Z","received_at":"2026-05-01T00:00:00Z"`
	others := [][]byte{
		lineWithCRC(strings.Replace(valid, `"seq":1`, `"seq":01`, 1)),
		lineWithCRC(strings.Replace(valid, `"seq":1`, `"seq":1e0`, 1)),
		lineWithCRC(strings.Replace(valid, `"id"`, `"ID"`, 1)),
		lineWithCRC(strings.Replace(valid, `"c"`, "\"c\x01\"", 1)),
		lineWithCRC(strings.Replace(valid, `"c"`, `"\q"`, 1)),
		lineWithCRC(strings.Replace(valid, `,"received_at"`, `,"meta":{"a":},"received_at"`, 1)),
		lineWithCRC(strings.Replace(valid, `,"received_at"`, `,"meta":{"a":"}","received_at"`, 1)),
		lineWithCRC(valid + `,"future":true`),
	}
	for _, tn := range []engram.Turn{red, tomb} {
		line, err := archive.EncodeLine(tn)
		if err != nil {
			t.Fatal(err)
		}
		others = append(others, line)
	}
	for _, line := range others {
		if checkCanonical(t, line) {
			t.Errorf("the direct reader took %s", line)
		}
	}
}
