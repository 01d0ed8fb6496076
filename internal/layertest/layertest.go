// Package layertest writes the derived layers that the tests of the HTTP
// API and of the CLI read: memories, scenes, persona facets and graph
// triples about Alice (who moves from Paris to Berlin on day 10) and Bob
// (billing on Postgres), written to a palace directly. Only tests import
// it.
package layertest

import (
	"context"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/palace"
)

// Put writes the fixtures into p, dated from day0 (day n is n days after
// it), each layer under the watermark worker, advanced to throughSeq.
func Put(tb testing.TB, p *palace.DB, day0 time.Time, worker string, throughSeq int64) {
	tb.Helper()
	ctx := context.Background()
	day := func(n int) time.Time { return day0.AddDate(0, 0, n) }
	rel := func(s, pr, o string) *engram.Relation { return &engram.Relation{Subject: s, Predicate: pr, Object: o} }
	mem := func(id, ns, typ, subject, text string, d int, r *engram.Relation, srcs ...string) engram.Memory {
		return engram.Memory{ID: id, Namespace: ns, Type: typ, Subject: subject, Text: text, Importance: 0.6,
			TS: day(d), ValidFrom: day(d), Sources: srcs, Relation: r}
	}
	mems := []engram.Memory{
		mem("m1", "default", engram.MemoryFact, "Alice", "Alice lives in Paris", 0, rel("Alice", "lives_in", "Paris"), "t1"),
		mem("m2", "default", engram.MemoryFact, "Alice", "Alice lives in Berlin", 10, rel("Alice", "lives_in", "Berlin"), "t2", "t3"),
		mem("m3", "default", engram.MemoryDecision, "Bob", "Bob decided to use Postgres for the billing service", 5, nil, "t4"),
		mem("m4", "default", engram.MemoryPlan, "Bob", "Bob plans to migrate the billing database in May", 7, nil, "t5"),
		mem("m5", "work", engram.MemoryFact, "Carol", "Carol works at Acme", 3, nil, "t6"),
	}
	if _, err := p.PutMemories(ctx, worker, mems, throughSeq); err != nil {
		tb.Fatal(err)
	}
	scene := func(id, session, title, summary string, d int, turns ...string) engram.SceneWrite {
		return engram.SceneWrite{Scene: engram.Scene{ID: id, Namespace: "default", Session: session, Title: title, Summary: summary,
			Start: day(d), End: day(d).Add(time.Hour), Participants: []string{"Alice", "Bob"}, Turns: turns}}
	}
	if err := p.PutScenes(ctx, worker, []engram.SceneWrite{
		scene("sc1", "s1", "Moving to Berlin", "Alice tells Bob she is moving from Paris to Berlin", 10, "t2", "t3"),
		scene("sc2", "s2", "Billing database", "Bob settles on Postgres for the billing service", 5, "t4"),
		scene("sc3", "s1", "Migration plan", "Bob plans the database migration for May", 7, "t5"),
	}, throughSeq); err != nil {
		tb.Fatal(err)
	}
	facet := func(speaker, kind, key, value string, d int, ev string) engram.FacetUpdate {
		return engram.FacetUpdate{Namespace: "default", Speaker: speaker, Facet: kind, Key: key, Value: value, At: day(d), Evidence: []string{ev}}
	}
	if err := p.ApplyFacets(ctx, worker, []engram.FacetUpdate{
		facet("Alice", engram.FacetIdentity, "lives_in", "Paris", 0, "t1"),
		facet("Alice", engram.FacetIdentity, "lives_in", "Berlin", 10, "t2"),
		facet("Alice", engram.FacetPreference, "likes:jazz", "jazz", 1, "t7"),
		facet("Bob", engram.FacetProject, "billing", "Postgres migration", 5, "t4"),
	}, throughSeq); err != nil {
		tb.Fatal(err)
	}
	triple := func(s, pr, o string, d int, src string) engram.Triple {
		return engram.Triple{Namespace: "default", Subject: s, Predicate: pr, Object: o, ValidFrom: day(d), Sources: []string{src}}
	}
	if err := p.ApplyTriples(ctx, worker, []engram.Triple{
		triple("Alice", "lives_in", "Paris", 0, "t1"),
		triple("Alice", "lives_in", "Berlin", 10, "t2"),
		triple("Alice", "works_at", "Acme", 2, "t8"),
		triple("Alice", "name", "Ally", 0, "t9"),
	}, throughSeq); err != nil {
		tb.Fatal(err)
	}
}
