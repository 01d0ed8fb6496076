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

// askedFacets returns the facet kinds the question asks for.
func askedFacets(text string) map[string]bool {
	kinds := map[string]bool{}
	for _, w := range words(strings.ToLower(text)) {
		for _, k := range facetWords[w] {
			kinds[k] = true
		}
	}
	return kinds
}

// personaFacetEvidence adds to ev the turns behind the facets of the kinds
// the question asks for, of the speakers it names (matched as
// namedSpeakers matches them). It reads the namespace's personas only for
// a question that asks for a kind.
func (s *Service) personaFacetEvidence(ctx context.Context, ev *evidence, ns, text string) error {
	kinds := askedFacets(text)
	if len(kinds) == 0 {
		return nil
	}
	ps, err := s.Layers.Persona(ctx, namespaceOrDefault(ns), "")
	if err != nil {
		return fmt.Errorf("read personas: %w", err)
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
				ev.cite(ev.layer, id, personaEvidence)
			}
			for _, h := range f.History {
				for _, id := range h.Evidence {
					ev.cite(ev.layer, id, personaEvidence)
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
