// Package kgchain is the knowledge graph's logic that does not depend on
// where it is stored, so that every palace builds the same graph from the
// same triples: how entity names compare and show, which statements form a
// chain whose values replace each other, and how a chain's statements,
// in time order, make its triples.
package kgchain

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/facetline"
	"github.com/engram-dev/engram/internal/kwindex"
)

// NormName is how entity names compare: NFKC, case-folded, white space
// collapsed, surrounding punctuation and a leading article dropped.
func NormName(s string) string {
	s = strings.ToLower(kwindex.NFKC(s))
	s = strings.Join(strings.Fields(s), " ")
	s = strings.TrimFunc(s, func(r rune) bool { return unicode.IsPunct(r) && r != '#' && r != '+' })
	for _, a := range []string{"the ", "a ", "an "} {
		if rest, ok := strings.CutPrefix(s, a); ok && rest != "" {
			s = rest
			break
		}
	}
	return s
}

// DisplayName is name as an entity shows it: NFKC, white space collapsed.
func DisplayName(name string) string { return strings.Join(strings.Fields(kwindex.NFKC(name)), " ") }

// BetterName reports whether spelling a names an entity better than b, so
// that the name shown does not depend on which spelling came first: more
// words capitalised (Go over go), then fewer capitals (Alice over ALICE),
// then the smaller string.
func BetterName(a, b string) bool {
	caps := func(s string) (words, letters int) {
		for _, w := range strings.Fields(s) {
			if r, _ := utf8.DecodeRuneInString(w); unicode.IsUpper(r) {
				words++
			}
		}
		for _, r := range s {
			if unicode.IsUpper(r) {
				letters++
			}
		}
		return
	}
	aw, al := caps(a)
	bw, bl := caps(b)
	if aw != bw {
		return aw > bw
	}
	if al != bl {
		return al < bl
	}
	return a < b
}

// FactKey is the key a fact correction matches statements by: the
// namespace, the normalised subject and object names and the predicate.
func FactKey(ns, subject, predicate, object string) string {
	return NormKey(ns, NormName(subject), predicate, NormName(object))
}

// NormKey is FactKey of names already normalised.
func NormKey(ns, subjectNorm, predicate, objectNorm string) string {
	return ns + "\x1f" + subjectNorm + "\x1f" + predicate + "\x1f" + objectNorm
}

// exclusive are pairs of predicates that contradict each other for the
// same subject and object.
var exclusive = map[string]string{"likes": "dislikes", "dislikes": "likes"}

// Chain names the chain of the statement (subject, predicate, object),
// entities by number, whose values replace each other:
//
//   - a single-valued predicate (engram.SingleValued): the subject and
//     predicate, whose value is the object ("Alice lives_in Berlin",
//     later "Alice lives_in Lisbon");
//   - "likes" and "dislikes": the subject and object, whose value is the
//     predicate;
//   - any other predicate: the statement itself (it holds from its first
//     statement on).
func Chain(subject int64, predicate string, object int64) string {
	switch {
	case engram.SingleValued(predicate):
		return strconv.FormatInt(subject, 10) + "|" + predicate
	case exclusive[predicate] != "":
		return strconv.FormatInt(subject, 10) + "|likes|" + strconv.FormatInt(object, 10)
	}
	return strconv.FormatInt(subject, 10) + "|" + predicate + "|" + strconv.FormatInt(object, 10)
}

// Statement is a statement of a chain.
type Statement struct {
	At        int64 // Unix nanoseconds
	Subject   int64
	Predicate string
	Object    int64
	Sources   []string
	Memory    string
	Corrected string // the key of the fact correction that replaced the object
}

// value is what replaces what within a chain.
func (s Statement) value(single bool) string {
	if single {
		return strconv.FormatInt(s.Object, 10)
	}
	return s.Predicate
}

// Key is a statement's place in its chain, and what a triple holds of its
// first statement (valid_from, predicate, object).
type Key struct {
	At        int64
	Predicate string
	Object    int64
}

// Key is s's place in its chain.
func (s Statement) Key() Key { return Key{s.At, s.Predicate, s.Object} }

// Less orders statements within a chain.
func (k Key) Less(o Key) bool { return compareKeys(k, o) < 0 }

func compareKeys(a, b Key) int {
	switch {
	case a.At != b.At:
		return cmp.Compare(a.At, b.At)
	case a.Predicate != b.Predicate:
		return strings.Compare(a.Predicate, b.Predicate)
	}
	return cmp.Compare(a.Object, b.Object)
}

// Sort puts statements in chain order.
func Sort(sts []Statement) {
	slices.SortStableFunc(sts, func(a, b Statement) int { return compareKeys(a.Key(), b.Key()) })
}

// Triple is a triple a chain's statements make: its first statement, the
// sources of all of them, and when the next value began (nil: still
// valid).
type Triple struct {
	First   Statement
	Sources []string
	ValidTo *int64
}

