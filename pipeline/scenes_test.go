package pipeline_test

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/pipeline"
)

// sceneCase is one fixture in testdata/scenes: a conversation and where its
// scenes must start.
type sceneCase struct {
	Name  string `json:"name"`
	Turns []struct {
		Speaker string `json:"speaker"`
		Role    string `json:"role"`
		Content string `json:"content"`
		After   string `json:"after"` // since the previous turn; default 1m
	} `json:"turns"`
	WantStarts []int `json:"want_starts"`
	// WantTitle lists, per scene, words its title must contain.
	WantTitle [][]string `json:"want_title"`
	// WantParticipants are the participants of every scene.
	WantParticipants []string `json:"want_participants"`
}

var sceneTS = time.Date(2026, 4, 2, 9, 30, 0, 0, time.UTC)

func loadSceneCases(tb testing.TB) map[string]sceneCase {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "scenes", "*.json"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no scene fixtures: %v", err)
	}
	cases := map[string]sceneCase{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		var c sceneCase
		if err := json.Unmarshal(b, &c); err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		cases[strings.TrimSuffix(filepath.Base(f), ".json")] = c
	}
	return cases
}

func (c sceneCase) turns(tb testing.TB, name string) []engram.Turn {
	tb.Helper()
	ts := sceneTS
	out := make([]engram.Turn, len(c.Turns))
	for i, x := range c.Turns {
		gap := time.Minute
		if x.After != "" {
			var err error
			if gap, err = time.ParseDuration(x.After); err != nil {
				tb.Fatal(err)
			}
		}
		ts = ts.Add(gap)
		role := engram.Role(x.Role)
		if role == "" {
			role = engram.RoleUser
		}
		out[i] = engram.Turn{ID: fmt.Sprintf("%s-%02d", name, i), Seq: int64(i + 1), Namespace: "ns1", Session: "s1",
			Role: role, Speaker: x.Speaker, Content: x.Content, TS: ts}
	}
	return out
}

// sceneRun feeds turns one by one and returns every scene's final draft and
// the indexes of the turns that started one. It checks the invariants after
// each turn.
func sceneRun(tb testing.TB, cfg pipeline.SceneConfig, turns []engram.Turn) (drafts []*pipeline.SceneDraft, starts []int) {
	tb.Helper()
	var d *pipeline.SceneDraft
	for i, t := range turns {
		cur, started := cfg.AddTurn(d, t)
		if started {
			if d != nil {
				drafts = append(drafts, d)
			}
			starts = append(starts, i)
		} else if cur != d {
			tb.Fatalf("turn %d: a new draft without started", i)
		}
		d = cur
		checkSceneDraft(tb, cfg, d, t)
	}
	if d != nil {
		drafts = append(drafts, d)
	}
	return drafts, starts
}

// checkSceneDraft checks what every draft must satisfy after t was added.
func checkSceneDraft(tb testing.TB, cfg pipeline.SceneConfig, d *pipeline.SceneDraft, t engram.Turn) {
	tb.Helper()
	s := d.Scene
	maxTurns := cmp.Or(cfg.MaxTurns, pipeline.DefaultSceneMaxTurns)
	if len(s.Turns) == 0 || len(s.Turns) > maxTurns || s.Turns[len(s.Turns)-1] != t.ID && t.ID != "" {
		tb.Fatalf("scene turns %q after adding %q (max %d)", s.Turns, t.ID, maxTurns)
	}
	sum := sha256.Sum256([]byte(s.Namespace + "|" + s.Session + "|" + s.Turns[0]))
	if s.ID != "scn-"+hex.EncodeToString(sum[:])[:20] {
		tb.Fatalf("scene id %q", s.ID)
	}
	if s.Namespace != t.Namespace || s.Session != t.Session {
		tb.Fatalf("scene of %s/%s holds a turn of %s/%s", s.Namespace, s.Session, t.Namespace, t.Session)
	}
	if s.End.Before(s.Start) || s.Start.IsZero() != s.End.IsZero() {
		tb.Fatalf("scene from %v to %v", s.Start, s.End)
	}
	if n := utf8.RuneCountInString(s.Title); n > 80 || !utf8.ValidString(s.Title) {
		tb.Fatalf("title of %d runes: %q", n, s.Title)
	}
	if n := utf8.RuneCountInString(s.Summary); n > 400 || !utf8.ValidString(s.Summary) {
		tb.Fatalf("summary of %d runes: %q", n, s.Summary)
	}
	if s.Participants == nil || len(s.Participants) > 16 {
		tb.Fatalf("participants %q", s.Participants)
	}
	seen := map[string]bool{}
	for _, p := range s.Participants {
		if seen[p] || p == "" || p == string(engram.RoleTool) || p == string(engram.RoleSystem) {
			tb.Fatalf("participants %q", s.Participants)
		}
		seen[p] = true
	}
	if n := sceneStateSize(tb, d); n > 7<<10 {
		tb.Fatalf("draft of %d bytes besides its turn ids", n)
	}
}

