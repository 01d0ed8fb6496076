package extract_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/extract"
	"github.com/engram-dev/engram/internal/layertest"
	"github.com/engram-dev/engram/internal/testutil"
)

// rulesCase is one fixture in testdata/rules/*.json: a turn and the
// memories it must yield, no more and no fewer. An empty want is a negative.
type rulesCase struct {
	Name    string       `json:"name"`
	Speaker string       `json:"speaker"`
	Role    string       `json:"role"`
	Content string       `json:"content"`
	Want    []wantMemory `json:"want"`
}

// wantMemory is a memory a case of testdata/rules or testdata/nlp must
// yield. The two sets read a few fields differently (see checkMemories).
type wantMemory struct {
	Type      string   `json:"type"`
	Text      string   `json:"text"` // rules: a fragment of Memory.Text; nlp: all of it
	Rationale string   `json:"rationale"`
	Entities  []string `json:"entities"` // each must be among Memory.Entities
	// Relation is the memory's [subject, predicate, object]; absent, the
	// memory must have none.
	Relation []string `json:"relation"`
	// Single (rules) says whether the predicate is single-valued
	// (engram.SingleValued).
	Single bool `json:"single"`
	// ValidFrom (nlp), when set, is the day the memory's statement holds
	// from (a resolved "yesterday", "since 2019"), 2006-01-02; unset, it is
	// the turn's time.
	ValidFrom string `json:"valid_from"`
}

// loadJSON reads the fixture testdata/dir/name into a T.
func loadJSON[T any](tb testing.TB, dir, name string) T {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", dir, name))
	if err != nil {
		tb.Fatal(err)
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		tb.Fatal(err)
	}
	return v
}

var rulesTS = time.Date(2026, 5, 1, 14, 3, 0, 0, time.UTC)

func loadRulesCases(tb testing.TB) []rulesCase {
	tb.Helper()
	return loadRulesFile(tb, "cases.json")
}

func loadRulesFile(tb testing.TB, name string) []rulesCase {
	tb.Helper()
	return loadJSON[[]rulesCase](tb, "rules", name)
}

func (c rulesCase) turn(i int) engram.Turn {
	role := engram.Role(c.Role)
	if role == "" {
		role = engram.RoleUser
	}
	return engram.Turn{ID: fmt.Sprintf("turn-%d", i), Seq: int64(i + 1), Namespace: "ns1", Session: "s1",
		Role: role, Speaker: c.Speaker, Content: c.Content, TS: rulesTS.Add(time.Duration(i) * time.Minute)}
}

func TestRulesExtractCases(t *testing.T) {
	pos, neg := runRulesCases(t, loadRulesCases(t))
	if pos < 25 || neg < 15 {
		t.Errorf("fixtures hold %d positive and %d negative cases, want at least 25 and 15", pos, neg)
	}
}

// TestRulesRelations checks the knowledge-graph triples of the memories, in
// English and Chinese, and the memories that must carry none.
func TestRulesRelations(t *testing.T) {
	cases := loadRulesFile(t, "relations.json")
	runRulesCases(t, cases)
	var rels, without, habits int
	preds := map[string]bool{}
	for _, c := range cases {
		for _, w := range c.Want {
			if len(w.Relation) == 0 {
				without++
				continue
			}
			rels++
			preds[w.Relation[1]] = true
			if w.Relation[1] == "habit" {
				habits++
			}
		}
	}
	for _, p := range []string{"name", "lives_in", "works_at", "works_as", "is_from", "is", "likes", "dislikes", "prefers",
		"uses", "married_to", "sister", "habit"} {
		if !preds[p] {
			t.Errorf("no fixture for predicate %s", p)
		}
	}
	if rels < 50 || without < 20 || habits < 8 {
		t.Errorf("fixtures hold %d relations, %d memories without one and %d habits; want at least 50, 20 and 8", rels, without, habits)
	}
}

// runRulesCases runs each case as a subtest and returns the number of
// positive and negative cases.
func runRulesCases(t *testing.T, cases []rulesCase) (pos, neg int) {
	t.Helper()
	for i, c := range cases {
		if len(c.Want) == 0 {
			neg++
		} else {
			pos++
		}
		t.Run(c.Name, func(t *testing.T) {
			turn := c.turn(i)
			got, err := extract.RulesExtractor{}.Extract(context.Background(), []engram.Turn{turn})
			if err != nil {
				t.Fatal(err)
			}
			checkMemories(t, turn, got, c.Want, true)
		})
	}
	return pos, neg
}

