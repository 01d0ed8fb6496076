package extract

import (
	"strings"
	"time"

	"github.com/engram-dev/engram"
)

// MemoryTriple returns the knowledge-graph triple of a memory with a
// relation.
func MemoryTriple(m engram.Memory) (engram.Triple, bool) {
	r := m.Relation
	if m.Wrong || r == nil || strings.TrimSpace(r.Subject) == "" || r.Predicate == "" || strings.TrimSpace(r.Object) == "" {
		return engram.Triple{}, false
	}
	at := memoryTime(m)
	if at.IsZero() {
		return engram.Triple{}, false
	}
	return engram.Triple{Namespace: m.Namespace, Subject: r.Subject, Predicate: r.Predicate, Object: r.Object,
		ValidFrom: at, Sources: m.Sources, Memory: m.ID}, true
}

// Persona facets by predicate, for relations about the speaker.
var (
	identityPredicates = map[string]bool{"name": true, "lives_in": true, "is_from": true, "born_in": true, "age": true, "works_as": true,
		"works_at": true, "job": true, "role": true, "is": true, "studies": true, "studies_at": true, "nationality": true}
	relationshipPredicates = map[string]bool{"relationship_status": true, "married_to": true, "partner": true,
		"sister": true, "brother": true, "wife": true, "husband": true, "mother": true, "father": true, "son": true,
		"daughter": true, "friend": true, "best_friend": true, "boss": true, "manager": true, "colleague": true,
		"girlfriend": true, "boyfriend": true, "cousin": true, "child": true}
	// petPredicates tie a pet to the speaker: (Ana, dog, Rex).
	petPredicates   = map[string]bool{"dog": true, "cat": true, "has_pet": true}
	tastePredicates = map[string]bool{"likes": true, "dislikes": true, "prefers": true, "loves": true, "hates": true, "enjoys": true, "avoids": true}
)

// MemoryFacet returns the persona observation a memory makes about its
// speaker, if any: from its relation, identity (name, home, work),
// relationships, tastes and favourites, the tools chosen for projects,
// habits and actions; else, from its words (wordsFacet), the speaker's
// health, a pet of theirs or a pastime.
func MemoryFacet(m engram.Memory) (engram.FacetUpdate, bool) {
	r := m.Relation
	if m.Wrong || m.Subject == "" {
		return engram.FacetUpdate{}, false
	}
	if r == nil || !strings.EqualFold(strings.TrimSpace(r.Subject), strings.TrimSpace(m.Subject)) {
		return wordsFacet(m)
	}
	obj := strings.TrimSpace(r.Object)
	at := memoryTime(m)
	if obj == "" || at.IsZero() {
		return engram.FacetUpdate{}, false
	}
	u := engram.FacetUpdate{Namespace: m.Namespace, Speaker: m.Subject, At: at, Evidence: m.Sources, Key: r.Predicate, Value: obj}
	p := r.Predicate
	switch {
	case identityPredicates[p]:
		u.Facet = engram.FacetIdentity
	case petPredicates[p]:
		u.Facet = engram.FacetPet
	case relationshipPredicates[p] || strings.HasSuffix(p, "_of"):
		u.Facet = engram.FacetRelationship
	case tastePredicates[p]:
		// One facet per thing, whose value is the stance: "likes jazz"
		// then "dislikes jazz" is a change of one facet.
		u.Facet, u.Key, u.Value = engram.FacetPreference, strings.ToLower(obj), p
	case strings.HasPrefix(p, "favourite_"):
		u.Facet = engram.FacetPreference
	case p == "uses" || strings.HasPrefix(p, "uses_for_") || p == "works_on":
		u.Facet = engram.FacetProject
		if p == "uses" || p == "works_on" {
			u.Key, u.Value = p+":"+strings.ToLower(obj), obj
		}
	case p == "habit":
		u.Facet, u.Key = engram.FacetHabit, strings.ToLower(obj)
	default:
		// An action (see actionRelation): one facet per thing, whose
		// value is what was done with it, so the same place visited twice
		// is one facet with its history.
		kind, ok := actionFacet(p, obj)
		if !ok {
			return wordsFacet(m)
		}
		verb := strings.ReplaceAll(p, "_", " ")
		u.Facet, u.Key, u.Value = kind, strings.ToLower(obj), verb
		if kind == engram.FacetPlan {
			// A plan is the whole action: "stay in bed", not "bed".
			act := strings.TrimPrefix(verb, "plans to ") + " " + obj
			u.Key, u.Value = strings.ToLower(act), act
		}
	}
	return u, true
}

// Verbs whose action makes a persona facet, by the facet they make (a pet
// adopted or bought is a pet): the rest of what people do (made pasta,
// took medicine) stays in the graph.
var (
	activityVerbs   = stemSet("play practice practise train learn join compete coach", false)
	placeVerbs      = stemSet("go visit travel fly drive move return arrive stay live walk hike", false)
	possessionVerbs = stemSet("buy own adopt purchase order", false)
)