// sceneStateSize is the size of d's JSON without its list of turn ids, which
// MaxTurns bounds.
func sceneStateSize(tb testing.TB, d *pipeline.SceneDraft) int {
	tb.Helper()
	c := *d
	c.Scene.Turns = nil
	b, err := json.Marshal(c)
	if err != nil {
		tb.Fatal(err)
	}
	return len(b)
}

func TestSceneFixtures(t *testing.T) {
	for name, c := range loadSceneCases(t) {
		t.Run(name, func(t *testing.T) {
			turns := c.turns(t, name)
			drafts, starts := sceneRun(t, pipeline.SceneConfig{}, turns)
			defer func() {
				if t.Failed() {
					for _, d := range drafts {
						t.Logf("%d turns, title %q, summary %q", len(d.Scene.Turns), d.Scene.Title, d.Scene.Summary)
					}
				}
			}()
			if !slices.Equal(starts, c.WantStarts) {
				t.Fatalf("%s: scenes start at turns %v, want %v", c.Name, starts, c.WantStarts)
			}
			// Together the scenes hold every turn once, in order.
			var all []string
			for _, d := range drafts {
				all = append(all, d.Scene.Turns...)
			}
			for i, id := range all {
				if id != turns[i].ID {
					t.Fatalf("turn %d is %s, want %s", i, id, turns[i].ID)
				}
			}
			for i, words := range c.WantTitle {
				for _, w := range words {
					if !strings.Contains(drafts[i].Scene.Title, w) {
						t.Errorf("scene %d: title %q lacks %q", i, drafts[i].Scene.Title, w)
					}
				}
			}
			for _, d := range drafts {
				if c.WantParticipants != nil && !slices.Equal(d.Scene.Participants, c.WantParticipants) {
					t.Errorf("participants %q, want %q", d.Scene.Participants, c.WantParticipants)
				}
				if len(d.Scene.Participants) > 0 && !strings.HasPrefix(d.Scene.Summary, d.Scene.Participants[0]) {
					t.Errorf("summary %q does not name the participants first", d.Scene.Summary)
				}
				first := d.Scene.Turns[0]
				i := slices.IndexFunc(turns, func(t engram.Turn) bool { return t.ID == first })
				last := turns[i+len(d.Scene.Turns)-1]
				if !d.Scene.Start.Equal(turns[i].TS) || !d.Scene.End.Equal(last.TS) {
					t.Errorf("scene from %v to %v, want %v to %v", d.Scene.Start, d.Scene.End, turns[i].TS, last.TS)
				}
			}
		})
	}
}

func TestSceneSummary(t *testing.T) {
	c := loadSceneCases(t)["en_travel_then_migration"]
	drafts, _ := sceneRun(t, pipeline.SceneConfig{}, c.turns(t, "x"))
	s := drafts[1].Scene
	if !strings.HasPrefix(s.Summary, "Bob, Alice: By the way, the billing service migration from MySQL to Postgres") {
		t.Errorf("summary %q: want the participants and the lead sentence first", s.Summary)
	}
	if !strings.Contains(s.Summary, "Postgres") || strings.Contains(s.Summary, "sounds good") {
		t.Errorf("summary %q", s.Summary)
	}
}

