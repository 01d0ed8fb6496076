package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/bench"
)

// locomoFixture is a LoCoMo conversation small enough to score by hand
// (testdata/bench/locomo-fixture.json, read as a map to change). Every
// query term occurs in exactly the turns named next to the question, so the
// scores do not depend on how BM25 orders them:
//   - "What was on the sofa?" (category 4, evidence D1:3): "sofa" is only
//     in the caption of D1:3;
//   - "Is the violin teacher patient?" (category 1): violin, teacher,
//     patient are in D2:1 and D2:3, both evidence; D1:1 is never found; its
//     evidence holds one entry to split, one malformed and one of no turn;
//   - "When did they talk about the breed?" (category 2): breed is only in
//     D1:2, in the evidence's session but no evidence;
//   - an adversarial question (category 5) and one without evidence.
//
// A date without turns (session_3) is no session.
func locomoFixture() map[string]any {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "bench", "locomo-fixture.json"))
	if err != nil {
		panic(err)
	}
	var f map[string]any
	if err := json.Unmarshal(b, &f); err != nil {
		panic(err)
	}
	return f
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// runMain runs the CLI in this process with an empty environment.
func runMain(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	code = m.Run(context.Background(), args)
	return code, out.String(), errb.String()
}

// benchLocomo runs `engram bench locomo --json` with args and decodes the report.
func benchLocomo(t *testing.T, args ...string) bench.LocomoReport {
	t.Helper()
	code, stdout, stderr := runMain(t, append([]string{"bench", "locomo", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("bench locomo %v: exit %d\n%s", args, code, stderr)
	}
	var rep bench.LocomoReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("decode %s: %v", stdout, err)
	}
	return rep
}

// wantScores checks scores at cutoffs 1, 5 and 10: any, recall and session at each.
func wantScores(t *testing.T, what string, s bench.LocomoScores, questions int, at [3][4]float64) {
	t.Helper()
	if s.Questions != questions || len(s.At) != 3 {
		t.Fatalf("%s: %d questions, %d cutoffs; want %d and 3", what, s.Questions, len(s.At), questions)
	}
	for i, k := range []int{1, 5, 10} {
		got := s.At[i]
		want := bench.LocomoAtK{K: k, Any: at[i][0], Recall: at[i][1], All: at[i][2], Session: at[i][3]}
		if got.K != k || math.Abs(got.Any-want.Any) > 1e-9 || math.Abs(got.Recall-want.Recall) > 1e-9 ||
			math.Abs(got.All-want.All) > 1e-9 || math.Abs(got.Session-want.Session) > 1e-9 {
			t.Errorf("%s @%d: got %+v, want %+v", what, k, got, want)
		}
	}
}

func TestBenchLocomoScores(t *testing.T) {
	data := t.TempDir()
	writeJSON(t, filepath.Join(data, "7.json"), locomoFixture())
	home := filepath.Join(t.TempDir(), "home")
	out := filepath.Join(t.TempDir(), "result.json")

	rep := benchLocomo(t, "--data", data, "--mode", "keyword", "--keep", home, "--out", out)
	if rep.Benchmark != "locomo" || rep.K != 10 || !rep.Captions || len(rep.Files) != 1 || rep.Files[0] != "7.json" {
		t.Errorf("header: %+v", rep)
	}
	in := rep.Ingest
	if in.Conversations != 1 || in.Sessions != 2 || in.Turns != 6 || in.Archived != 6 || in.Duplicates != 0 || in.Requests != 2 {
		t.Errorf("ingest: %+v", in)
	}
	c := rep.Counts
	if c.Questions != 5 || c.Scored != 3 || c.Adversarial != 1 || c.NoEvidence != 1 ||
		c.EvidenceTurns != 5 || c.Split != 1 || c.Malformed != 1 || c.Unknown != 1 || len(c.Skipped) != 2 {
		t.Errorf("counts: %+v", c)
	}
	if len(rep.Modes) != 1 {
		t.Fatalf("modes: %+v", rep.Modes)
	}
	md := rep.Modes[0]
	if md.Mode != "keyword" || md.Ran["keyword"] != 3 || md.ForeignSources != 0 || md.Latency.Requests != 3 {
		t.Errorf("mode: %+v", md)
	}
	const third, ninth = 1.0 / 3, 1.0 / 9
	// Sofa: found at rank 1. Violin: both found evidence turns rank 1-2,
	// D1:1 never. Breed: no evidence, but its session at rank 1.
	wantScores(t, "overall", md.Overall, 3, [3][4]float64{
		{2 * third, 4 * ninth, third, 1},
		{2 * third, 5 * ninth, third, 1},
		{2 * third, 5 * ninth, third, 1},
	})
	if len(md.Conversations) != 1 || md.Conversations[0].Name != "7.json" || !sameJSON(md.Conversations[0].At, md.Overall.At) {
		t.Errorf("conversations: %+v", md.Conversations)
	}
	if md.TurnsPerResult < 1 {
		t.Errorf("turns per result %v", md.TurnsPerResult)
	}
	// The session-level figure asks all five questions: the adversarial one
	// (its evidence in session 1) and the one without evidence (counted 1)
	// too.
	if ss := md.Sessions; ss == nil || ss.K != 10 || ss.Pool != 50 || ss.Questions != 5 || ss.Recall < 0.2 || ss.Recall > 1 {
		t.Errorf("sessions: %+v", md.Sessions)
	}
	if md.Questions != nil {
		t.Errorf("per-question ranks without --per-question: %+v", md.Questions)
	}
	if len(md.Categories) != 3 {
		t.Fatalf("categories: %+v", md.Categories)
	}
	for i, want := range []struct {
		cat  int
		name string
		at   [3][4]float64
	}{
		{1, "multi-hop", [3][4]float64{{1, third, 0, 1}, {1, 2 * third, 0, 1}, {1, 2 * third, 0, 1}}},
		{2, "temporal", [3][4]float64{{0, 0, 0, 1}, {0, 0, 0, 1}, {0, 0, 0, 1}}},
		{4, "single-hop", [3][4]float64{{1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}}},
	} {
		s := md.Categories[i]
		if s.Category != want.cat || s.Name != want.name {
			t.Errorf("category %d: %d %q, want %d %q", i, s.Category, s.Name, want.cat, want.name)
		}
		wantScores(t, want.name, s, 1, want.at)
	}

	// --out holds the same report.
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var fromFile bench.LocomoReport
	if err := json.Unmarshal(b, &fromFile); err != nil || fromFile.Modes[0].Overall.At[0] != md.Overall.At[0] {
		t.Errorf("--out: %v %s", err, b)
	}

	// The kept home holds the turns as mapped, through the real archive.
	turns := readArchive(t, filepath.Join(home, "archive"))
	if len(turns) != 6 {
		t.Fatalf("archive holds %d turns, want 6", len(turns))
	}
	got := turns["locomo-7-D1:3"]
	want := engram.Turn{
		ID: "locomo-7-D1:3", Namespace: "locomo-7", Session: "session_1", Role: engram.RoleUser, Speaker: "Ana",
		Content: "A beagle. He loves the park. [shares a photo: a photo of a beagle on a sofa]",
		TS:      time.Date(2023, 5, 8, 13, 57, 0, 0, time.UTC), // 1:56 pm + 2 turns of 30 s
	}
	if got.ID != want.ID || got.Namespace != want.Namespace || got.Session != want.Session || got.Role != want.Role ||
		got.Speaker != want.Speaker || got.Content != want.Content || !got.TS.Equal(want.TS) ||
		string(got.Meta) != `{"conversation":"7","dia_id":"D1:3"}` {
		t.Errorf("archived turn:\n got %+v meta %s\nwant %+v", got, got.Meta, want)
	}
	if ts := turns["locomo-7-D2:1"].TS; !ts.Equal(time.Date(2023, 6, 27, 10, 37, 0, 0, time.UTC)) {
		t.Errorf("D2:1 ts %v", ts)
	}

	// A second run on the kept home adds nothing and scores the same.
	again := benchLocomo(t, "--data", data, "--mode", "keyword", "--keep", home)
	if again.Ingest.Archived != 0 || again.Ingest.Duplicates != 6 {
		t.Errorf("re-run ingest: %+v", again.Ingest)
	}
	if !sameScores(again.Modes[0], md) {
		t.Errorf("re-run scores differ:\n%+v\n%+v", again.Modes[0], md)
	}

	// Without captions, the sofa question finds nothing.
	nocap := benchLocomo(t, "--data", data, "--mode", "keyword", "--captions=false")
	wantScores(t, "no captions", nocap.Modes[0].Overall, 3, [3][4]float64{
		{third, ninth, 0, 2 * third},
		{third, 2 * ninth, 0, 2 * third},
		{third, 2 * ninth, 0, 2 * third},
	})

	// --per-question says where each question's evidence ranked.
	perq := benchLocomo(t, "--data", data, "--mode", "keyword", "--per-question", "--session-k", "0")
	if pm := perq.Modes[0]; pm.Sessions != nil || len(pm.Questions) != 3 || pm.Questions[0].Question != "What was on the sofa?" ||
		pm.Questions[0].First != 0 || pm.Questions[0].Results[0] != "D1:3" || len(pm.Questions[1].Ranks) != 3 || pm.Questions[1].Ranks[2] != -1 {
		t.Errorf("per question: %+v", pm.Questions)
	}

	// Every mode the server accepts is measured by default, keyword and auto
	// at least; the table names them.
	code, stdout, stderr := runMain(t, "bench", "locomo", "--data", data)
	if code != 0 {
		t.Fatalf("table: exit %d\n%s", code, stderr)
	}
	for _, want := range []string{
		"mode keyword (the server ran keyword), k 10",
		"\nmode auto (the server ran ",
		"questions: 3 scored (categories 1-4) of 5; skipped 1 adversarial (category 5) and 1 without usable evidence",
		"1 multi-hop        1   100.0 100.0 100.0    33.3  66.7  66.7     0.0   0.0   0.0   100.0 100.0 100.0\n",
		"all                3    66.7  66.7  66.7    44.4  55.6  55.6    33.3  33.3  33.3   100.0 100.0 100.0\n",
		"of the evidence sessions among the first 10 sessions of 50 results, over 5 questions",
		`skipped 7.json qa[1]: evidence "D9": malformed id "D9"`,
		`skipped 7.json qa[1]: evidence "D3:1": no turn D3:1 in the conversation`,
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
}

func sameJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

func sameScores(a, b bench.LocomoMode) bool {
	ja, _ := json.Marshal([]any{a.Overall, a.Categories, a.Ran})
	jb, _ := json.Marshal([]any{b.Overall, b.Categories, b.Ran})
	return bytes.Equal(ja, jb)
}

// readArchive returns the turns of an archive folder by id.
func readArchive(t *testing.T, dir string) map[string]engram.Turn {
	t.Helper()
	turns := make(map[string]engram.Turn)
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".jsonl" {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var tu engram.Turn
			if err := json.Unmarshal(sc.Bytes(), &tu); err != nil {
				return err
			}
			turns[tu.ID] = tu
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return turns
}

func TestBenchLocomoUsage(t *testing.T) {
	data := t.TempDir()
	writeJSON(t, filepath.Join(data, "7.json"), locomoFixture())
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bench"}, "engram bench: missing the benchmark (want one of: locomo, layers, contention, scale)\nRun 'engram bench --help' for usage."},
		{[]string{"bench", "nope"}, `engram bench: unknown benchmark "nope"`},
		{[]string{"bench", "locomo", "--k", "0"}, "engram bench locomo: --k must be at least 1, got 0\nRun 'engram bench locomo --help' for usage."},
		{[]string{"bench", "locomo", "extra"}, `engram bench locomo: unexpected argument "extra"`},
		{[]string{"bench", "scale", "--turns", "0"}, "engram bench scale: --turns must be at least 1, got 0"},
		{[]string{"bench", "scale", "--batch", "10001"}, "engram bench scale: --batch must be at most 10000, got 10001"},
		{[]string{"bench", "contention", "--writers", "-1"}, "engram bench contention: --writers must be at least 0, got -1"},
		{[]string{"bench", "contention", "--readers", "0"}, "engram bench contention: --readers must be at least 1, got 0"},
		{[]string{"--home", t.TempDir(), "bench", "locomo"}, "engram bench locomo: --home is not used"},
		// The server's refusal, with its message.
		{[]string{"bench", "locomo", "--data", data, "--mode", "keyword,bogus"}, `engram bench locomo: the server refuses --mode bogus: mode: unknown mode "bogus"`},
		{[]string{"bench", "locomo", "--data", data, "--k", "100000"}, "engram bench locomo: the server refuses --k 100000: k: "},
	} {
		code, _, stderr := runMain(t, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
	for _, args := range [][]string{{"bench", "--help"}, {"help", "bench"}, {"bench", "locomo", "--help"}} {
		if code, stdout, _ := runMain(t, args...); code != 0 || !strings.Contains(stdout, "Usage: engram bench") {
			t.Errorf("%v: exit %d, stdout %q", args, code, stdout)
		}
	}
}

func TestBenchLocomoMalformed(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(f map[string]any)
		want   string
	}{
		{"no text", func(f map[string]any) { delete(f["session_1"].([]any)[1].(map[string]any), "text") }, "7.json: session_1[1].text: missing"},
		{"text not a string", func(f map[string]any) { f["session_2"].([]any)[0].(map[string]any)["text"] = 42 }, "7.json: session_2[0].text: want a string, got 42"},
		{"blank text", func(f map[string]any) { f["session_2"].([]any)[0].(map[string]any)["text"] = " " }, "7.json: session_2[0].text: blank, and no photo caption"},
		{"no date", func(f map[string]any) { delete(f, "session_2_date_time") }, "7.json: session_2_date_time: missing"},
		{"bad date", func(f map[string]any) { f["session_1_date_time"] = "yesterday" }, `7.json: session_1_date_time: "yesterday" is not a time like "1:56 pm on 8 May, 2023"`},
		{"session not a list", func(f map[string]any) { f["session_1"] = "x" }, "7.json: session_1: want a list of turns, got a string"},
		{"bad dia_id", func(f map[string]any) { f["session_1"].([]any)[0].(map[string]any)["dia_id"] = "1:1" }, `7.json: session_1[0].dia_id: "1:1" is not a dialogue id like D1:3`},
		{"dia_id of another session", func(f map[string]any) { f["session_2"].([]any)[0].(map[string]any)["dia_id"] = "D1:9" }, "7.json: session_2[0].dia_id: D1:9 is not a turn of session 2"},
		{"dia_id twice", func(f map[string]any) { f["session_1"].([]any)[1].(map[string]any)["dia_id"] = "D1:1" }, "7.json: session_1[1].dia_id: D1:1 appears twice"},
		{"no speaker", func(f map[string]any) { delete(f["session_1"].([]any)[0].(map[string]any), "speaker") }, "7.json: session_1[0].speaker: missing"},
		{"no qa", func(f map[string]any) { delete(f, "qa") }, "7.json: qa: missing"},
		{"evidence not a list", func(f map[string]any) { f["qa"].([]any)[0].(map[string]any)["evidence"] = "D1:3" }, "7.json: qa[0].evidence: want a list of dialogue ids, got a string"},
		{"unknown category", func(f map[string]any) { f["qa"].([]any)[1].(map[string]any)["category"] = 9 }, "7.json: qa[1].category: 9 is not a LoCoMo category (1-5)"},
		{"category not a number", func(f map[string]any) { f["qa"].([]any)[1].(map[string]any)["category"] = "1" }, "7.json: qa[1].category: want an integer, got a string"},
		{"blank question", func(f map[string]any) { f["qa"].([]any)[2].(map[string]any)["question"] = "" }, "7.json: qa[2].question: blank"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := t.TempDir()
			f := locomoFixture()
			tc.change(f)
			writeJSON(t, filepath.Join(data, "7.json"), f)
			code, stdout, stderr := runMain(t, "bench", "locomo", "--data", data)
			if code != exitFail || !strings.Contains(stderr, tc.want) || stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and %q", code, stdout, stderr, tc.want)
			}
		})
	}
	for _, tc := range []struct{ name, content, want string }{
		{"8.json", "[1, 2]", "8.json: want a JSON object, got a list"},
		{"9.json", `{"qa": [`, "9.json: not valid JSON at byte 8: unexpected end of JSON input"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := t.TempDir()
			if err := os.WriteFile(filepath.Join(data, tc.name), []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			code, _, stderr := runMain(t, "bench", "locomo", "--data", data)
			if code != exitFail || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit 1 and %q", code, stderr, tc.want)
			}
		})
	}
	t.Run("no files", func(t *testing.T) {
		data := t.TempDir()
		code, _, stderr := runMain(t, "bench", "locomo", "--data", data)
		if code != exitFail || !strings.Contains(stderr, "--data: no LoCoMo conversation files (*.json) in "+data) {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
	})
}

// TestBenchLocomoDevSet runs the bench on the real development set when it is
// at hand: a smoke test of the counts, not of the scores, which change with
// every recall improvement.
func TestBenchLocomoDevSet(t *testing.T) {
	if testing.Short() {
		t.Skip("reads the LoCoMo development set")
	}
	dir, err := bench.FindLocomoData()
	if err != nil {
		t.Skip(err)
	}
	rep := benchLocomo(t, "--data", dir, "--mode", "keyword")
	c := rep.Counts
	if rep.Ingest.Turns != 788 || rep.Ingest.Archived != 788 || c.Scored != 231 || c.Adversarial != 71 || c.NoEvidence != 2 || c.Split != 1 || c.Malformed != 0 || c.Unknown != 0 {
		t.Errorf("ingest %+v, counts %+v; the README says 788 turns and 231 scored questions", rep.Ingest, c)
	}
	if at := rep.Modes[0].Overall.At[2]; at.K != 10 || at.Any <= 0 || at.Any > 1 {
		t.Errorf("scores: %+v", at)
	}
	// The real chats beside it, in the same format.
	rt := filepath.Join(filepath.Dir(dir), "realtalk-dev")
	if _, err := os.Stat(rt); err != nil {
		t.Skip("no realtalk-dev beside", dir)
	}
	rep = benchLocomo(t, "--data", rt, "--mode", "keyword", "--session-k", "0")
	c = rep.Counts
	if rep.Ingest.Turns != 4115 || rep.Ingest.Conversations != 5 || c.Scored != 357 || c.Adversarial != 0 || len(rep.Modes[0].Conversations) != 5 {
		t.Errorf("realtalk-dev: ingest %+v, counts %+v; its README says 4,115 turns and 357 questions", rep.Ingest, c)
	}
}

// TestBenchLayers runs `engram bench layers` on the fixture with two events:
// Ben's, which his turn states in so many words, and Ana's, whose content
// words no turn of her session holds.
func TestBenchLayers(t *testing.T) {
	data := t.TempDir()
	f := locomoFixture()
	f["events_session_1"] = map[string]any{"Ana": []string{"Ana wins a chess tournament."}, "date": "8 May, 2023"}
	f["events_session_2"] = map[string]any{"Ben": []string{"Ben starts learning the violin."}, "date": "27 June, 2023"}
	writeJSON(t, filepath.Join(data, "7.json"), f)
	code, stdout, stderr := runMain(t, "bench", "layers", "--json", "--data", data)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var rep bench.LayersReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("decode %s: %v", stdout, err)
	}
	if rep.Benchmark != "layers" || rep.Turns != 6 || rep.EventCount != 2 || rep.Covered != 1 || rep.Coverage != 0.5 ||
		rep.Memories == 0 || rep.MemoriesPerTurn != float64(rep.Memories)/6 || len(rep.Conversations) != 1 {
		t.Errorf("totals: %+v", rep.LayersTotals)
	}
	if len(rep.Events) != 2 || rep.Events[0].Covered || !rep.Events[1].Covered || !strings.Contains(rep.Events[1].Best, "violin") {
		t.Errorf("events: %+v", rep.Events)
	}
	if len(rep.Sample) != rep.Memories || rep.Sample[0].Source == "" || len(rep.Sample[0].Turns) == 0 {
		t.Errorf("sample: %+v", rep.Sample)
	}
	code, stdout, _ = runMain(t, "bench", "layers", "--data", data, "--events", "--sample", "1")
	for _, want := range []string{"extractor ", "coverage", "+ 7.json session 2 Ben: Ben starts learning the violin.", "- 7.json session 1 Ana", "Sample of 1 memories"} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("text report: exit %d, no %q in\n%s", code, want, stdout)
		}
	}

	delete(f, "events_session_1")
	delete(f, "events_session_2")
	writeJSON(t, filepath.Join(data, "7.json"), f)
	if code, _, stderr := runMain(t, "bench", "layers", "--data", data); code != exitFail || !strings.Contains(stderr, "has events (events_session_N)") {
		t.Errorf("no events: exit %d, stderr %q", code, stderr)
	}
	if code, _, stderr := runMain(t, "bench", "layers", "--sample", "-1"); code != exitUsage || !strings.Contains(stderr, "--sample must not be negative") {
		t.Errorf("--sample -1: exit %d, stderr %q", code, stderr)
	}
}
