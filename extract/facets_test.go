package extract_test

import (
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/extract"
)

// TestMemoryFacetActions: an action's triple makes a persona facet of its
// kind (a plan, a place by name, an activity, a possession), keyed by the
// thing; other actions stay in the graph alone.
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