// sceneTopicTurns is a long conversation on one topic: no topic shifts.
func sceneTopicTurns(n int, gap time.Duration) []engram.Turn {
	lines := []string{
		"The Postgres migration of the billing service starts with the invoices table.",
		"Copy the billing invoices into the Postgres staging database first.",
		"The migration script for the invoices table is ready for the billing service.",
		"Check the billing row counts in Postgres after the invoices migration.",
	}
	turns := make([]engram.Turn, n)
	for i := range turns {
		turns[i] = engram.Turn{ID: fmt.Sprintf("t%04d", i), Namespace: "ns", Session: "s", Role: engram.RoleUser,
			Speaker: []string{"Ann", "Ben"}[i%2], Content: lines[i%len(lines)], TS: sceneTS.Add(time.Duration(i) * gap)}
	}
	return turns
}

func TestSceneMaxTurns(t *testing.T) {
	turns := sceneTopicTurns(100, time.Minute)
	_, starts := sceneRun(t, pipeline.SceneConfig{}, turns)
	if want := []int{0, 40, 80}; !slices.Equal(starts, want) {
		t.Errorf("default: scenes start at %v, want %v", starts, want)
	}
	_, starts = sceneRun(t, pipeline.SceneConfig{MaxTurns: 30}, turns)
	if want := []int{0, 30, 60, 90}; !slices.Equal(starts, want) {
		t.Errorf("MaxTurns 30: scenes start at %v, want %v", starts, want)
	}
}

func TestSceneGap(t *testing.T) {
	turns := sceneTopicTurns(6, 10*time.Minute)
	turns[3].TS = turns[2].TS.Add(2 * time.Hour)
	turns[4].TS = turns[3].TS.Add(29 * time.Minute)
	turns[5].TS = turns[4].TS.Add(31 * time.Minute)
	for _, tc := range []struct {
		cfg  pipeline.SceneConfig
		want []int
	}{
		{pipeline.SceneConfig{}, []int{0, 3, 5}},
		{pipeline.SceneConfig{Gap: 3 * time.Hour}, []int{0}},
		{pipeline.SceneConfig{Gap: 20 * time.Minute}, []int{0, 3, 4, 5}},
	} {
		if _, starts := sceneRun(t, tc.cfg, turns); !slices.Equal(starts, tc.want) {
			t.Errorf("gap %v: scenes start at %v, want %v", tc.cfg.Gap, starts, tc.want)
		}
	}
}

// Turns may arrive slightly out of time order; zero times are unknown.
func TestSceneTimes(t *testing.T) {
	turns := sceneTopicTurns(5, time.Minute)
	turns[1].TS = sceneTS.Add(-3 * time.Minute)
	turns[2].TS = time.Time{}
	turns[3].TS = sceneTS.Add(25 * time.Minute).In(time.FixedZone("X", 3600))
	turns[4].TS = sceneTS.Add(20 * time.Minute)
	drafts, starts := sceneRun(t, pipeline.SceneConfig{}, turns)
	if !slices.Equal(starts, []int{0}) {
		t.Fatalf("scenes start at %v", starts)
	}
	s := drafts[0].Scene
	if !s.Start.Equal(turns[1].TS) || !s.End.Equal(turns[3].TS) || s.End.Location() != time.UTC {
		t.Errorf("scene from %v to %v", s.Start, s.End)
	}
	// A first turn without a time: the scene's times come with the next.
	turns = sceneTopicTurns(3, time.Minute)
	turns[0].TS = time.Time{}
	drafts, _ = sceneRun(t, pipeline.SceneConfig{}, turns)
	if s := drafts[0].Scene; !s.Start.Equal(turns[1].TS) || !s.End.Equal(turns[2].TS) {
		t.Errorf("scene from %v to %v", s.Start, s.End)
	}
}

