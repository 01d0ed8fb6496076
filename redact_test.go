package engram_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/engram-dev/engram"
)

func TestTurnRedactSpans(t *testing.T) {
	for _, c := range []struct {
		name                   string
		in                     engram.Turn
		spans                  []string
		content, speaker, meta string
		n                      int
	}{
		{"content only", engram.Turn{Content: "pw hunter2 and hunter2", Speaker: "Ana"}, []string{"hunter2"},
			"pw [x] and [x]", "Ana", "", 2},
		{"speaker and content", engram.Turn{Content: "I am Ana Zorb", Speaker: "Ana Zorb"}, []string{"Zorb"},
			"I am Ana [x]", "Ana [x]", "", 2},
		{"meta values, not keys", engram.Turn{Content: "hi", Meta: json.RawMessage(`{"Zorb":"Zorb's","n":[1,"a Zorb",{"k":"Zorb"}],"ok":true}`)},
			[]string{"Zorb"}, "hi", "", `{"Zorb":"[x]'s","n":[1,"a [x]",{"k":"[x]"}],"ok":true}`, 3},
		{"escaped in meta", engram.Turn{Meta: json.RawMessage(`{"a":"say \"Zorb\" \u005a\u006frb <b>"}`)},
			[]string{`"Zorb"`, "Zorb"}, "", "", `{"a":"say [x] [x] <b>"}`, 2},
		{"a colon in a value", engram.Turn{Meta: json.RawMessage(`{"a" : "x:Zorb" , "b":"Zorb"}`)},
			[]string{"Zorb"}, "", "", `{"a" : "x:[x]" , "b":"[x]"}`, 2},
		{"several spans", engram.Turn{Content: "alpha beta gamma", Speaker: "beta"}, []string{"alpha", "gamma", "beta"},
			"[x] [x] [x]", "[x]", "", 4},
		{"nothing held", engram.Turn{Content: "nothing", Speaker: "Bo", Meta: json.RawMessage(`{"a":"b"}`)}, []string{"Zorb"},
			"nothing", "Bo", `{"a":"b"}`, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, n := c.in.RedactSpans(c.spans, "[x]")
			if got.Content != c.content || got.Speaker != c.speaker || string(got.Meta) != c.meta || n != c.n {
				t.Errorf("got content %q speaker %q meta %s, %d spans; want %q %q %s, %d", got.Content, got.Speaker, got.Meta, n,
					c.content, c.speaker, c.meta, c.n)
			}
			if len(c.in.Meta) > 0 && !json.Valid(got.Meta) {
				t.Errorf("meta %s is not JSON", got.Meta)
			}
		})
	}
	// The turn given is left as it was.
	in := engram.Turn{Meta: json.RawMessage(`{"a":"Zorb"}`)}
	in.RedactSpans([]string{"Zorb"}, "[x]")
	if string(in.Meta) != `{"a":"Zorb"}` {
		t.Errorf("the input's meta changed: %s", in.Meta)
	}
}

// FuzzRedactSpansMeta checks that a redacted meta is JSON, holds the
// span in no string value, and keeps the same keys.
func FuzzRedactSpansMeta(f *testing.F) {
	for _, s := range []string{`{"a":"Zorb"}`, `{"Zorb":["Zorb",1,null,{"b":"xZorbx"}]}`, `{"a":"\u005aorb","b":"\""}`, `{}`, `{"a":"<Zorb>&"}`} {
		f.Add([]byte(s), "Zorb")
	}
	f.Fuzz(func(t *testing.T, meta []byte, span string) {
		if len(span) < engram.MinRedactBytes || strings.Contains("[x]", span) {
			return
		}
		norm, err := engram.NormalizeMeta(meta, 0)
		if err != nil || norm == nil {
			return
		}
		got, _ := engram.Turn{Meta: norm}.RedactSpans([]string{span}, "[x]")
		var before, after any
		if err := json.Unmarshal(norm, &before); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(got.Meta, &after); err != nil {
			t.Fatalf("%s redacted to %s, not JSON: %v", norm, got.Meta, err)
		}
		var walk func(a, b any)
		walk = func(a, b any) {
			switch a := a.(type) {
			case map[string]any:
				bm, ok := b.(map[string]any)
				if !ok || len(bm) != len(a) {
					t.Fatalf("%s redacted to %s: an object changed shape", norm, got.Meta)
				}
				for k, v := range a {
					walk(v, bm[k])
				}
			case []any:
				bs, ok := b.([]any)
				if !ok || len(bs) != len(a) {
					t.Fatalf("%s redacted to %s: an array changed shape", norm, got.Meta)
				}
				for i := range a {
					walk(a[i], bs[i])
				}
			case string:
				bs, ok := b.(string)
				if !ok || bs != strings.ReplaceAll(a, span, "[x]") {
					t.Fatalf("%s redacted to %s: %q became %v", norm, got.Meta, a, b)
				}
			default:
				ab, _ := json.Marshal(a)
				bb, _ := json.Marshal(b)
				if !bytes.Equal(ab, bb) {
					t.Fatalf("%s redacted to %s: %s became %s", norm, got.Meta, ab, bb)
				}
			}
		}
		walk(before, after)
	})
}
