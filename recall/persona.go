package recall

import (
	"context"
	"fmt"
	"strings"

	"github.com/engram-dev/engram"
)

// A question about a kind of thing in a person's life ("What are Kate's
// hobbies?", "Which countries has Muhammad visited?") has its answers in
// several turns, often of several sessions, and rarely in the words of the
// question. The person's persona facets of that kind each name the turns
// they stem from: on the deep path every such turn gains layer evidence
// and may join the candidates.

// facetWords are the words by which a question asks for a kind of facet.
// They name the kinds themselves (engram's facet kinds), not anything said
// in a conversation.
var facetWords = func() map[string][]string {
	m := map[string][]string{}
	add := func(words string, kinds ...string) {
		for _, w := range strings.Fields(words) {
			m[w] = append(m[w], kinds...)
		}
	}
	add("hobby hobbies activity activities pastime pastimes sport sports game games play plays played playing",
		engram.FacetActivity, engram.FacetHabit, engram.FacetPreference) // "I like running": a hobby told as a taste
	add("place places country countries city cities visit visits visited travel travels traveled travelled trip trips",
		engram.FacetPlace)
	add("live lives lived home", engram.FacetPlace, engram.FacetIdentity)
	add("own owns owned buy buys bought purchase purchased", engram.FacetPossession)
	add("plan plans planned planning", engram.FacetPlan)
	add("family friend friends sister sisters brother brothers parents partner kids children", engram.FacetRelationship)
	add("pet pets dog dogs cat cats animal animals", engram.FacetPet)
	add("job jobs work works worked career study studies studied school college university", engram.FacetIdentity, engram.FacetProject)
	add("like likes liked love loves loved favorite favourite enjoy enjoys prefer prefers", engram.FacetPreference)
	add("health healthy illness illnesses ill sick sickness disease diseases symptom symptoms medical medication medications medicine medicines meds injury injuries injured allergy allergies",
		engram.FacetHealth)
	return m
}()

// personaEvidence is a facet's evidence for the turns it stems from, as
// strong as the best memory match of the query.
const personaEvidence = 1.0

// A question that asks for the set of a kind ("What are Kate's hobbies?",
// "Which countries has Paola visited?", "What games do they play?") is
// answered by every value of the kind, each in a turn of its own that
// rarely shares a word with the question: the person's facets of the kind
// are its answers, and their turns get a signal of their own (persona,
// weighed by DeepConfig.PersonaWeight) beside the layer evidence. A
// question about one thing of a kind ("What did Elise play on 5 Jan?",
// "When does Elise plan to meet her friends?") keeps the layer evidence
// alone: the facets of its kind are many, and one of them answers.

// auxiliaries are the verbs that follow a question word when it is the
// question's object or subject ("What do Melanie's kids like?"), not the
// determiner of the thing asked for ("What games ...").
var auxiliaries = map[string]bool{"do": true, "does": true, "did": true, "is": true, "are": true, "was": true, "were": true,
	"has": true, "have": true, "had": true, "will": true, "would": true, "can": true, "could": true, "should": true}

// copulas open "What are Kate's hobbies?", whose thing asked for follows
// the possessive.
var copulas = map[string]bool{"is": true, "are": true, "was": true, "were": true}

// prepositions end the thing asked for after a possessive: "What are
// Fahim's preferred activities for relaxation?".
var prepositions = map[string]bool{"of": true, "for": true, "in": true, "on": true, "at": true, "with": true, "to": true,
	"from": true, "about": true, "by": true}

