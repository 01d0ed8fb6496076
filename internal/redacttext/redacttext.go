// Package redacttext is the text work of a redaction, apart from any
// store: the spans replaced in one pass, in plain text and as JSON writes
// them, the pieces of a span in texts made of words, and the draft of an
// open scene. The palace applies it to its rows.
package redacttext

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	engram "github.com/engram-dev/engram"
)

// Text redacts the spans of one redaction.
type Text struct {
	marker string
	match  *engram.Spans     // the spans, found in one pass
	folded *engram.Spans     // the spans lower-cased
	pieces *engram.Pieces    // the words of the spans, for texts made of words
	json   *strings.Replacer // the spans as JSON text writes them
}

// New returns the redaction of spans by marker.
func New(spans []string, marker string) *Text {
	lower := make([]string, len(spans))
	for i, sp := range spans {
		lower[i] = strings.ToLower(sp)
	}
	// A Replacer prefers the pair given first where two match at one
	// place: longest first, as Spans does.
	bylen := slices.Clone(spans)
	slices.SortStableFunc(bylen, func(a, b string) int { return len(b) - len(a) })
	var pairs []string
	for _, sp := range bylen {
		pairs = append(pairs, JSONText(sp, true), JSONText(marker, true))
	}
	return &Text{marker: marker, match: engram.NewSpans(spans), folded: engram.NewSpans(lower),
		pieces: engram.NewPieces(spans, marker), json: strings.NewReplacer(pairs...)}
}

// Red replaces the spans in s, in one pass, as engram.Turn.RedactSpans
// does.
func (r *Text) Red(s string) string {
	s, _ = r.match.Replace(s, r.marker)
	return s
}

// Holds reports whether s holds a span.
func (r *Text) Holds(s string) bool { return r.match.Contains(s) }

// HoldsFolded reports whether s, a lower-cased key, holds a span in any
// case.
func (r *Text) HoldsFolded(s string) bool { return r.folded.Contains(s) }

// JSON replaces the spans in s, a JSON text, where they appear escaped.
func (r *Text) JSON(s string) string { return r.json.Replace(s) }

// Words is Red for the texts the scene job makes of words (a title of
// terms, a clipped summary): the pieces of a span go too.
func (r *Text) Words(s string) string { return r.pieces.Replace(r.Red(s), r.marker) }

// SceneDraft redacts the draft of an open scene (the JSON of a
// pipeline.SceneDraft): its texts (Words), and its term statistics,
// whose keys are lower-case stems that a replacement misses ("quokkavil"
// of Quokkaville). The terms and phrases whose key or surface form holds a
// span or a piece of one, in any case, go, and the window loses their
// keys: removing keeps the lists sorted, as the scene job searches them.
func (r *Text) SceneDraft(raw string) string {
	var d map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &d); err != nil {
		return r.JSON(raw)
	}
	held := func(s string) bool { return r.HoldsFolded(strings.ToLower(s)) || r.pieces.Holds(s) }
	gone := map[string]bool{}
	keep := func(field string, drop func(key, display string) bool) {
		var terms []json.RawMessage
		if json.Unmarshal(d[field], &terms) != nil {
			return
		}
		kept := terms[:0]
		for _, raw := range terms {
			var t struct {
				K string `json:"k"`
				D string `json:"d"`
			}
			if json.Unmarshal(raw, &t) == nil && drop(t.K, t.D) {
				gone[t.K] = true
				continue
			}
			kept = append(kept, raw)
		}
		d[field], _ = json.Marshal(kept)
	}
	keep("terms", func(k, disp string) bool { return held(k) || held(disp) })
	keep("phrases", func(k, disp string) bool {
		return held(k) || held(disp) || slices.ContainsFunc(strings.Fields(k), func(w string) bool { return gone[w] })
	})
	var window [][]string
	if json.Unmarshal(d["window"], &window) == nil && window != nil {
		for i, keys := range window {
			window[i] = slices.DeleteFunc(keys, func(k string) bool { return gone[k] || held(k) })
		}
		d["window"], _ = json.Marshal(window)
	}
	out, err := json.Marshal(d)
	if err != nil {
		return r.JSON(raw)
	}
	return r.draftStrings(string(out))
}

// draftWords are the draft's fields of text the scene job made of words
// (its lead, its candidate sentences, the scene's title and summary): they
// lose the pieces of a span too. Every other string (the scene's id,
// namespace, session, times, turns and participants, the terms' keys) is
// a name or a key, which a word of a span must not rename: it loses the
// spans only, as the scene's row does.
var draftWords = map[string]bool{"lead": true, "text": true, "title": true, "summary": true}

// draftStrings applies Words to the draft's fields of text and Red to its
// other strings; a draft that does not decode is left to a replacement of
// the spans as JSON writes them.
func (r *Text) draftStrings(raw string) string {
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber() // numbers come back as they were
	var v any
	if dec.Decode(&v) != nil {
		return r.JSON(raw)
	}
	var walk func(v any, key string) any
	walk = func(v any, key string) any {
		switch x := v.(type) {
		case string:
			if draftWords[key] {
				return r.Words(x)
			}
			return r.Red(x)
		case []any:
			for i := range x {
				x[i] = walk(x[i], key)
			}
		case map[string]any:
			for k := range x {
				x[k] = walk(x[k], k)
			}
		}
		return v
	}
	out, err := json.Marshal(walk(v, ""))
	if err != nil {
		return r.JSON(raw)
	}
	return string(out)
}

// JSONText is s as it appears inside a JSON string, with <, > and &
// escaped when html is set (as json.Marshal writes them).
func JSONText(s string, html bool) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	_ = enc.Encode(s) // a string always encodes
	q := strings.TrimSuffix(b.String(), "\n")
	return q[1 : len(q)-1]
}

// Holder finds the turns that hold one of some texts where a redaction
// reaches them (the palaces' TurnIDsHolding): in the content and the
// speaker as they are, in meta as JSON writes them (with and without its
// escapes of <, > and &), and, with everywhere, in the id, namespace and
// session too (the places a redaction does not reach). Each is looked
// through once for every text (engram.Spans).
type Holder struct {
	plain, meta *engram.Spans
	everywhere  bool
}

// NewHolder returns the Holder of texts.
func NewHolder(texts []string, everywhere bool) Holder {
	escaped := make([]string, 0, 2*len(texts))
	for _, text := range texts {
		escaped = append(escaped, JSONText(text, true), JSONText(text, false))
	}
	return Holder{plain: engram.NewSpans(texts), meta: engram.NewSpans(escaped), everywhere: everywhere}
}

// Holds reports whether a turn of these fields holds one of the texts.
func (h Holder) Holds(id, namespace, session, content, speaker, meta string) bool {
	return h.plain.Contains(content) || h.plain.Contains(speaker) || h.meta.Contains(meta) ||
		h.everywhere && (h.plain.Contains(id) || h.plain.Contains(namespace) || h.plain.Contains(session))
}
