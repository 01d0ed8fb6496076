package engine_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/internal/filetest"
	"github.com/engram-dev/engram/internal/pgtest"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/postgres"
)

// teamLayers is teamConfig with the rules extractor and no vectors: a
// server that derives memories and a graph to correct.
func teamLayers(home, url string) config.Config {
	cfg := teamConfig(home, url)
	cfg.Extractor = config.ExtractorRules
	cfg.Embedder = config.EmbedderNone
	return cfg
}

// teamTurns are the turns the correction tests ingest on A.
var teamTurns = []engram.Turn{
	{ID: "t1", Namespace: engram.DefaultNamespace, Session: "s1", Speaker: "Ana", Role: "user", Content: "I live in Lisbon."},
	{ID: "t2", Namespace: engram.DefaultNamespace, Session: "s1", Speaker: "Ana", Role: "user", Content: "I work at Acme."},
	{ID: "t3", Namespace: engram.DefaultNamespace, Session: "s1", Speaker: "Ana", Role: "user", Content: "The kiln fires at noon."},
}

// memoryAbout returns the id of e's memory whose text holds text ("" if
// none).
func memoryAbout(t testing.TB, e *engine.Engine, text string) string {
	t.Helper()
	mems, err := e.Memories(t.Context(), engram.MemoryQuery{Text: text})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mems {
		if strings.Contains(m.Text, text) {
			return m.ID
		}
	}
	return ""
}

// factWith returns the id of the fact about Ana whose object is object
// ("" if none).
func factWith(t *testing.T, e *engine.Engine, object string) string {
	t.Helper()
	g, err := e.Graph(t.Context(), engram.GraphQuery{Entity: "Ana"})
	if err != nil && engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Fatal(err)
	}
	for _, tr := range g.Triples {
		if tr.Object == object {
			return tr.ID
		}
	}
	return ""
}

// personaHolds reports whether Ana's persona on e holds text.
func personaHolds(t *testing.T, e *engine.Engine, text string) bool {
	t.Helper()
	ps, err := e.Persona(t.Context(), engram.DefaultNamespace, "Ana")
	if err != nil && engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Fatal(err)
	}
	return strings.Contains(fmt.Sprintf("%+v", ps), text)
}

// openTeam opens a server of cfg, closed when the test ends unless the
// test closes it first.
func openTeam(tb testing.TB, cfg config.Config) *engine.Engine {
	tb.Helper()
	e, err := engine.Open(tb.Context(), cfg, quiet())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { e.Close() })
	return e
}

