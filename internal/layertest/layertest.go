// Package layertest writes the derived layers that the tests of the HTTP
// API and of the CLI read: memories, scenes, persona facets and graph
// triples about Alice (who moves from Paris to Berlin on day 10) and Bob
// (billing on Postgres), written to a palace directly. Only tests import
// it.
package layertest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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

// MustHome returns a new home whose palace (the file palaceFile, the
// engine's name for it) holds the fixtures, dated from day0, under the
// watermark "test". Its config.toml switches the extractor off, so that no
// layer worker touches them.
func MustHome(tb testing.TB, palaceFile string, day0 time.Time) string {
	tb.Helper()
	home := filepath.Join(tb.TempDir(), "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte("extractor = \"none\"\nlog_level = \"warn\"\n"), 0o600); err != nil {
		tb.Fatal(err)
	}
	p, err := palace.Open(filepath.Join(home, palaceFile), palace.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer p.Close()
	Put(tb, p, day0, "test", 0)
	if err := p.Close(); err != nil {
		tb.Fatal(err)
	}
	return home
}

// Conversation writes n turns of a long-running team conversation with
// fixed ids: decisions, preferences, moves (so facts are superseded), plans
// and small talk, in English and Chinese, over many sessions and days,
// to a file in a temporary folder, and returns its path: what the layer
// workers derive from in the CLI's and the server's tests.
func Conversation(t testing.TB, n int) string {
	t.Helper()
	cities := []string{"Berlin", "Lisbon", "Osaka", "Toronto", "Nairobi"}
	dbs := []string{"Postgres", "SQLite", "Redis", "ClickHouse"}
	people := []string{"Alice", "Bob", "Chen", "Dana"}
	lines := []func(i int, who string) string{
		func(i int, who string) string { return fmt.Sprintf("I live in %s now.", cities[(i/997)%len(cities)]) },
		func(i int, who string) string {
			return fmt.Sprintf("We decided to use %s for the billing service because it is simpler to run.", dbs[(i/1301)%len(dbs)])
		},
		func(i int, who string) string {
			return fmt.Sprintf("I really like %s coffee.", []string{"Ethiopian", "Kenyan", "cold brew"}[i%3])
		},
		func(i int, who string) string { return "I'm going to refactor the ingest path next week." },
		func(i int, who string) string {
			return fmt.Sprintf("Sounds good, thanks %s!", people[(i+1)%len(people)])
		},
		func(i int, who string) string { return "我们决定用SQLite做存储，因为部署简单。" },
		func(i int, who string) string {
			return fmt.Sprintf("My favourite book is %s.", []string{"Dune", "Solaris", "Neuromancer"}[(i/2003)%3])
		},
		func(i int, who string) string { return "I usually run before work." },
		func(i int, who string) string {
			return fmt.Sprintf("The p99 latency of service %d was %d ms today.", i%13, 20+i%50)
		},
	}
	path := filepath.Join(t.TempDir(), "conv.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	start := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	for i := range n {
		who := people[i%len(people)]
		ts := start.Add(time.Duration(i) * 7 * time.Minute) // a session every 40 turns, hours apart
		if err := enc.Encode(map[string]any{
			"id": fmt.Sprintf("turn-%06d", i), "session": fmt.Sprintf("s%04d", i/40), "speaker": who, "role": "user",
			"ts": ts.Format(time.RFC3339), "content": lines[(i*7+i/40)%len(lines)](i, who),
		}); err != nil {
			t.Fatal(err)
		}
	}
	return path
}
