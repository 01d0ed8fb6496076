// Package memrule is how a palace stores L1 memories, apart from where it
// stores them, so that every palace keeps the same memories from the same
// batches: the input check, the near-duplicate key of a memory, what a
// merge of a repeat changes, which stored memories a new one contradicts
// and which of two wins, and the state a memory's last correction gives
// it.
package memrule

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/kgchain"
	"github.com/engram-dev/engram/internal/kwindex"
	"github.com/engram-dev/engram/internal/neardup"
	"github.com/engram-dev/engram/internal/redacttext"
)

// Limits of a stored memory.
const (
	MaxText    = 4000
	MaxSources = 200 // sources kept per memory; the oldest stay
)

// NearJaccard is the overlap of content words (intersection over union)
// from which a memory of the same namespace, type and subject as an
// active one is the same memory said again.
const NearJaccard = float64(neardup.Num) / neardup.Den

// Check reports a memory no palace stores: EINVALID naming the field
// (memories[i].id, namespace, type, text, ts, valid_from) for one without
// id, namespace, type or text, with text over MaxText bytes, or with a
// time storable refuses.
func Check(m engram.Memory, i int, storable func(time.Time) error) error {
	field := "memories[" + strconv.Itoa(i) + "]."
	switch {
	case m.ID == "":
		return engram.FieldError(field+"id", "id is required")
	case m.Namespace == "":
		return engram.FieldError(field+"namespace", "namespace is required")
	case m.Type == "":
		return engram.FieldError(field+"type", "type is required")
	case strings.TrimSpace(m.Text) == "":
		return engram.FieldError(field+"text", "text is required")
	case len(m.Text) > MaxText:
		return engram.FieldError(field+"text", "text is %d bytes, more than %d", len(m.Text), MaxText)
	}
	if err := storable(m.TS); err != nil {
		return engram.FieldError(field+"ts", "%v", err)
	}
	if err := storable(m.ValidFrom); err != nil {
		return engram.FieldError(field+"valid_from", "%v", err)
	}
	return nil
}