// checkMemories checks the memories extracted from turn against want, in
// order, no more and no fewer: type, text, rationale, entities, relation
// and the invariants of every memory. rules reads want as the rules
// fixtures write it: Text a fragment, Single the predicate's arity. Else
// (nlp) Text is the whole text and ValidFrom is checked.
func checkMemories(t *testing.T, turn engram.Turn, got []engram.Memory, want []wantMemory, rules bool) {
	t.Helper()
	dump := func() string {
		var sb strings.Builder
		for _, m := range got {
			fmt.Fprintf(&sb, "\n  %s %q why=%q entities=%q relation=%v from=%s", m.Type, m.Text, m.Rationale,
				m.Entities, relString(m.Relation), m.ValidFrom.Format("2006-01-02"))
		}
		return sb.String()
	}
	if len(got) != len(want) {
		t.Fatalf("%q: got %d memories, want %d:%s", turn.Content, len(got), len(want), dump())
	}
	for j, w := range want {
		m := got[j]
		if text := m.Text == w.Text || rules && strings.Contains(m.Text, w.Text); m.Type != w.Type || !text {
			t.Errorf("memory %d: got %s %q, want %s %q", j, m.Type, m.Text, w.Type, w.Text)
		}
		if m.Rationale != w.Rationale {
			t.Errorf("memory %d: rationale %q, want %q", j, m.Rationale, w.Rationale)
		}
		for _, e := range w.Entities {
			if !slices.Contains(m.Entities, e) {
				t.Errorf("memory %d: entities %q lack %q", j, m.Entities, e)
			}
		}
		single := w.Single
		if !rules {
			single = w.Relation != nil && engram.SingleValued(w.Relation[1])
			from := turn.TS
			if w.ValidFrom != "" {
				var err error
				if from, err = time.Parse("2006-01-02", w.ValidFrom); err != nil {
					t.Fatal(err)
				}
			}
			if !m.ValidFrom.Equal(from) {
				t.Errorf("memory %d: valid from %s, want %s", j, m.ValidFrom, from)
			}
		}
		checkRelation(t, j, m, w.Relation, single)
		checkMemoryInvariants(t, turn, m)
	}
	if t.Failed() {
		t.Log(dump())
	}
}

func relString(r *engram.Relation) string {
	if r == nil {
		return "none"
	}
	return fmt.Sprintf("(%s, %s, %s)", r.Subject, r.Predicate, r.Object)
}

// checkRelation checks memory j's relation against want, [subject,
// predicate, object] or empty for none, and its predicate's arity.
func checkRelation(t *testing.T, j int, m engram.Memory, want []string, single bool) {
	t.Helper()
	if len(want) == 0 {
		if m.Relation != nil {
			t.Errorf("memory %d: relation %s, want none", j, relString(m.Relation))
		}
		return
	}
	if len(want) != 3 {
		t.Fatalf("fixture relation %q: want subject, predicate and object", want)
	}
	w := engram.Relation{Subject: want[0], Predicate: want[1], Object: want[2]}
	if m.Relation == nil || *m.Relation != w {
		t.Errorf("memory %d: relation %s, want %s", j, relString(m.Relation), relString(&w))
		return
	}
	if engram.SingleValued(w.Predicate) != single {
		t.Errorf("memory %d: predicate %s single-valued %v, want %v", j, w.Predicate, !single, single)
	}
}

// checkMemoryInvariants checks what every memory from turn must satisfy.
func checkMemoryInvariants(t *testing.T, turn engram.Turn, m engram.Memory) {
	t.Helper()
	want := map[string]float64{engram.MemoryDecision: 0.9, engram.MemoryPlan: 0.7, engram.MemoryPreference: 0.6,
		engram.MemoryFact: 0.6, engram.MemoryEvent: 0.5}[m.Type]
	if m.Rationale != "" {
		want = min(1, want+0.1)
	}
	if m.Importance != want {
		t.Errorf("%s importance %v, want %v", m.Type, m.Importance, want)
	}
	subject := turn.Speaker
	if subject == "" {
		subject = string(turn.Role)
	}
	// ValidFrom may be earlier than the turn: "I moved here in 2019". A
	// memory that a later turn's sentence went on about cites that turn
	// after its own.
	sources := reflect.DeepEqual(m.Sources, []string{turn.ID}) || len(m.Sources) > 1 && m.Sources[0] == turn.ID
	if m.Subject != subject || m.Namespace != turn.Namespace || !m.TS.Equal(turn.TS) || m.ValidFrom.After(turn.TS) || m.ValidFrom.IsZero() ||
		!sources {
		t.Errorf("memory %+v does not carry turn %s's subject, namespace, time and source", m, turn.ID)
	}
	if !strings.HasPrefix(m.ID, "mem-") || len(m.ID) != len("mem-")+20 {
		t.Errorf("id %q, want mem- and 20 hex digits", m.ID)
	}
	if m.SupersededBy != "" {
		t.Errorf("new memory superseded by %q", m.SupersededBy)
	}
}

