package importer_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/importer"
)

func TestParseMapping(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // Mapping.String, or the error's text
		err  bool
	}{
		{in: "content=text", want: "content=text"},
		{in: "content=a.b, ts=c.0 ,role=who", want: "content=a.b,ts=c.0,role=who"},
		{in: "content={a,b}|@values,session=s,meta=x", want: "content={a,b}|@values,session=s,meta=x"},
		{in: "content=msg.parts.#(type==\"text\")#.text,id=uuid", want: `content=msg.parts.#(type=="text")#.text,id=uuid`},
		{in: "ts=t", want: "content=PATH", err: true},
		{in: "content=a,content=b", want: "mapped twice", err: true},
		{in: "content=a,colour=b", want: "colour", err: true},
		{in: "content=", want: "empty", err: true},
		{in: "content", want: "FIELD=PATH", err: true},
	} {
		m, err := importer.ParseMapping(tc.in)
		switch {
		case tc.err && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q: err = %v, want one with %q", tc.in, err, tc.want)
		case !tc.err && err != nil:
			t.Errorf("%q: %v", tc.in, err)
		case !tc.err && m.String() != tc.want:
			t.Errorf("%q: %q, want %q", tc.in, m.String(), tc.want)
		}
	}
}

func TestJSONLLine(t *testing.T) {
	full := "content=msg.text,ts=msg.at,session=conv.id,role=msg.from,speaker=msg.name,id=msg.id,namespace=ns,meta=extra"
	for _, tc := range []struct {
		name, mapping, line string
		want                engram.TurnInput // ID "hash": a jsonl- hash
		err                 string
	}{
		{name: "nested paths", mapping: full,
			line: `{"conv":{"id":"c1"},"ns":"work","msg":{"id":"m1","text":"héllo 世界","at":"2024-05-01T12:00:00Z","from":"Human","name":"Ana"},"extra":{"k":1}}`,
			want: engram.TurnInput{ID: "jsonl-m1", Namespace: "work", Session: "c1", Role: "user", Speaker: "Ana", Content: "héllo 世界", TS: "2024-05-01T12:00:00Z", Meta: []byte(`{"k":1}`)}},
		{name: "missing optional fields", mapping: full, line: `{"msg":{"text":"just text"}}`,
			want: engram.TurnInput{ID: "hash", Session: "log.jsonl", Content: "just text"}},
		{name: "null fields", mapping: full, line: `{"msg":{"text":"t","id":null,"from":null,"at":null},"extra":null}`,
			want: engram.TurnInput{ID: "hash", Session: "log.jsonl", Content: "t"}},
		{name: "array of strings", mapping: "content=parts", line: `{"parts":["one",null,"two"]}`,
			want: engram.TurnInput{ID: "hash", Session: "log.jsonl", Content: "one\ntwo"}},
		{name: "array path", mapping: "content=blocks.#.text,role=0", line: `{"blocks":[{"text":"a"},{"type":"image"},{"text":"b"}]}`,
			want: engram.TurnInput{ID: "hash", Session: "log.jsonl", Content: "a\nb"}},
		{name: "top-level array", mapping: "content=1,role=0,id=2", line: `["ai","bonjour",7]`,
			want: engram.TurnInput{ID: "jsonl-7", Session: "log.jsonl", Role: "assistant", Content: "bonjour"}},
		{name: "index into array", mapping: "content=messages.1.content,role=messages.1.role", line: `{"messages":[{"role":"system","content":"x"},{"role":"function","content":"42"}]}`,
			want: engram.TurnInput{ID: "hash", Session: "log.jsonl", Role: "tool", Content: "42"}},
		{name: "numeric content and session", mapping: "content=n,session=s", line: `{"n":3.5,"s":12}`,
			want: engram.TurnInput{ID: "hash", Session: "12", Content: "3.5"}},
		{name: "object content", mapping: "content=o", line: `{"o":{"a":1}}`,
			want: engram.TurnInput{ID: "hash", Session: "log.jsonl", Content: `{"a":1}`}},
		{name: "unix seconds", mapping: "content=c,ts=t", line: `{"c":"x","t":1714570000}`,
			want: engram.TurnInput{ID: "hash", Session: "log.jsonl", Content: "x", TS: "2024-05-01T13:26:40Z"}},
		{name: "unix seconds with fraction", mapping: "content=c,ts=t", line: `{"c":"x","t":1714570000.25}`,
			want: engram.TurnInput{ID: "hash", Session: "log.jsonl", Content: "x", TS: "2024-05-01T13:26:40.25Z"}},
		{name: "unix millis", mapping: "content=c,ts=t", line: `{"c":"x","t":1714570000123}`,
			want: engram.TurnInput{ID: "hash", Session: "log.jsonl", Content: "x", TS: "2024-05-01T13:26:40.123Z"}},
		{name: "unix millis as string", mapping: "content=c,ts=t", line: `{"c":"x","t":"1714570000123"}`,
			want: engram.TurnInput{ID: "hash", Session: "log.jsonl", Content: "x", TS: "2024-05-01T13:26:40.123Z"}},
		{name: "unix nanos", mapping: "content=c,ts=t", line: `{"c":"x","t":1714570000123456789}`,
			want: engram.TurnInput{ID: "hash", Session: "log.jsonl", Content: "x", TS: "2024-05-01T13:26:40.123456789Z"}},
		{name: "layout without zone", mapping: "content=c,ts=t", line: `{"c":"x","t":"2024-05-01 13:26:40"}`,
			want: engram.TurnInput{ID: "hash", Session: "log.jsonl", Content: "x", TS: "2024-05-01T13:26:40Z"}},
		{name: "offset is made UTC", mapping: "content=c,ts=t", line: `{"c":"x","t":"2024-05-01T15:26:40+02:00"}`,
			want: engram.TurnInput{ID: "hash", Session: "log.jsonl", Content: "x", TS: "2024-05-01T13:26:40Z"}},
		{name: "date only", mapping: "content=c,ts=t", line: `{"c":"x","t":"2024-05-01"}`,
			want: engram.TurnInput{ID: "hash", Session: "log.jsonl", Content: "x", TS: "2024-05-01T00:00:00Z"}},
		{name: "line namespace over the default", mapping: "content=c,namespace=n", line: `{"c":"x","n":"mine"}`,
			want: engram.TurnInput{ID: "hash", Namespace: "mine", Session: "log.jsonl", Content: "x"}},

		{name: "not JSON", mapping: "content=c", line: `{"c":`, err: "not valid JSON"},
		{name: "content missing", mapping: "content=c", line: `{"d":"x"}`, err: "content: nothing at"},
		{name: "content blank", mapping: "content=c", line: `{"c":"  "}`, err: "blank"},
		{name: "content empty array", mapping: "content=c", line: `{"c":[]}`, err: "blank"},
		{name: "bad time", mapping: "content=c,ts=t", line: `{"c":"x","t":"soon"}`, err: "ts: \"soon\" is not a time"},
		{name: "negative time", mapping: "content=c,ts=t", line: `{"c":"x","t":-5}`, err: "not a Unix time"},
		{name: "time object", mapping: "content=c,ts=t", line: `{"c":"x","t":{}}`, err: "is not a time"},
		{name: "unknown role", mapping: "content=c,role=r", line: `{"c":"x","r":"narrator"}`, err: `unknown role "narrator"`},
		{name: "session object", mapping: "content=c,session=s", line: `{"c":"x","s":{"a":1}}`, err: "session: want a string"},
		{name: "meta not an object", mapping: "content=c,meta=m", line: `{"c":"x","m":[1]}`, err: "meta: \"m\" is not an object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := importer.ParseMapping(tc.mapping)
			if err != nil {
				t.Fatal(err)
			}
			j := &importer.JSONL{Map: m, Source: "/some/where/log.jsonl"}
			got, err := j.Line(3, []byte(tc.line))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.want.ID == "hash" {
				if !strings.HasPrefix(got.ID, "jsonl-") || len(got.ID) != len("jsonl-")+32 {
					t.Errorf("id = %q, want jsonl- and a hash", got.ID)
				}
				tc.want.ID = got.ID
			}
			if string(got.Meta) != string(tc.want.Meta) {
				t.Errorf("meta = %s, want %s", got.Meta, tc.want.Meta)
			}
			got.Meta, tc.want.Meta = nil, nil
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("\n got %+v\nwant %+v", got, tc.want)
			}
			if _, err := got.Turn("", time.Now(), engram.Limits{}); err != nil {
				t.Errorf("engram rejects the turn: %v", err)
			}
		})
	}
}

