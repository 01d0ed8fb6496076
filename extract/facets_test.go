package extract_test

import (
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/extract"
)

// TestMemoryFacetActions: an action's triple makes a persona facet of its
// kind (a plan, a place by name, an activity, a possession, a pet), keyed
// by the thing; a pet by name is keyed by its kind; other actions stay in
// the graph alone.
func TestMemoryFacetActions(t *testing.T) {
	at := time.Date(2024, 1, 5, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		pred, obj         string
		facet, key, value string // facet "": none
	}{
		{"went_to", "Miami", engram.FacetPlace, "miami", "went to"},
		{"visited", "the Netherlands", engram.FacetPlace, "the netherlands", "visited"},
		{"went_to", "hairdresser", "", "", ""}, // a place, not by name
		{"flew", "A380", "", "", ""},           // a name with a digit is no place
		{"played", "volleyball", engram.FacetActivity, "volleyball", "played"},
		{"bought", "new bike", engram.FacetPossession, "new bike", "bought"},
		{"adopted", "rescue puppy", engram.FacetPet, "rescue puppy", "adopted"},
		{"dog", "Rex", engram.FacetPet, "dog", "Rex"},
		{"plans_to_visit", "Acropolis", engram.FacetPlan, "visit acropolis", "visit Acropolis"},
		{"plans_to_stay_in", "bed", engram.FacetPlan, "stay in bed", "stay in bed"},
		{"made", "pasta", "", "", ""},
	} {
		m := engram.Memory{ID: "m1", Namespace: "ns", Type: engram.MemoryEvent, Subject: "Ana", Text: "x", TS: at,
			Sources: []string{"t1"}, Relation: &engram.Relation{Subject: "Ana", Predicate: c.pred, Object: c.obj}}
		u, ok := extract.MemoryFacet(m)
		if c.facet == "" {
			if ok {
				t.Errorf("(%s, %s): facet %+v, want none", c.pred, c.obj, u)
			}
			continue
		}
		if !ok || u.Facet != c.facet || u.Key != c.key || u.Value != c.value || u.Speaker != "Ana" || len(u.Evidence) != 1 {
			t.Errorf("(%s, %s): facet %+v (%v), want %s %q = %q", c.pred, c.obj, u, ok, c.facet, c.key, c.value)
		}
	}
}

// TestMemoryFacetHealth: a memory about its speaker that tells of a
// condition makes a health facet keyed by the condition, whatever its
// relation says nothing of; a state of being unwell counts only after a
// verb of being ("sick of waiting", "ill" for "I'll" do not), a pain only
// of a body part, and a memory about someone of the speaker's is not the
// speaker's health. The sentences are made up.
func TestMemoryFacetHealth(t *testing.T) {
	at := time.Date(2024, 3, 2, 9, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		text string
		rel  *engram.Relation
		key  string // "": no health facet
	}{
		{"Ana caught the flu after the ferry ride", nil, "flu"},
		{"Ana was diagnosed with asthma as a teenager", nil, "asthma"},
		{"Ana picked up hay fever tablets at the chemist", nil, "hay fever"},
		{"Ana has had a migraine since Tuesday", nil, "migraine"},
		{"Ana got sick on the overnight bus", nil, "sick"},
		{"Ana has been feeling unwell all week", nil, "unwell"},
		{"Ana gets knee pain from the new hiking boots", nil, "knee pain"},
		{"Ana said her back hurts from the office chair", nil, "back pain"},
		{"Ana is sick of waiting for the landlord", nil, ""},
		{"ill bring the cake on Sunday Ana said", nil, ""},
		{"Ana loves cold mornings by the lake", nil, ""},
		{"Ana's brother has the flu", nil, ""},
		{"Ana's knee hurts after the long descent", nil, "knee pain"},
		{"Ana went to the dentist about a toothache", &engram.Relation{Subject: "Ana", Predicate: "went_to", Object: "dentist"}, "toothache"},
		{"Ana likes warm broth when she has a cough", &engram.Relation{Subject: "Ana", Predicate: "likes", Object: "warm broth"}, ""}, // its relation's facet
	} {
		m := engram.Memory{ID: "m1", Namespace: "ns", Type: engram.MemoryEvent, Subject: "Ana", Text: c.text, TS: at,
			Sources: []string{"t1"}, Relation: c.rel}
		u, ok := extract.MemoryFacet(m)
		if c.key == "" {
			if ok && u.Facet == engram.FacetHealth {
				t.Errorf("%q: health facet %+v, want none", c.text, u)
			}
			continue
		}
		if !ok || u.Facet != engram.FacetHealth || u.Key != c.key || u.Value != c.key || u.Speaker != "Ana" || len(u.Evidence) != 1 || !u.At.Equal(at) {
			t.Errorf("%q: facet %+v (%v), want health %q", c.text, u, ok, c.key)
		}
	}
}

