package engram_test

import (
	"bytes"
	"encoding/json"
	"fmt"
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

// TestRedactSpansOnePass: the spans are found in one pass: where two
// overlap, the longer one that starts first is replaced, whatever their
// order, and a span longer than the matcher's trie is found whole.
func TestRedactSpansOnePass(t *testing.T) {
	long := strings.Repeat("k", 20) + "secret-tail"
	for _, c := range []struct {
		in    string
		spans []string
		want  string
		n     int
	}{
		{"abcdef", []string{"abc", "abcdef"}, "[x]", 1},
		{"abcdef", []string{"abcdef", "abc"}, "[x]", 1},
		{"xabcdefx abc", []string{"abc", "bcdefx"}, "x[x]defx [x]", 2},
		{"pre " + long + " and " + long[:25] + "!", []string{long, long[:20] + "s"}, "pre [x] and [x]ecre!", 2},
		{"aaaa", []string{"aaa"}, "[x]a", 1},
		{"no match here", []string{"zzz", strings.Repeat("n", 30)}, "no match here", 0},
	} {
		got, n := engram.Turn{Content: c.in}.RedactSpans(c.spans, "[x]")
		if got.Content != c.want || n != c.n {
			t.Errorf("%q with %q: %q, %d spans; want %q, %d", c.in, c.spans, got.Content, n, c.want, c.n)
		}
	}
}

// TestRedactTextsCapped: a redaction names at most MaxRedactTexts spans;
// more is ETOOLARGE on texts.
func TestRedactTextsCapped(t *testing.T) {
	texts := make([]string, engram.MaxRedactTexts+1)
	for i := range texts {
		texts[i] = fmt.Sprintf("secret-%05d", i)
	}
	err := engram.RedactRequest{Texts: texts}.Validate()
	if engram.ErrorCode(err) != engram.ETOOLARGE || engram.ErrorField(err) != "texts" {
		t.Fatalf("%d spans: %v, want ETOOLARGE on texts", len(texts), err)
	}
	if err := (engram.RedactRequest{Texts: texts[:engram.MaxRedactTexts]}).Validate(); err != nil {
		t.Fatalf("%d spans: %v", engram.MaxRedactTexts, err)
	}
}

// BenchmarkRedactSpans redacts many spans in many turns: one scan of each
// text per span (what RedactSpans did before) against one pass of a
// matcher made once.
func BenchmarkRedactSpans(b *testing.B) {
	turns := make([]engram.Turn, 200)
	for i := range turns {
		turns[i] = engram.Turn{Content: strings.Repeat(fmt.Sprintf("turn %d says nothing much but secret-%05d once. ", i, i*7), 8)}
	}
	spans := make([]string, 1000)
	for i := range spans {
		spans[i] = fmt.Sprintf("secret-%05d", i)
	}
	b.Run("scan-per-span", func(b *testing.B) {
		for range b.N {
			for _, t := range turns {
				s := t.Content
				for _, sp := range spans {
					if strings.Contains(s, sp) {
						s = strings.ReplaceAll(s, sp, "[x]")
					}
				}
			}
		}
	})
	b.Run("one-pass", func(b *testing.B) {
		for range b.N {
			m := engram.NewSpans(spans)
			for _, t := range turns {
				t.RedactWith(m, "[x]")
			}
		}
	})
}