func TestRulesExtractDeterministic(t *testing.T) {
	cases := loadRulesCases(t)
	turns := make([]engram.Turn, len(cases))
	for i, c := range cases {
		turns[i] = c.turn(i)
	}
	var x extract.RulesExtractor
	first, err := x.Extract(context.Background(), turns)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) == 0 {
		t.Fatal("no memories from the fixtures")
	}
	for range 3 {
		again, err := x.Extract(context.Background(), turns)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(first, again) {
			t.Fatal("a second run over the same turns gave different memories")
		}
	}
	ids := map[string]bool{}
	for _, m := range first {
		if ids[m.ID] {
			t.Errorf("duplicate id %s", m.ID)
		}
		ids[m.ID] = true
	}
	// The id depends on the namespace and the source turn, not the batch.
	one, err := x.Extract(context.Background(), turns[:1])
	if err != nil {
		t.Fatal(err)
	}
	if one[0].ID != first[0].ID {
		t.Errorf("id changed with the batch: %s, %s", one[0].ID, first[0].ID)
	}
	other := turns[0]
	other.Namespace = "ns2"
	two, err := x.Extract(context.Background(), []engram.Turn{other})
	if err != nil {
		t.Fatal(err)
	}
	if two[0].ID == first[0].ID {
		t.Error("same id in two namespaces")
	}
}

func TestRulesExtractDedup(t *testing.T) {
	turn := engram.Turn{ID: "t1", Namespace: "ns", Role: engram.RoleUser, Speaker: "Ana", TS: rulesTS,
		Content: "I prefer tea. I prefer tea!\nI prefer tea"}
	got, err := extract.RulesExtractor{}.Extract(context.Background(), []engram.Turn{turn, turn})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("got %d memories, want 1: %+v", len(got), got)
	}
	// The same statement in another turn is another memory: it has another source.
	turn2 := turn
	turn2.ID = "t2"
	got, err = extract.RulesExtractor{}.Extract(context.Background(), []engram.Turn{turn, turn2})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID == got[1].ID {
		t.Fatalf("got %+v, want one memory per turn", got)
	}
}

func TestRulesExtractEmpty(t *testing.T) {
	for _, turns := range [][]engram.Turn{nil, {}, {{ID: "t1"}}, {{ID: "t2", Content: " \n\t。？ "}}} {
		got, err := extract.RulesExtractor{}.Extract(context.Background(), turns)
		if err != nil || len(got) != 0 {
			t.Errorf("Extract(%v) = %v, %v; want nothing", turns, got, err)
		}
	}
	// No namespace: the default one, as the archive would have set.
	got, err := extract.RulesExtractor{}.Extract(context.Background(), []engram.Turn{{ID: "t3", Content: "I prefer tea."}})
	if err != nil || len(got) != 1 || got[0].Namespace != engram.DefaultNamespace || got[0].Subject != "user" {
		t.Errorf("got %+v, %v; want one memory in the default namespace about user", got, err)
	}
}

func TestRulesExtractCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	turns := benchTurns(10)
	got, err := extract.RulesExtractor{}.Extract(ctx, turns)
	if !errors.Is(err, context.Canceled) || got != nil {
		t.Fatalf("got %v, %v; want nil, context.Canceled", got, err)
	}
	// Canceled during a long batch: it stops and says so.
	ctx, cancel = context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	if _, err := (extract.RulesExtractor{}).Extract(ctx, benchTurns(1000)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want context.DeadlineExceeded", err)
	}
}

func FuzzRulesExtract(f *testing.F) {
	for _, c := range append(loadRulesCases(f), loadRulesFile(f, "relations.json")...) {
		f.Add(c.Speaker, c.Content)
	}
	f.Add("", "\xff\xfe I prefer \"unterminated 「quote. 因为")
	f.Add("x", "my favourite  is . I'm a . we decided to . TODO: . 我是")
	f.Fuzz(func(t *testing.T, speaker, content string) {
		turns := []engram.Turn{{ID: "f1", Namespace: "ns", Role: engram.RoleUser, Speaker: speaker, Content: content, TS: rulesTS}}
		got, err := extract.RulesExtractor{}.Extract(context.Background(), turns)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := extract.RulesExtractor{}.Extract(context.Background(), turns)
		if !reflect.DeepEqual(got, again) {
			t.Fatal("not deterministic")
		}
		for _, m := range got {
			if m.Text == "" || !utf8.ValidString(m.Text) || !utf8.ValidString(m.Rationale) {
				t.Fatalf("bad text %q / rationale %q", m.Text, m.Rationale)
			}
			if m.Importance <= 0 || m.Importance > 1 {
				t.Fatalf("importance %v", m.Importance)
			}
			for _, e := range m.Entities {
				if e == "" || !utf8.ValidString(e) {
					t.Fatalf("bad entity %q", e)
				}
			}
			if r := m.Relation; r != nil {
				if r.Subject == "" || r.Object == "" || !utf8.ValidString(r.Subject) || !utf8.ValidString(r.Object) ||
					strings.TrimSpace(r.Object) != r.Object || !snakeCase(r.Predicate) {
					t.Fatalf("bad relation %+v", *r)
				}
			}
		}
	})
}