// TestTwoServers_Correct corrects on one server what both derived: a
// memory corrected on A reaches B's memories and recall, a fact corrected
// on B reaches A's graph, a memory marked wrong on A leaves B's persona,
// and a correction made while B is closed is in B's palace when it opens.
// A forget on A of the turn a correction stands on takes the correction
// out of the shared journal and out of B's palace.
func TestTwoServers_Correct(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ctx := t.Context()
	homeB := filepath.Join(t.TempDir(), "b")
	a := openTeam(t, teamLayers(filepath.Join(t.TempDir(), "a"), url))
	b := openTeam(t, teamLayers(homeB, url))
	if _, err := a.Ingest(ctx, teamTurns); err != nil {
		t.Fatal(err)
	}
	testutil.WaitUntil(t, "B to find the turns ingested on A", func() bool { return finds(t, b, "kiln fires", "noon") })
	for _, e := range []*engine.Engine{a, b} {
		if err := e.RunAll(ctx); err != nil {
			t.Fatal(err)
		}
	}
	acmeA, acmeB := memoryAbout(t, a, "Acme"), memoryAbout(t, b, "Acme")
	lisbonB := factWith(t, b, "Lisbon")
	if acmeA == "" || acmeB == "" || lisbonB == "" || !personaHolds(t, b, "Acme") {
		t.Fatalf("no memory about Acme on A (%q) or B (%q), fact about Lisbon on B (%q), or persona about Acme on B", acmeA, acmeB, lisbonB)
	}

	if _, err := a.Correct(ctx, engram.CorrectionRequest{Target: engram.CorrectMemory, ID: acmeA, Text: "I work at Globex."}); err != nil {
		t.Fatal(err)
	}
	testutil.WaitUntil(t, "A's correction of the memory to reach B's memories", func() bool { return memoryAbout(t, b, "Globex") != "" })
	if memoryAbout(t, b, "Acme") != "" {
		t.Error("B still lists the memory as extracted")
	}
	resp, err := b.Recall(ctx, engram.RecallRequest{Namespace: engram.DefaultNamespace, Query: "Globex", Mode: engram.ModeKeyword, K: 10,
		Kinds: []string{engram.KindMemory}})
	if err != nil || len(resp.Results) == 0 || !strings.Contains(resp.Results[0].Text, "Globex") {
		t.Errorf("B's recall of the corrected memory: %+v, %v", resp, err)
	}

	if _, err := b.Correct(ctx, engram.CorrectionRequest{Target: engram.CorrectFact, ID: lisbonB, Object: "Porto"}); err != nil {
		t.Fatal(err)
	}
	testutil.WaitUntil(t, "B's correction of the fact to reach A's graph", func() bool { return factWith(t, a, "Porto") != "" })
	if factWith(t, a, "Lisbon") != "" {
		t.Error("A's graph still holds the fact as extracted")
	}

	if _, err := a.Correct(ctx, engram.CorrectionRequest{Target: engram.CorrectMemory, ID: acmeA, Wrong: true}); err != nil {
		t.Fatal(err)
	}
	// The memory listed on B before (checked above) is what makes this
	// wait for the correction: the persona may never have held the
	// corrected text, which only a wrong or restored memory refolds.
	testutil.WaitUntil(t, "the memory A marked wrong to leave B's memories and persona", func() bool {
		return memoryAbout(t, b, "Globex") == "" && !personaHolds(t, b, "Globex")
	})

	// B closed: A's correction is in B's palace as soon as it opens.
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Correct(ctx, engram.CorrectionRequest{Target: engram.CorrectMemory, ID: acmeA, Restore: true}); err != nil {
		t.Fatal(err)
	}
	b = openTeam(t, teamLayers(homeB, url))
	if memoryAbout(t, b, "Acme") == "" || !personaHolds(t, b, "Acme") {
		t.Fatal("the restore A made while B was closed is not in B's palace once it opened")
	}

	// A forgets the turn the memory's corrections stand on: they leave
	// the shared journal and B's palace.
	if _, err := a.Correct(ctx, engram.CorrectionRequest{Target: engram.CorrectMemory, ID: acmeA, Text: "I work at Zorbcorp."}); err != nil {
		t.Fatal(err)
	}
	testutil.WaitUntil(t, "the correction to reach B", func() bool { return memoryAbout(t, b, "Zorbcorp") != "" })
	if _, err := a.Forget(ctx, engram.ForgetRequest{IDs: []string{"t2"}}); err != nil {
		t.Fatal(err)
	}
	testutil.WaitUntil(t, "A's forget to reach B", func() bool { return b.RewritesApplied() > 0 })
	for _, e := range []*engine.Engine{a, b} {
		cs, err := e.Corrections(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(cs) != 1 || cs[0].Target != engram.CorrectFact {
			t.Errorf("the shared journal after the forget: %+v, want the fact's correction only", cs)
		}
	}
	if memoryAbout(t, b, "Zorbcorp") != "" {
		t.Error("B still lists the corrected memory of the forgotten turn")
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	filetest.MustHoldNowhere(t, homeB, "Zorbcorp", "zorbcorp")
	pgtest.MustHoldNowhere(t, url, "Zorbcorp")
}

// teamWithLayersOnA opens server A on a new database, ingests teamTurns
// and runs every job there; B's configuration (layers on, the same
// database) is returned for the test to open when it wants.
func teamWithLayersOnA(t *testing.T) (*engine.Engine, config.Config) {
	t.Helper()
	url := pgtest.NewDatabase(t)
	a := openTeam(t, teamLayers(filepath.Join(t.TempDir(), "a"), url))
	if _, err := a.Ingest(t.Context(), teamTurns); err != nil {
		t.Fatal(err)
	}
	if err := a.RunAll(t.Context()); err != nil {
		t.Fatal(err)
	}
	return a, teamLayers(filepath.Join(t.TempDir(), "b"), url)
}

// TestTwoServers_CorrectUnderived corrects, while B is closed, a memory and
// a fact B has not derived yet: B's layer jobs, run after it opens, make
// them corrected, and so does a rebuild of B's palace.
func TestTwoServers_CorrectUnderived(t *testing.T) {
	ctx := t.Context()
	a, cfgB := teamWithLayersOnA(t)
	acme, lisbon := memoryAbout(t, a, "Acme"), factWith(t, a, "Lisbon")
	if acme == "" || lisbon == "" {
		t.Fatalf("no memory about Acme (%q) or fact about Lisbon (%q) on A", acme, lisbon)
	}
	if _, err := a.Correct(ctx, engram.CorrectionRequest{Target: engram.CorrectMemory, ID: acme, Text: "I work at Globex."}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Correct(ctx, engram.CorrectionRequest{Target: engram.CorrectFact, ID: lisbon, Object: "Porto"}); err != nil {
		t.Fatal(err)
	}

	b := openTeam(t, cfgB)
	testutil.WaitUntil(t, "B to find the turns ingested on A", func() bool { return finds(t, b, "kiln fires", "noon") })
	if memoryAbout(t, b, "Acme") != "" || memoryAbout(t, b, "Globex") != "" {
		t.Fatal("B derived memories before its jobs ran: the test would not see a correction wait for them")
	}
	// A forget on B, which holds none of the memories the corrections
	// stand on yet, leaves them in the shared journal: B cannot tell
	// that they are gone.
	if _, err := b.Forget(ctx, engram.ForgetRequest{IDs: []string{"t3"}}); err != nil {
		t.Fatal(err)
	}
	if cs, err := b.Corrections(ctx); err != nil || len(cs) != 2 {
		t.Fatalf("the shared journal after a forget on B: %+v, %v", cs, err)
	}
	if err := b.RunAll(ctx); err != nil {
		t.Fatal(err)
	}
	if memoryAbout(t, b, "Globex") == "" || memoryAbout(t, b, "Acme") != "" {
		t.Error("the memory B derived after A corrected it is not corrected")
	}
	if factWith(t, b, "Porto") == "" || factWith(t, b, "Lisbon") != "" {
		t.Error("the fact B derived after A corrected it is not corrected")
	}
	// B's palace rebuilt from the shared archive and journal keeps both.
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	rebuildHome(t, cfgB)
	b = openTeam(t, cfgB)
	if memoryAbout(t, b, "Globex") == "" || memoryAbout(t, b, "Acme") != "" || factWith(t, b, "Porto") == "" || factWith(t, b, "Lisbon") != "" {
		t.Error("B's rebuilt palace lost a correction")
	}
}

// TestTwoServers_CorrectConcurrently corrects one memory on A and on B at
// once, again and again: every correction is kept in the shared journal,
// and both palaces end with the text of its last one, since every server
// applies the journal in its order.
func TestTwoServers_CorrectConcurrently(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ctx := t.Context()
	a := openTeam(t, teamLayers(filepath.Join(t.TempDir(), "a"), url))
	b := openTeam(t, teamLayers(filepath.Join(t.TempDir(), "b"), url))
	if _, err := a.Ingest(ctx, teamTurns); err != nil {
		t.Fatal(err)
	}
	testutil.WaitUntil(t, "B to find the turns ingested on A", func() bool { return finds(t, b, "kiln fires", "noon") })
	for _, e := range []*engine.Engine{a, b} {
		if err := e.RunAll(ctx); err != nil {
			t.Fatal(err)
		}
	}
	const each = 6
	var wg sync.WaitGroup
	for name, e := range map[string]*engine.Engine{"a": a, "b": b} {
		id := memoryAbout(t, e, "Acme")
		if id == "" {
			t.Fatalf("no memory about Acme on %s", name)
		}
		wg.Go(func() {
			for i := range each {
				if _, err := e.Correct(ctx, engram.CorrectionRequest{Target: engram.CorrectMemory, ID: id, Text: fmt.Sprintf("I work at Firm-%s%d.", name, i)}); err != nil {
					t.Errorf("correct on %s: %v", name, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	cs, err := a.Corrections(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, c := range cs {
		texts = append(texts, c.Text)
	}
	slices.Sort(texts)
	if len(cs) != 2*each || len(slices.Compact(texts)) != 2*each {
		t.Fatalf("the shared journal holds %d corrections, want %d: %v", len(cs), 2*each, texts)
	}
	last := strings.TrimSuffix(strings.TrimPrefix(cs[len(cs)-1].Text, "I work at "), ".")
	for name, e := range map[string]*engine.Engine{"a": a, "b": b} {
		testutil.WaitUntil(t, name+" to hold the journal's last correction", func() bool { return memoryAbout(t, e, last) != "" })
		mems, err := e.Memories(ctx, engram.MemoryQuery{Text: "Firm"})
		if err != nil || len(mems) != 1 {
			t.Errorf("%s's memories of the firm: %+v, %v", name, mems, err)
		}
	}
}

// TestDoctorTeamCorrectionsBehind: the doctor of a stopped server reports
// a correction another server made since as a lag behind the corrections
// journal; once the server serves again, it is current.
func TestDoctorTeamCorrectionsBehind(t *testing.T) {
	ctx := t.Context()
	a, cfgB := teamWithLayersOnA(t)
	b, err := engine.Open(ctx, cfgB, quiet())
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitUntil(t, "B to be current", func() bool { return lagOK(t, b) })
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Correct(ctx, engram.CorrectionRequest{Target: engram.CorrectMemory, ID: memoryAbout(t, a, "Acme"), Text: "I work at Globex."}); err != nil {
		t.Fatal(err)
	}
	testutil.MustFindCheck(t, engine.DoctorHome(ctx, cfgB, quiet()), "postgres-lag", engram.CheckWarn,
		"behind its corrections journal (applied through entry 0 of 1)", "no server had it open")
	testutil.MustFindCheck(t, a.Doctor(ctx), "postgres-lag", engram.CheckOK, "corrections journal through entry 1")
	b = openTeam(t, cfgB)
	testutil.MustFindCheck(t, b.Doctor(ctx), "postgres-lag", engram.CheckOK, "corrections journal through entry 1")
}

// BenchmarkTeamCorrectionDelay measures, on one PostgreSQL database, how
// long A's Correct of a memory takes and the delay from its
// acknowledgement to B's memories holding the corrected text (B's
// memories asked again and again until they do), over 100 corrections one
// at a time. It reports the medians and the p99 (ms) of the last run.
//
//	go test ./engine -run '^$' -bench BenchmarkTeamCorrectionDelay -benchtime 1x
func BenchmarkTeamCorrectionDelay(b *testing.B) {
	const corrections = 100
	url := pgtest.NewDatabase(b)
	ctx := b.Context()
	a, srvB := openTeam(b, teamLayers(filepath.Join(b.TempDir(), "a"), url)), openTeam(b, teamLayers(filepath.Join(b.TempDir(), "b"), url))
	if _, err := a.Ingest(ctx, teamTurns); err != nil {
		b.Fatal(err)
	}
	for { // until B has indexed A's turns
		resp, err := srvB.Recall(ctx, engram.RecallRequest{Namespace: engram.DefaultNamespace, Query: "kiln fires", Mode: engram.ModeKeyword, K: 1})
		if err != nil {
			b.Fatal(err)
		}
		if len(resp.Results) > 0 {
			break
		}
	}
	for _, e := range []*engine.Engine{a, srvB} {
		if err := e.RunAll(ctx); err != nil {
			b.Fatal(err)
		}
	}
	id := memoryAbout(b, a, "Acme")
	if id == "" || memoryAbout(b, srvB, "Acme") == "" {
		b.Fatal("no memory about Acme on A or B")
	}
	var took, delays []time.Duration
	for range b.N {
		took, delays = took[:0], delays[:0]
		for i := range corrections {
			word := fmt.Sprintf("Firm%dx%d", i, time.Now().UnixNano())
			start := time.Now()
			if _, err := a.Correct(ctx, engram.CorrectionRequest{Target: engram.CorrectMemory, ID: id, Text: "I work at " + word + "."}); err != nil {
				b.Fatal(err)
			}
			acked := time.Now()
			for memoryAbout(b, srvB, word) == "" {
			}
			took, delays = append(took, acked.Sub(start)), append(delays, time.Since(acked))
		}
	}
	slices.Sort(took)
	slices.Sort(delays)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(took[len(took)/2]), "correct-p50-ms")
	b.ReportMetric(ms(delays[len(delays)/2]), "delay-p50-ms")
	b.ReportMetric(ms(delays[len(delays)*99/100]), "delay-p99-ms")
	b.ReportMetric(ms(delays[len(delays)-1]), "delay-max-ms")
}

// TestTwoServers_ForgetCorrected: B derives no layers, so it holds A's
// corrections of facts but none of their memories. A correction taken
// out of the shared journal (as the end of a forget on another server
// does) leaves B's palace; and when A forgets the turn the fact
// stands on, whichever of A's journal rewrite and B's forget comes first,
// B's palace drops the correction and keeps no word of it.
func TestTwoServers_ForgetCorrected(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ctx := t.Context()
	a := openTeam(t, teamLayers(filepath.Join(t.TempDir(), "a"), url))
	homeB := filepath.Join(t.TempDir(), "b")
	b := openTeam(t, teamConfig(homeB, url)) // no extractor
	if _, err := a.Ingest(ctx, teamTurns); err != nil {
		t.Fatal(err)
	}
	if err := a.RunAll(ctx); err != nil {
		t.Fatal(err)
	}
	held := func() int {
		ids, err := b.PalaceCorrections(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(ids)
	}
	correct := func(of, object string) {
		if _, err := a.Correct(ctx, engram.CorrectionRequest{Target: engram.CorrectFact, ID: factWith(t, a, of), Object: object}); err != nil {
			t.Fatal(err)
		}
		testutil.WaitUntil(t, "B's palace to hold A's correction", func() bool { return held() == 1 })
	}

	// What B sees of a forget on another server whose journal rewrite
	// comes after B applied the forget itself.
	correct("Acme", "Zorbcorp")
	pa, err := postgres.Open(ctx, url, postgres.Options{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer pa.Close()
	if n, err := pa.Corrections().Rewrite(ctx, func(c engram.Correction) (engram.Correction, bool) { return c, false }); err != nil || n != 1 {
		t.Fatalf("take the correction out of the journal: %d, %v", n, err)
	}
	testutil.WaitUntil(t, "B's palace to drop the correction taken out of the journal", func() bool { return held() == 0 })

	correct("Lisbon", "Quuxport")
	if _, err := a.Forget(ctx, engram.ForgetRequest{IDs: []string{"t1"}}); err != nil {
		t.Fatal(err)
	}
	if cs, err := a.Corrections(ctx); err != nil || len(cs) != 0 {
		t.Fatalf("the shared journal after A's forget: %+v, %v", cs, err)
	}
	testutil.WaitUntil(t, "B's palace to drop the correction of the forgotten fact", func() bool { return held() == 0 })
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	filetest.MustHoldNowhere(t, homeB, "Zorbcorp", "zorbcorp", "Quuxport", "quuxport", "Lisbon", "lisbon")
}
