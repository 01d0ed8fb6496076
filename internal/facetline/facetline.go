// Package facetline keeps the timeline of a persona facet (the values a
// facet of a speaker had, each from when it held, with the turns that say
// so) as every palace folds it: the order observations arrive in does not
// change the result, nor does one applied twice. A palace stores the last
// value as the facet's and the others as its history.
package facetline

import (
	"slices"
	"strconv"
	"time"

	engram "github.com/engram-dev/engram"
)

// MaxHistory bounds the past values kept per facet.
const MaxHistory = 50

// MaxEvidence bounds the turns kept as one value's evidence (as many as a
// memory's sources).
const MaxEvidence = 200

// Observation is a value held from From, in a facet's timeline.
type Observation struct {
	Value    string    `json:"value"`
	From     time.Time `json:"from"`
	Evidence []string  `json:"evidence"`
}

// Check reports the first update no palace stores: EINVALID naming the
// field (facets[i].speaker, key, value, at) for one without namespace,
// speaker, facet, key, value or time, or with a time storable refuses.
func Check(updates []engram.FacetUpdate, storable func(time.Time) error) error {
	for i, u := range updates {
		field := "facets[" + strconv.Itoa(i) + "]."
		switch {
		case u.Namespace == "" || u.Speaker == "":
			return engram.FieldError(field+"speaker", "namespace and speaker are required")
		case u.Facet == "" || u.Key == "":
			return engram.FieldError(field+"key", "facet and key are required")
		case u.Value == "":
			return engram.FieldError(field+"value", "value is required")
		case u.At.IsZero():
			return engram.FieldError(field+"at", "time is required")
		}
		if err := storable(u.At); err != nil {
			return engram.FieldError(field+"at", "%v", err)
		}
	}
	return nil
}

// Line is the timeline of a facet whose value is cur, after the values of
// past, oldest first.
func Line(cur Observation, past []engram.FacetChange) []Observation {
	line := make([]Observation, 0, len(past)+1)
	for _, p := range past {
		line = append(line, Observation{p.Value, p.From, p.Evidence})
	}
	return append(line, cur)
}

// Split is what a palace stores of line, which is not empty: its last
// value, held since it began, and the values before it (the latest
// MaxHistory), each held until the next began.
func Split(line []Observation) (cur Observation, past []engram.FacetChange) {
	cur = line[len(line)-1]
	past = make([]engram.FacetChange, 0, len(line)-1)
	for i, o := range line[:len(line)-1] {
		past = append(past, engram.FacetChange{Value: o.Value, From: o.From, To: line[i+1].From, Evidence: o.Evidence})
	}
	if len(past) > MaxHistory {
		past = past[len(past)-MaxHistory:]
	}
	return cur, past
}

// Fold adds o to a timeline sorted by From: an observation of the value in
// force at its time only adds evidence (and moves the start earlier when it
// is the earlier statement); any other starts a new entry.
func Fold(line []Observation, o Observation) []Observation {
	i, _ := slices.BinarySearchFunc(line, o.From, func(x Observation, t time.Time) int { return x.From.Compare(t) })
	// line[i-1] is in force at o.From (the last entry starting at or before it).
	for i < len(line) && line[i].From.Equal(o.From) {
		i++
	}
	if i > 0 && line[i-1].Value == o.Value {
		line[i-1].Evidence = Union(line[i-1].Evidence, o.Evidence)
		return line
	}
	if i < len(line) && line[i].Value == o.Value {
		line[i].From = o.From
		line[i].Evidence = Union(line[i].Evidence, o.Evidence)
		return line
	}
	return slices.Insert(line, i, Observation{o.Value, o.From, slices.Clone(o.Evidence)})
}

// Union is the sorted union of two lists of turn ids, capped at
// MaxEvidence (a graph statement's sources are merged alike).
func Union(a, b []string) []string {
	out := append(slices.Clone(a), b...)
	slices.Sort(out)
	out = slices.Compact(out)
	return out[:min(len(out), MaxEvidence)]
}

// Keep is line with each value's evidence passed through kept (which
// drops forgotten turns); a value left without evidence goes. changed
// says whether any evidence went; an empty result means the facet goes.
func Keep(line []Observation, kept func([]string) []string) (out []Observation, changed bool) {
	for _, o := range line {
		ev := kept(o.Evidence)
		changed = changed || len(ev) < len(o.Evidence)
		if len(ev) > 0 {
			o.Evidence = ev
			out = append(out, o)
		}
	}
	return out, changed
}

// Gather appends facet f of speaker who, updated at updated, to personas,
// the personas of namespace read so far from rows ordered by speaker: a
// new speaker starts a persona, and a persona's Updated is its latest
// facet's.
func Gather(personas []engram.Persona, namespace, who string, f engram.PersonaFacet, updated time.Time) []engram.Persona {
	if len(personas) == 0 || personas[len(personas)-1].Speaker != who {
		personas = append(personas, engram.Persona{Namespace: namespace, Speaker: who})
	}
	p := &personas[len(personas)-1]
	p.Facets = append(p.Facets, f)
	if updated.After(p.Updated) {
		p.Updated = updated
	}
	return personas
}