// A turn of another session, or redelivered, is handled without a caller's
// help.
func TestSceneSessionsAndRedelivery(t *testing.T) {
	turns := sceneTopicTurns(3, time.Minute)
	var cfg pipeline.SceneConfig
	d, _ := cfg.AddTurn(nil, turns[0])
	d, _ = cfg.AddTurn(d, turns[1])
	before, _ := json.Marshal(d)
	again, started := cfg.AddTurn(d, turns[1])
	after, _ := json.Marshal(again)
	if started || again != d || !bytes.Equal(before, after) {
		t.Errorf("a redelivered turn changed the draft")
	}
	other := turns[2]
	other.Session = "s2"
	d2, started := cfg.AddTurn(d, other)
	if !started || d2.Scene.Session != "s2" || len(d2.Scene.Turns) != 1 {
		t.Errorf("a turn of another session joined the scene: %+v", d2.Scene)
	}
	if after2, _ := json.Marshal(d); !bytes.Equal(before, after2) {
		t.Errorf("starting a new scene changed the old draft")
	}
	// The scene id depends on namespace, session and first turn only.
	if x, _ := cfg.AddTurn(nil, turns[0]); x.Scene.ID != d.Scene.ID || d2.Scene.ID == d.Scene.ID {
		t.Errorf("scene ids %s, %s, %s", x.Scene.ID, d.Scene.ID, d2.Scene.ID)
	}
}

func TestSceneTitles(t *testing.T) {
	for _, tc := range []struct {
		lines []string
		want  string
	}{
		{[]string{
			"We migrate the billing service to Postgres next month.",
			"The billing service has three Postgres replicas after the migration.",
			"Who owns the migration of the billing service?",
			"Dana owns the billing service migration to Postgres.",
		}, "billing service, Postgres, migration"},
		{[]string{"ok", "thanks!"}, "ok"},
		{[]string{"", ""}, ""},
		{[]string{"我们把订单数据库迁移到新服务器。", "数据库迁移需要停机吗？", "数据库迁移大概要一个小时。"}, "数据库迁移"},
	} {
		var d *pipeline.SceneDraft
		for i, l := range tc.lines {
			d, _ = pipeline.SceneConfig{}.AddTurn(d, engram.Turn{ID: fmt.Sprint(i), Role: engram.RoleUser, Content: l, TS: sceneTS})
		}
		if d.Scene.Title != tc.want {
			t.Errorf("title %q, want %q (summary %q)", d.Scene.Title, tc.want, d.Scene.Summary)
		}
	}
}

// sceneAcks are turns without topic: they never shift it.
var sceneAcks = []string{"ok", "thanks!", "sounds good", "好的", "👍", "", "yes, exactly", "np", "Thanks, will do!", "谢谢！"}

// sceneRandomTurns is a random conversation over a few sessions: topics,
// acknowledgements, Chinese, tool output, long pastes, pauses, bad bytes.
func sceneRandomTurns(seed uint64, n int) []engram.Turn {
	r := rand.New(rand.NewPCG(seed, 1))
	topics := [][]string{
		strings.Fields("Kyoto Tokyo shinkansen hotel ryokan temple cherry blossom flight passport itinerary Osaka"),
		strings.Fields("Postgres MySQL migration schema index invoices billing staging rollback replica vacuum"),
		strings.Fields("guitar chords practice amplifier pedal rehearsal setlist drummer bassist studio"),
		strings.Fields("成都 火锅 熊猫 酒店 机票 春熙路 宽窄巷子 旅行"),
		strings.Fields("数据库 迁移 订单表 支付表 备份 停机 脚本 测试环境"),
	}
	speakers := []string{"Ann", "Ben", "", "Chloé", "小王", "\xffbad"}
	roles := []engram.Role{engram.RoleUser, engram.RoleAssistant, engram.RoleUser, engram.RoleTool, engram.RoleSystem, "weird"}
	ts := sceneTS
	topic := 0
	turns := make([]engram.Turn, n)
	for i := range turns {
		if r.IntN(12) == 0 {
			topic = r.IntN(len(topics))
		}
		var b strings.Builder
		switch k := r.IntN(10); {
		case k < 2:
			b.WriteString(sceneAcks[r.IntN(len(sceneAcks))])
		case k == 2:
			for range 1 + r.IntN(2000) {
				b.WriteString(topics[r.IntN(len(topics))][r.IntN(8)] + string(rune('a'+r.IntN(26))) + " ")
			}
		case k == 3:
			b.WriteString("\xff\xfe\x00 ünïcode… 「」 ")
			fallthrough
		default:
			for range 4 + r.IntN(20) {
				w := topics[topic]
				b.WriteString(w[r.IntN(len(w))])
				b.WriteString([]string{" ", " ", ", ", ". ", "。", " the ", "\n"}[r.IntN(7)])
			}
		}
		switch r.IntN(20) {
		case 0:
			ts = ts.Add(3 * time.Hour)
		case 1:
			ts = ts.Add(-2 * time.Minute)
		default:
			ts = ts.Add(time.Duration(r.IntN(120)) * time.Second)
		}
		turns[i] = engram.Turn{ID: fmt.Sprintf("r%d-%d", seed, i), Namespace: "ns", Session: fmt.Sprint("s", r.IntN(2)),
			Role: roles[r.IntN(len(roles))], Speaker: speakers[r.IntN(len(speakers))], Content: b.String(), TS: ts}
	}
	return turns
}