// Triples are the triples of a chain's statements, in chain order:
// consecutive statements of one value make one triple with all their
// sources, valid until the next value's first statement (statements at
// the same moment with different values: the last in value order wins,
// the others hold for no time).
func Triples(sts []Statement, single bool) []Triple {
	var out []Triple
	for i := 0; i < len(sts); {
		first := sts[i]
		srcs := first.Sources
		j := i + 1
		for j < len(sts) && sts[j].value(single) == first.value(single) {
			srcs = facetline.Union(srcs, sts[j].Sources)
			j++
		}
		t := Triple{First: first, Sources: srcs}
		if j < len(sts) {
			at := sts[j].At
			t.ValidTo = &at
		}
		out = append(out, t)
		i = j
	}
	return out
}

// Confidence grows with the evidence: 1 - 0.5^sources.
func Confidence(sources int) float64 {
	c := 1.0
	for range min(sources, 20) {
		c /= 2
	}
	return 1 - c
}

// TripleID is the id of the triple of namespace ns whose first statement
// is first.
func TripleID(ns string, first Statement) string {
	h := sha256.Sum256([]byte(ns + "|" + strconv.FormatInt(first.Subject, 10) + "|" + first.Predicate + "|" +
		strconv.FormatInt(first.Object, 10) + "|" + strconv.FormatInt(first.At, 10)))
	return "kg-" + hex.EncodeToString(h[:])[:20]
}

// Corrector is what Correct asks a palace, inside the transaction that
// rebuilds a chain.
type Corrector struct {
	// Wrong reports whether a correction marked the memory of id wrong.
	Wrong func(memory string) (bool, error)
	// Norm returns the normalised name of an entity.
	Norm func(entity int64) (string, error)
	// Last returns the last fact correction of a key (NormKey), nil when
	// there is none or the last is a restore.
	Last func(key string) (*engram.Correction, error)
	// Resolve returns the entity of a name, made when new.
	Resolve func(name string) (int64, error)
}

// Correct applies the namespace's corrections to the statements of a
// chain being rebuilt, in chain order: statements of a memory marked
// wrong, or of a fact marked wrong, are left out; a replaced object
// replaces theirs (and names the correction's key), the statements then
// sorted again.
func Correct(ns string, sts []Statement, c Corrector) ([]Statement, error) {
	norms := map[int64]string{}
	norm := func(n int64) (string, error) {
		if s, ok := norms[n]; ok {
			return s, nil
		}
		s, err := c.Norm(n)
		norms[n] = s
		return s, err
	}
	out := sts[:0]
	changed := false
	for _, s := range sts {
		if s.Memory != "" {
			wrong, err := c.Wrong(s.Memory)
			if err != nil {
				return nil, err
			}
			if wrong {
				changed = true
				continue
			}
		}
		sn, err := norm(s.Subject)
		if err != nil {
			return nil, err
		}
		on, err := norm(s.Object)
		if err != nil {
			return nil, err
		}
		key := NormKey(ns, sn, s.Predicate, on)
		last, err := c.Last(key)
		if err != nil {
			return nil, err
		}
		switch {
		case last == nil:
		case last.Wrong:
			changed = true
			continue
		case strings.TrimSpace(last.Object) != "":
			obj, err := c.Resolve(last.Object)
			if err != nil {
				return nil, err
			}
			s.Object, s.Corrected = obj, key
			changed = true
		}
		out = append(out, s)
	}
	if changed {
		Sort(out)
	}
	return out, nil
}

// Check reports the first triple no palace stores: EINVALID naming the
// field (triples[i].namespace, subject, predicate, object, valid_from)
// for one without namespace, subject, predicate, object or valid_from,
// or with a time storable refuses.
func Check(triples []engram.Triple, storable func(time.Time) error) error {
	for i, t := range triples {
		field := "triples[" + strconv.Itoa(i) + "]."
		switch {
		case t.Namespace == "":
			return engram.FieldError(field+"namespace", "namespace is required")
		case NormName(t.Subject) == "":
			return engram.FieldError(field+"subject", "subject is required")
		case t.Predicate == "":
			return engram.FieldError(field+"predicate", "predicate is required")
		case NormName(t.Object) == "":
			return engram.FieldError(field+"object", "object is required")
		case t.ValidFrom.IsZero():
			return engram.FieldError(field+"valid_from", "valid_from is required")
		}
		if err := storable(t.ValidFrom); err != nil {
			return engram.FieldError(field+"valid_from", "%v", err)
		}
	}
	return nil
}

// Dirty is the chains a batch of statements changed, each with the key of
// the first statement changed on it, in the order first changed: each is
// rebuilt once after the batch, from that statement on.
type Dirty[C comparable] struct {
	from  map[C]Key
	order []C
}

// Mark records that the statement at key changed chain c.
func (d *Dirty[C]) Mark(c C, key Key) {
	first, ok := d.from[c]
	switch {
	case !ok:
		if d.from == nil {
			d.from = map[C]Key{}
		}
		d.from[c] = key
		d.order = append(d.order, c)
	case key.Less(first):
		d.from[c] = key
	}
}

// Each calls rebuild with each chain marked and its first key changed, in
// the order first marked, until one fails.
func (d *Dirty[C]) Each(rebuild func(c C, from Key) error) error {
	for _, c := range d.order {
		if err := rebuild(c, d.from[c]); err != nil {
			return err
		}
	}
	return nil
}