// askedSet returns the facet kinds whose set the question asks for, or
// nil: the thing it asks for is a kind named in the plural. That thing
// stands after "what", "which" or "how many", before the verb ("What new
// sports did ...", "What kind of pets does ..."), or after the possessive
// of "What are Kate's ...", before a preposition; its last facet word
// names the kind. A question word followed by another auxiliary ("What do
// Ana's kids like?") asks for no thing by its name.
func askedSet(text string) map[string]bool {
	ws := words(strings.ToLower(text))
	for i, w := range ws {
		start := i + 1
		switch {
		case w == "how" && i+1 < len(ws) && ws[i+1] == "many":
			start = i + 2
		case w != "what" && w != "which":
			continue
		}
		if start < len(ws) && auxiliaries[ws[start]] {
			if !copulas[ws[start]] {
				return nil
			}
			// "What are Kate's favourite hobbies": the words after "'s".
			for j := start + 1; j < len(ws) && j <= start+4; j++ {
				if ws[j] == "s" {
					end := j + 1
					for end < len(ws) && end < j+4 && !prepositions[ws[end]] {
						end++
					}
					return pluralKind(ws[j+1 : end])
				}
			}
			return nil
		}
		end := start
		for end < len(ws) && end < start+4 && !auxiliaries[ws[end]] {
			end++
		}
		return pluralKind(ws[start:end])
	}
	return nil
}

// pluralKind returns the kinds of the last facet word of ws when it is a
// plural noun ("hobbies", "countries", "meds"; "illness" is not), else nil.
func pluralKind(ws []string) map[string]bool {
	for i := len(ws) - 1; i >= 0; i-- {
		w := ws[i]
		if len(facetWords[w]) == 0 {
			continue
		}
		if !strings.HasSuffix(w, "s") || strings.HasSuffix(w, "ss") {
			return nil
		}
		return kindsOf([]string{w})
	}
	return nil
}

// askedFacets returns the facet kinds the question asks for.
func askedFacets(text string) map[string]bool {
	return kindsOf(words(strings.ToLower(text)))
}

// kindsOf returns the facet kinds the lower-case words ws name.
func kindsOf(ws []string) map[string]bool {
	kinds := map[string]bool{}
	for _, w := range ws {
		for _, k := range facetWords[w] {
			kinds[k] = true
		}
	}
	return kinds
}

// personaFacetEvidence adds to ev the turns behind the facets of the kinds
// the question asks for, of the speakers it names (matched as
// namedSpeakers matches them): layer evidence, and the persona signal for
// the facets of a kind whose set it asks for (askedSet). It reads the
// namespace's personas only for a question that asks for a kind.
func (s *Service) personaFacetEvidence(ctx context.Context, ev *evidence, ns, text string) error {
	kinds := askedFacets(text)
	if len(kinds) == 0 {
		return nil
	}
	ps, err := s.Layers.Persona(ctx, namespaceOrDefault(ns), "")
	if err != nil {
		return fmt.Errorf("read personas: %w", err)
	}
	set := askedSet(text)
	cite := func(kind, id string) {
		ev.cite(ev.layer, id, personaEvidence)
		if set[kind] {
			ev.persona[id] = 1
		}
	}
	qwords, lower := words(text), strings.ToLower(text)
	for _, p := range ps {
		if !namesPersona(qwords, lower, p) {
			continue
		}
		for _, f := range p.Facets {
			if !kinds[f.Facet] {
				continue
			}
			for _, id := range f.Evidence {
				cite(f.Facet, id)
			}
			for _, h := range f.History {
				for _, id := range h.Evidence {
					cite(f.Facet, id)
				}
			}
		}
	}
	return nil
}

// namesPersona reports whether the query (its words and its lower-case
// text) names the persona's speaker: by the speaker's name, or by a name
// the person gave for themself ("I'm Sam", said by the account "sk8r": a
// facet of predicate name or alias, current or past).
func namesPersona(qwords []string, lowerQuery string, p engram.Persona) bool {
	if namesSpeaker(qwords, lowerQuery, strings.ToLower(p.Speaker)) {
		return true
	}
	for _, f := range p.Facets {
		if f.Facet != engram.FacetIdentity || !engram.AliasPredicate(f.Key) {
			continue
		}
		if namesSpeaker(qwords, lowerQuery, strings.ToLower(f.Value)) {
			return true
		}
		for _, h := range f.History {
			if namesSpeaker(qwords, lowerQuery, strings.ToLower(h.Value)) {
				return true
			}
		}
	}
	return false
}