// sceneSessions runs turns through one draft per session, as the L2 worker
// does, and returns the JSON of every draft in the order they closed, then
// the open ones. roundTrip stores and reloads a draft after the turns it
// names (by index).
func sceneSessions(tb testing.TB, cfg pipeline.SceneConfig, turns []engram.Turn, roundTrip func(i int) bool) []string {
	tb.Helper()
	open := map[string]*pipeline.SceneDraft{}
	var out []string
	marshal := func(d *pipeline.SceneDraft) string {
		b, err := json.Marshal(d)
		if err != nil {
			tb.Fatal(err)
		}
		return string(b)
	}
	var sessions []string
	for i, t := range turns {
		d := open[t.Session]
		if d == nil {
			sessions = append(sessions, t.Session)
		}
		cur, started := cfg.AddTurn(d, t)
		if started && d != nil {
			out = append(out, marshal(d))
			if slices.Contains(sceneAcks, t.Content) && t.TS.Sub(d.Scene.End) <= pipeline.DefaultSceneGap &&
				len(d.Scene.Turns) < pipeline.DefaultSceneMaxTurns {
				tb.Fatalf("turn %d, %q, shifted the topic", i, t.Content)
			}
		}
		checkSceneDraft(tb, cfg, cur, t)
		if roundTrip(i) {
			var back pipeline.SceneDraft
			if err := json.Unmarshal([]byte(marshal(cur)), &back); err != nil {
				tb.Fatal(err)
			}
			cur = &back
		}
		open[t.Session] = cur
	}
	for _, s := range sessions {
		out = append(out, marshal(open[s]))
	}
	return out
}

func TestSceneDeterministicAndResumable(t *testing.T) {
	var fixtures []engram.Turn
	for name, c := range loadSceneCases(t) {
		fixtures = append(fixtures, c.turns(t, name)...)
	}
	slices.SortStableFunc(fixtures, func(a, b engram.Turn) int { return strings.Compare(a.ID, b.ID) })
	never := func(int) bool { return false }
	for seed := range uint64(8) {
		turns := fixtures
		if seed > 0 {
			turns = sceneRandomTurns(seed, 250)
		}
		want := sceneSessions(t, pipeline.SceneConfig{}, turns, never)
		if again := sceneSessions(t, pipeline.SceneConfig{}, turns, never); !slices.Equal(want, again) {
			t.Fatalf("seed %d: a second run gave other drafts", seed)
		}
		r := rand.New(rand.NewPCG(seed, 2))
		for _, every := range []func(int) bool{
			func(int) bool { return true },
			func(int) bool { return r.IntN(7) == 0 },
		} {
			got := sceneSessions(t, pipeline.SceneConfig{}, turns, every)
			if !slices.Equal(want, got) {
				for i := range min(len(got), len(want)) {
					if got[i] != want[i] {
						t.Fatalf("seed %d: after JSON round trips draft %d is\n%s\nwant\n%s", seed, i, got[i], want[i])
					}
				}
				t.Fatalf("seed %d: after JSON round trips %d drafts, want %d", seed, len(got), len(want))
			}
		}
	}
}

// sceneLongTurn is a turn of about 4 KB of varied prose.
func sceneLongTurn(r *rand.Rand, i int) string {
	var b strings.Builder
	for b.Len() < 5000 {
		fmt.Fprintf(&b, "The %s%d subsystem %s the Component%d while the %s queue drains. ",
			[]string{"ingest", "billing", "search", "render"}[r.IntN(4)], r.IntN(500),
			[]string{"rebalances", "throttles", "replicates", "snapshots"}[r.IntN(4)], r.IntN(1000),
			strings.Repeat("x", 1+r.IntN(23)))
	}
	return b.String()
}