// actionFacet returns the persona facet of an action's predicate and
// object: a plan of any kind, a place the speaker went to when it is named
// (capitalised: "went to Miami", not "went to the hairdresser"), an
// activity, a possession. A name with a digit is no place ("flew an A380").
func actionFacet(pred, obj string) (string, bool) {
	plan := strings.HasPrefix(pred, "plans_to_")
	verb, _, _ := strings.Cut(strings.TrimPrefix(pred, "plans_to_"), "_")
	stem := verbStem(verb)
	switch {
	case plan:
		return engram.FacetPlan, true
	case placeVerbs[stem] && capitalised(obj) && !strings.ContainsAny(obj, "0123456789"):
		return engram.FacetPlace, true
	case activityVerbs[stem]:
		return engram.FacetActivity, true
	case possessionVerbs[stem] && isPet(obj):
		return engram.FacetPet, true
	case possessionVerbs[stem]:
		return engram.FacetPossession, true
	}
	return "", false
}

// petNouns are the animals people keep as pets, in general English.
var petNouns = wordSet("dog dogs puppy puppies pup cat cats kitten kittens kitty hamster hamsters gerbil gerbils " +
	"rabbit rabbits bunny bunnies parrot parrots budgie budgies parakeet canary goldfish turtle turtles " +
	"tortoise lizard gecko iguana snake ferret chinchilla hedgehog pony horse")

// isPet reports whether a thing is a pet: its last word (its head noun,
// "a rescue puppy") is one of petNouns.
func isPet(obj string) bool {
	ws := strings.Fields(strings.ToLower(obj))
	return len(ws) > 0 && petNouns[strings.Trim(ws[len(ws)-1], ".,!")]
}

// memorySpeaker returns when a memory holds and the last word of its
// speaker's name, in lower case, as its words name the speaker
// ("lindqvist" of "Mara Lindqvist"); false without either.
func memorySpeaker(m engram.Memory) (time.Time, string, bool) {
	at := memoryTime(m)
	sw := plainWords(m.Subject)
	if at.IsZero() || len(sw) == 0 {
		return time.Time{}, "", false
	}
	return at, sw[len(sw)-1], true
}

func memoryTime(m engram.Memory) time.Time {
	if !m.ValidFrom.IsZero() {
		return m.ValidFrom
	}
	return m.TS
}

// wordsFacet returns the facet a memory's words make when its relation
// makes none: the speaker's health (healthFacet), else a pet of theirs
// (petFacet), else a pastime (activityFacet).
func wordsFacet(m engram.Memory) (engram.FacetUpdate, bool) {
	if u, ok := healthFacet(m); ok {
		return u, true
	}
	if u, ok := petFacet(m); ok {
		return u, true
	}
	return activityFacet(m)
}

// petGetVerbs are the verbs by which a speaker has or comes to have a pet:
// "Ana got a new puppy", "Ana has two cats".
var petGetVerbs = wordSet("got get gets getting has have had adopted adopt adopting bought rescued found took")

// petFacet returns the pet facet of a memory that names a pet of its
// speaker's: "<speaker>'s cat", or a pet the speaker got, has or adopted
// ("Ana got a new puppy", "Ana just adopted two kittens"), with articles,
// numbers and a pet's adjectives between; keyed by the animal.
func petFacet(m engram.Memory) (engram.FacetUpdate, bool) {
	at, who, ok := memorySpeaker(m)
	if !ok {
		return engram.FacetUpdate{}, false
	}
	ws := plainWords(m.Text)
	for i, w := range ws {
		if !petNouns[w] {
			continue
		}
		j := i - 1
		for j >= 0 && i-j <= 4 && (petPhraseWords[ws[j]] || numberWords[ws[j]]) {
			j--
		}
		if j < 0 {
			continue
		}
		owned := ws[j] == who+"'s"
		// The speaker, maybe an adverb between, got it: "Ana just got".
		got := petGetVerbs[ws[j]] && (j >= 1 && ws[j-1] == who || j >= 2 && ws[j-2] == who)
		if owned || got {
			return engram.FacetUpdate{Namespace: m.Namespace, Speaker: m.Subject, At: at, Evidence: m.Sources,
				Facet: engram.FacetPet, Key: w, Value: w}, true
		}
	}
	return engram.FacetUpdate{}, false
}

// petPhraseWords may stand between a pet's owner or getting and the pet:
// articles and the adjectives of pets.
var petPhraseWords = wordSet("a an the another new little old big small baby young rescue stray second first " +
	"black white brown grey gray orange tabby fluffy sweet cute adorable")

// numberWords count pets: "two cats".
var numberWords = wordSet("two three four five six 2 3 4 5 6")

// healthFacet returns the health facet of a memory about its speaker that
// tells of a condition (healthMention): one facet per condition, so a flu
// told of twice is one facet with its history. A memory about someone of
// the speaker's ("Ana's mother had the flu") is not the speaker's health;
// a part of the speaker's body ("Ana's back hurts") is.
func healthFacet(m engram.Memory) (engram.FacetUpdate, bool) {
	at := memoryTime(m)
	if at.IsZero() {
		return engram.FacetUpdate{}, false
	}
	if rest, ok := cutPrefixFold(strings.TrimSpace(m.Text), m.Subject); ok && (strings.HasPrefix(rest, "'s ") || strings.HasPrefix(rest, "’s ")) {
		if f := strings.Fields(rest); len(f) < 2 || !bodyParts[strings.ToLower(f[1])] {
			return engram.FacetUpdate{}, false // someone or something of the speaker's; their own back is theirs
		}
	}
	cond, ok := healthMention(m.Text)
	if !ok {
		return engram.FacetUpdate{}, false
	}
	return engram.FacetUpdate{Namespace: m.Namespace, Speaker: m.Subject, At: at, Evidence: m.Sources,
		Facet: engram.FacetHealth, Key: cond, Value: cond}, true
}