// snakeCase reports whether p is a snake_case predicate: lower-case letters
// (Han included) and digits in words joined by single underscores.
func snakeCase(p string) bool {
	if p == "" || strings.HasPrefix(p, "_") || strings.HasSuffix(p, "_") || strings.Contains(p, "__") {
		return false
	}
	for _, r := range p {
		if r != '_' && !unicode.IsDigit(r) && !(unicode.IsLetter(r) && !unicode.IsUpper(r)) {
			return false
		}
	}
	return true
}

// benchTurns is a realistic mixed batch: statements that match, questions,
// small talk and long assistant answers that match nothing.
func benchTurns(n int) []engram.Turn {
	contents := []string{
		"We decided to use PostgreSQL for billing because it has better JSON support.",
		"Do you know whether the staging cluster is up again?",
		"Sure! Here is a summary of the incident: the load balancer dropped connections for about five minutes after the deploy, " +
			"the health checks recovered on their own, and no data was lost. The root cause was a misconfigured timeout.",
		"I prefer tabs over spaces, and I live in New York.",
		"Next week I'll visit my parents in Porto.",
		"因为Redis不稳定，所以我们决定用PostgreSQL。我打算下个月去日本旅行。",
		"Thanks, that sounds good to me.",
		"TODO: rotate the API keys before the audit",
		"我叫小明。你喜欢咖啡吗？",
		"Last month I went to KubeCon in Paris. It was great.",
	}
	roles := []engram.Role{engram.RoleUser, engram.RoleAssistant, engram.RoleAssistant, engram.RoleUser, engram.RoleUser,
		engram.RoleUser, engram.RoleAssistant, engram.RoleUser, engram.RoleUser, engram.RoleUser}
	turns := make([]engram.Turn, n)
	for i := range turns {
		k := i % len(contents)
		turns[i] = engram.Turn{ID: fmt.Sprintf("t%d", i), Seq: int64(i + 1), Namespace: "bench", Session: "s",
			Role: roles[k], Speaker: "Ana", Content: contents[k], TS: rulesTS.Add(time.Duration(i) * time.Second)}
	}
	return turns
}

func BenchmarkRulesExtract(b *testing.B) {
	turns := benchTurns(1000)
	var x extract.RulesExtractor
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := x.Extract(ctx, turns); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(turns))/b.Elapsed().Seconds(), "turns/s")
}

// BenchmarkNLPExtract measures the nlp extractor alone, on the short turns
// of benchTurns and on the LoCoMo development set's turns (layertest.LoCoMoTurns;
// skipped without it), with one worker and with GOMAXPROCS; turns/cpu-s is
// per second of the process's CPU time.
//
//	go test -run '^$' -bench NLPExtract -cpu 2 ./pipeline/
func BenchmarkNLPExtract(b *testing.B) {
	extract.LoadTagger()
	for _, c := range []struct {
		name  string
		turns func(testing.TB) []engram.Turn
	}{{"short", func(testing.TB) []engram.Turn { return benchTurns(1000) }}, {"locomo", layertest.LoCoMoTurns}} {
		for _, workers := range []int{1, 0} {
			b.Run(fmt.Sprintf("%s/workers=%d", c.name, workers), func(b *testing.B) {
				turns := c.turns(b)
				x := &extract.NLPExtractor{Workers: workers}
				ctx := context.Background()
				b.ReportAllocs()
				cpu0 := testutil.CPUTime()
				for b.Loop() {
					if _, err := x.Extract(ctx, turns); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N*len(turns))/b.Elapsed().Seconds(), "turns/s")
				if cpu := testutil.CPUTime() - cpu0; cpu > 0 {
					b.ReportMetric(float64(b.N*len(turns))/cpu.Seconds(), "turns/cpu-s")
				}
			})
		}
	}
}