func TestSceneDraftSize(t *testing.T) {
	c := loadSceneCases(t)["en_travel_then_migration"]
	drafts, _ := sceneRun(t, pipeline.SceneConfig{}, c.turns(t, "x"))
	b, _ := json.Marshal(drafts[0])
	t.Logf("a 10-turn conversation: %d bytes of JSON", len(b))
	if len(b) > 4<<10 {
		t.Errorf("a draft of %d bytes after a short conversation", len(b))
	}

	r := rand.New(rand.NewPCG(7, 7))
	for _, cfg := range []pipeline.SceneConfig{{}, {MaxTurns: 1 << 30, Gap: time.Hour}} {
		var d *pipeline.SceneDraft
		largest := 0
		for i := range 1000 {
			d, _ = cfg.AddTurn(d, engram.Turn{ID: fmt.Sprintf("01JTURN%019d", i), Namespace: "ns", Session: "s",
				Role: engram.RoleUser, Speaker: fmt.Sprint("speaker", i%20), Content: sceneLongTurn(r, i), TS: sceneTS.Add(time.Duration(i) * time.Second)})
			largest = max(largest, sceneStateSize(t, d))
		}
		b, _ := json.Marshal(d)
		t.Logf("MaxTurns %d: %d turns in the last scene, %d bytes of JSON, at most %d bytes besides turn ids",
			cfg.MaxTurns, len(d.Scene.Turns), len(b), largest)
		if largest > 7<<10 {
			t.Errorf("a draft held %d bytes besides its turn ids", largest)
		}
		if cfg.MaxTurns == 0 && len(b) > 8<<10 {
			t.Errorf("a default draft of %d bytes", len(b))
		}
	}
}

func FuzzSceneAddTurn(f *testing.F) {
	for name, c := range loadSceneCases(f) {
		for _, x := range c.Turns {
			f.Add(name, x.Speaker, x.Role, x.Content, int64(60))
		}
	}
	f.Add("", "", "", "", int64(0))
	f.Add("id", "\xff", "tool", "\xff\xfe by the way 数据库\x00迁移 It's Alice's A.B.C. ……。", int64(-1<<62))
	f.Add("id", "x", "user", strings.Repeat("数据库迁移 Postgres ", 1000), int64(1<<62))
	f.Fuzz(func(t *testing.T, id, speaker, role, content string, secs int64) {
		cfg := pipeline.SceneConfig{}
		var d *pipeline.SceneDraft
		for i, x := range sceneTopicTurns(5, time.Minute) {
			if i == 2 {
				x = engram.Turn{ID: id, Namespace: "ns", Session: "s", Role: engram.Role(role), Speaker: speaker,
					Content: content, TS: sceneTS.Add(time.Duration(secs) * time.Second)}
			}
			cur, _ := cfg.AddTurn(d, x)
			checkSceneDraft(t, cfg, cur, x)
			b, err := json.Marshal(cur)
			if err != nil {
				t.Fatal(err)
			}
			var back pipeline.SceneDraft
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			d = &back
		}
	})
}

func BenchmarkSceneAddTurn(b *testing.B) {
	var short []engram.Turn
	for name, c := range loadSceneCases(b) {
		short = append(short, c.turns(b, name)...)
	}
	slices.SortStableFunc(short, func(a, b engram.Turn) int { return strings.Compare(a.ID, b.ID) })
	r := rand.New(rand.NewPCG(1, 1))
	long := make([]engram.Turn, 64)
	for i := range long {
		long[i] = engram.Turn{Namespace: "ns", Session: "s", Role: engram.RoleAssistant, Content: sceneLongTurn(r, i), TS: sceneTS}
	}
	for _, bc := range []struct {
		name  string
		turns []engram.Turn
	}{{"fixtures", short}, {"5KB", long}} {
		b.Run(bc.name, func(b *testing.B) {
			var cfg pipeline.SceneConfig
			var d *pipeline.SceneDraft
			i := 0
			for b.Loop() {
				t := bc.turns[i%len(bc.turns)]
				t.ID = strconv.Itoa(i)
				d, _ = cfg.AddTurn(d, t)
				i++
			}
			b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "turns/s")
		})
	}
}
