package facetline

import (
	"testing"
	"time"

	engram "github.com/engram-dev/engram"
)

func TestGather(t *testing.T) {
	t1, t2 := time.Unix(100, 0), time.Unix(200, 0)
	var ps []engram.Persona
	ps = Gather(ps, "ns", "Ana", engram.PersonaFacet{Facet: "pet", Key: "dog"}, t2)
	ps = Gather(ps, "ns", "Ana", engram.PersonaFacet{Facet: "place", Key: "lisbon"}, t1)
	ps = Gather(ps, "ns", "Bo", engram.PersonaFacet{Facet: "work", Key: "kiln"}, t1)
	if len(ps) != 2 || ps[0].Speaker != "Ana" || ps[1].Speaker != "Bo" || ps[0].Namespace != "ns" {
		t.Fatalf("personas %+v, want Ana's then Bo's in ns", ps)
	}
	if len(ps[0].Facets) != 2 || ps[0].Facets[1].Key != "lisbon" || len(ps[1].Facets) != 1 {
		t.Errorf("facets %+v, %+v", ps[0].Facets, ps[1].Facets)
	}
	if !ps[0].Updated.Equal(t2) || !ps[1].Updated.Equal(t1) {
		t.Errorf("updated %v, %v; want each persona's latest facet's", ps[0].Updated, ps[1].Updated)
	}
}