// ContentWords returns the sorted distinct lower-case words of s without
// stopwords: letters and digits runs, with runs of Chinese or Japanese
// characters cut into single characters.
func ContentWords(s string) []string {
	s = strings.ToLower(kwindex.NFKC(s))
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if kwindex.HasCJK(f) {
			for _, r := range f {
				out = append(out, string(r))
			}
			continue
		}
		if !kwindex.IsStopword(f) {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// DedupKey is the near-duplicate key of m, whose content words are words.
func DedupKey(m engram.Memory, words []string) string { return neardup.Key(m.Type, m.Subject, words) }

// Alt is what a correction of a memory matches a memory by when
// extraction gave it another id: its namespace, type and extracted text.
func Alt(ns, typ, text string) string { return ns + "\x1f" + typ + "\x1f" + text }

// CapSources keeps the first MaxSources of s.
func CapSources(s []string) []string {
	if len(s) > MaxSources {
		return s[:MaxSources]
	}
	return s
}

// Importance is an importance as stored: within [0, 1].
func Importance(f float64) float64 { return min(1, max(0, f)) }

// Merge is what a stored memory of sources and importance becomes when m
// repeats it: m's sources it lacks added (the first MaxSources kept), the
// higher importance. changed is false when it stays as it was.
func Merge(sources []string, importance float64, m engram.Memory) (srcs []string, imp float64, changed bool) {
	srcs = sources
	for _, s := range m.Sources {
		if !slices.Contains(srcs, s) {
			srcs = append(srcs, s)
		}
	}
	srcs = CapSources(srcs)
	imp = max(importance, Importance(m.Importance))
	return srcs, imp, len(srcs) != len(sources) || imp != importance
}

// Rivals says which active memories of m's namespace and relation subject
// a new memory m contradicts: those of predicate whose normalised object
// is m's (same) or is not (!same). ok is false when m contradicts none
// (no relation, or a predicate that holds many values).
func Rivals(m engram.Memory) (predicate string, same, ok bool) {
	r := m.Relation
	if !HasRelation(m) {
		return "", false, false
	}
	switch {
	case engram.SingleValued(r.Predicate):
		return r.Predicate, false, true
	case r.Predicate == "likes":
		return "dislikes", true, true
	case r.Predicate == "dislikes":
		return "likes", true, true
	}
	return "", false, false
}

// HasRelation reports whether m is stored with its relation (a triple).
func HasRelation(m engram.Memory) bool {
	r := m.Relation
	return r != nil && r.Subject != "" && r.Predicate != "" && r.Object != ""
}

// NormObject is the normalised object of m's relation.
func NormObject(m engram.Memory) string { return kgchain.NormName(m.Relation.Object) }

// When is the time a contradiction compares: m's ValidFrom, or its TS
// when unset, in Unix nanoseconds (0: none).
func When(m engram.Memory) int64 {
	for _, t := range []time.Time{m.ValidFrom, m.TS} {
		if !t.IsZero() {
			return t.UnixNano()
		}
	}
	return 0
}

// State is what a correction decides of a stored memory: its text,
// whether it is marked wrong, the correction that set it ("" for none),
// and the text extraction gave it, kept while a correction holds ("" for
// none).
type State struct {
	Text      string
	Wrong     bool
	Corrected string
	Extracted string
}

// Settle is the state the last correction c (nil: none, or a restore)
// gives a memory whose text as extracted is orig.
func Settle(orig string, c *engram.Correction) State {
	if c == nil {
		return State{Text: orig}
	}
	s := State{Text: orig, Corrected: c.ID, Extracted: orig}
	if c.Wrong {
		s.Wrong = true
	} else {
		s.Text = c.Text
	}
	return s
}

// RedactCorrection returns c with red applied to every text it holds. A
// fact's key, made of its normalised names (kgchain.FactKey), is made
// again from the redacted names, so that it goes on matching the
// statements the graph derives from the redacted memories; any other key
// is redacted as it is.
func RedactCorrection(c engram.Correction, red func(string) string) engram.Correction {
	made := c.Target == engram.CorrectFact && c.Key != "" && c.Key == kgchain.FactKey(c.Namespace, c.Subject, c.Predicate, c.Original)
	c.Text, c.Object, c.Reason, c.Original = red(c.Text), red(c.Object), red(c.Reason), red(c.Original)
	c.Subject, c.Predicate = red(c.Subject), red(c.Predicate)
	if made {
		c.Key = kgchain.FactKey(c.Namespace, c.Subject, c.Predicate, c.Original)
	} else {
		c.Key = red(c.Key)
	}
	return c
}

// CorrectionKeys are the keys a palace files a correction under: key (a
// memory's id, or a fact's key) and, for a memory whose text it names as
// extracted, alt (Alt). An unknown target is an error.
func CorrectionKeys(c engram.Correction) (key, alt string, ok bool) {
	switch c.Target {
	case engram.CorrectMemory:
		if c.Original != "" {
			alt = Alt(c.Namespace, c.Type, c.Original)
		}
		return c.Of, alt, true
	case engram.CorrectFact:
		if c.Key != "" {
			return c.Key, "", true
		}
		return kgchain.FactKey(c.Namespace, c.Subject, c.Predicate, c.Original), "", true
	}
	return "", "", false
}

// RedactRecord is a stored correction (its target, key, alt and body, the
// correction as JSON) with the spans txt replaces redacted: a fact's key
// made again from its redacted names (RedactCorrection), every other
// text redacted as it is.
func RedactRecord(target, key, alt, body string, txt *redacttext.Text) (newKey, newAlt, newBody string, err error) {
	newKey, newAlt, newBody = txt.Red(key), txt.Red(alt), txt.JSON(body)
	if target != engram.CorrectFact {
		return newKey, newAlt, newBody, nil
	}
	var c engram.Correction
	if err := json.Unmarshal([]byte(body), &c); err != nil {
		return "", "", "", err
	}
	fixed := RedactCorrection(c, txt.Red)
	if newKey = fixed.Key; newKey == "" {
		newKey = kgchain.FactKey(fixed.Namespace, fixed.Subject, fixed.Predicate, fixed.Original) // as CorrectionKeys makes it
	}
	raw, err := json.Marshal(fixed)
	return newKey, newAlt, string(raw), err
}

// ErrNoFact is ENOTFOUND for a fact id no palace holds.
func ErrNoFact(id string) error {
	return &engram.Error{Code: engram.ENOTFOUND, Field: "id", Message: fmt.Sprintf("no graph fact has the id %q (a fact's id changes when its chain is rebuilt: list the entity's facts again; a fact marked wrong is named by its correction's id)", id)}
}

// WrongFact is the fact a correction marked wrong, which has no triple
// left: named by the correction's id, with its names as the correction
// holds them.
func WrongFact(id string, c engram.Correction) engram.Triple {
	return engram.Triple{ID: id, Namespace: c.Namespace, Subject: c.Subject, Predicate: c.Predicate, Object: c.Original}
}

// Found is the memory a lookup of id found (GetMemories of it: ms and
// err): ENOTFOUND naming the id when none.
func Found(ms []engram.Memory, id string, err error) (engram.Memory, error) {
	if err != nil {
		return engram.Memory{}, err
	}
	if len(ms) == 0 {
		return engram.Memory{}, &engram.Error{Code: engram.ENOTFOUND, Field: "id", Message: fmt.Sprintf("no memory has the id %q", id)}
	}
	return ms[0], nil
}