// TestMemoryFacetPetWords: a memory whose relation makes no facet names a
// pet of its speaker's by its words: the speaker's own ("Ana's cat"), or
// one the speaker got, has or adopted; a pet of someone else's, or one the
// speaker only met, is not. The sentences are made up.
func TestMemoryFacetPetWords(t *testing.T) {
	at := time.Date(2024, 3, 2, 9, 0, 0, 0, time.UTC)
	for _, c := range []struct{ subject, text, key string }{
		{"Ana", "Ana got a new puppy from the shelter", "puppy"},
		{"Ana", "Ana just adopted two kittens", "kittens"},
		{"Ana", "Ana took Ana's old dog to the vet", "dog"},
		{"Mara Lindqvist", "Mara Lindqvist's tabby cat knocked the vase over", "cat"},
		{"Ana", "Ana’s old tortoise sleeps under the stove", "tortoise"},
		{"Ana", "Ana's neighbour got a parrot", ""},
		{"Ana", "Ana met a friendly dog at the park", ""},
		{"Ana", "Ana watched a film about a horse", ""},
	} {
		u, ok := facetOfWords(t, c.subject, c.text, at, c.key != "")
		if c.key == "" {
			continue
		}
		if !ok || u.Facet != engram.FacetPet || u.Key != c.key || u.Speaker != c.subject {
			t.Errorf("%q: facet %+v (%v), want pet %q", c.text, u, ok, c.key)
		}
	}
}

// TestMemoryFacetActivityWords: a memory whose relation makes no facet
// tells of a pastime of its speaker's by its words: a gerund after "go"
// ("went hiking"), or a class, a lesson or a course taken, joined or signed
// up for, keyed by its name; not someone else's pastime, not a denied one,
// and not "going to" or a noun in "-ing" after "go". The sentences are made
// up.
func TestMemoryFacetActivityWords(t *testing.T) {
	at := time.Date(2024, 3, 2, 9, 0, 0, 0, time.UTC)
	for _, c := range []struct{ subject, text, key, value string }{
		{"Ana", "Ana went fishing with her uncle at the lake", "fishing", "went"},
		{"Ana", "Ana is planning on going bouldering this weekend", "bouldering", "going"},
		{"Mara Lindqvist", "Mara Lindqvist and others go sailing every summer", "sailing", "go"},
		{"Ana", "Ana just signed up for a pottery class", "pottery class", "signed"},
		{"Ana", "Ana is taking weekly Spanish lessons", "spanish lessons", "taking"},
		{"Ana", "Ana joined a salsa dance workshop", "salsa dance workshop", "joined"},
		{"Ana", "Ana's brother went fishing on Sunday", "", ""},
		{"Ana", "Ana has never gone skiing", "", ""},
		{"Ana", "Ana didn't go swimming because of the storm", "", ""},
		{"Ana", "Ana is going to visit her aunt", "", ""},
		{"Ana", "Ana went home that evening", "", ""},
		{"Ana", "Ana will go everything she can", "", ""},
		{"Ana", "Ana took the class photo", "", ""}, // no name before the class noun
		{"Ana", "Ana took a nap after lunch", "", ""},
	} {
		u, ok := facetOfWords(t, c.subject, c.text, at, c.key != "")
		if c.key == "" {
			continue
		}
		if !ok || u.Facet != engram.FacetActivity || u.Key != c.key || u.Value != c.value || u.Speaker != c.subject ||
			len(u.Evidence) != 1 || !u.At.Equal(at) {
			t.Errorf("%q: facet %+v (%v), want activity %q = %q", c.text, u, ok, c.key, c.value)
		}
	}
}

// facetOfWords returns the facet of subject's memory of text (no relation)
// said at at. When want is false it reports any facet found as an error.
func facetOfWords(t *testing.T, subject, text string, at time.Time, want bool) (engram.FacetUpdate, bool) {
	t.Helper()
	m := engram.Memory{ID: "m1", Namespace: "ns", Type: engram.MemoryEvent, Subject: subject, Text: text, TS: at, Sources: []string{"t1"}}
	u, ok := extract.MemoryFacet(m)
	if !want && ok {
		t.Errorf("%q: facet %+v, want none", text, u)
	}
	return u, ok
}