// TestJSONLHashID: without an id mapping the id depends on the file's base
// name, the line number and the content, and on nothing else.
func TestJSONLHashID(t *testing.T) {
	m, _ := importer.ParseMapping("content=c,ts=t")
	id := func(src string, n int, line string) string {
		in, err := (&importer.JSONL{Map: m, Source: src}).Line(n, []byte(line))
		if err != nil {
			t.Fatal(err)
		}
		return in.ID
	}
	a := id("/a/log.jsonl", 1, `{"c":"x","t":1}`)
	if b := id("/b/log.jsonl", 1, `{"c":"x","t":2}`); b != a {
		t.Errorf("the folder or the ts changed the id: %s, %s", a, b)
	}
	for _, other := range []string{id("/a/other.jsonl", 1, `{"c":"x"}`), id("/a/log.jsonl", 2, `{"c":"x"}`), id("/a/log.jsonl", 1, `{"c":"y"}`)} {
		if other == a {
			t.Errorf("different file, line or content, same id %s", a)
		}
	}
}

func TestJSONLRead(t *testing.T) {
	m, err := importer.ParseMapping("content=payload.parts,ts=event.ts,session=event.thread.id,role=event.sender.type,speaker=event.sender.name,id=event.id,meta=tags")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join("..", "testdata", "importer", "jsonl", "agent.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	j := &importer.JSONL{Map: m, Source: f.Name(), Namespace: "agents"}
	var recs []importer.Record
	n, err := j.Read(f, func(r importer.Record) error { recs = append(recs, r); return nil })
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, recs)
	if n != 8 || len(recs) != 8 {
		t.Fatalf("%d lines, %d records, want 8 (the blank line is not one)", n, len(recs))
	}
	var got []string
	for _, r := range recs {
		if r.Err != nil {
			got = append(got, r.Where+": error")
		} else {
			got = append(got, r.Where+": "+r.Turn.ID+" "+r.Turn.Role+" "+r.Turn.TS)
		}
	}
	want := []string{
		"line 1: jsonl-evt-1 user 2024-05-01T13:26:40Z",
		"line 2: jsonl-evt-2 assistant 2024-05-01T13:26:41.5Z",
		"line 4: jsonl-evt-3 tool 2024-05-01T11:27:00Z", // line 3 is blank
		"line 5: error", // no content
		"line 6: error", // not JSON
		"line 7: error", // bad time
		"line 8: error", // bad role
		"line 9: jsonl-evt-7 user 2024-05-02T09:16:00Z",
	}
	if strings.Join(got[:8], "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if r := recs[1].Turn; r.Content != "It is on Main Street.\nOpen until 8 pm." || r.Speaker != "helper" ||
		r.Session != "t-42" || r.Namespace != "agents" || string(r.Meta) != `{"channel":"web"}` {
		t.Errorf("line 2 = %+v", r)
	}
}

func TestParseTimeRange(t *testing.T) {
	for _, raw := range []string{`"2024-05-01T13:26:40.5-07:00"`, `"Wed, 01 May 2024 13:26:40 GMT"`, `"2024/05/01 13:26:40"`, `0`, `"1e3"`} {
		if _, err := importer.ParseTime(gjson.Parse(raw)); err != nil {
			t.Errorf("%s: %v", raw, err)
		}
	}
	for _, raw := range []string{`1e300`, `"NaN"`, `true`, `"13:26"`} {
		if ts, err := importer.ParseTime(gjson.Parse(raw)); err == nil {
			t.Errorf("%s: %v, want an error", raw, ts)
		}
	}
}

// FuzzJSONLLine: Line never panics, is deterministic, and every turn it
// returns has content, a jsonl- id and a ts engram reads.
func FuzzJSONLLine(f *testing.F) {
	f.Add("content=msg.text,ts=msg.at,session=conv.id,role=msg.from,id=msg.id,meta=extra", `{"conv":{"id":"c1"},"msg":{"id":"m1","text":"héllo","at":"2024-05-01T12:00:00Z","from":"human"},"extra":{"k":1}}`)
	f.Add("content=parts,ts=t", `{"parts":["a",null,{"x":1}],"t":1714570000123}`)
	f.Add("content=1,role=0", `["ai","x"]`)
	f.Add("content=c,ts=t", `{"c":"x","t":"2024-05-01 13:26:40"}`)
	f.Add("content=c|@reverse,ts=t", `{"c":[1,2],"t":-1}`)
	f.Add("content=c", "\xff")
	f.Fuzz(func(t *testing.T, mapping, line string) {
		m, err := importer.ParseMapping(mapping)
		if err != nil {
			return
		}
		j := &importer.JSONL{Map: m, Source: "fuzz.jsonl"}
		a, errA := j.Line(1, []byte(line))
		b, errB := j.Line(1, []byte(line))
		if (errA == nil) != (errB == nil) || a.ID != b.ID || a.Content != b.Content || a.TS != b.TS {
			t.Fatalf("two calls differ: %+v %v / %+v %v", a, errA, b, errB)
		}
		if errA != nil {
			return
		}
		if strings.TrimSpace(a.Content) == "" || !strings.HasPrefix(a.ID, importer.JSONLIDPrefix) || a.Session == "" {
			t.Fatalf("turn %+v: want content, a jsonl- id and a session", a)
		}
		if a.TS != "" {
			if _, err := time.Parse(time.RFC3339Nano, a.TS); err != nil {
				t.Fatalf("ts %q: %v", a.TS, err)
			}
		}
		if a.Role != "" && !engram.Role(a.Role).Valid() {
			t.Fatalf("role %q", a.Role)
		}
		// What engram then refuses must be for a reason it names, never a panic.
		if _, err := a.Turn("", time.Now(), engram.Limits{}); err != nil && utf8.ValidString(line) && engram.ErrorField(err) == "" {
			t.Fatalf("turn refused without a field: %v", err)
		}
	})
}
