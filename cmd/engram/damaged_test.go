package main_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/internal/filetest"
)

// healthBody is the part of GET /v1/health these tests read.
type healthBody struct {
	Status       string   `json:"status"`
	ArchiveSeq   int64    `json:"archive_seq"`
	IndexedSeq   int64    `json:"indexed_seq"`
	IndexLag     int64    `json:"index_lag"`
	SkippedTurns int64    `json:"skipped_turns"`
	Problems     []string `json:"problems"`
}

func getHealth(t *testing.T, s *server) healthBody {
	t.Helper()
	var h healthBody
	if code, err := s.get(context.Background(), "/v1/health", &h); err != nil || code != http.StatusOK {
		t.Fatalf("GET /v1/health: %d %v", code, err)
	}
	return h
}

// postTurns posts turns and returns the answer's turns.
func postTurns(t *testing.T, s *server, turns ...map[string]any) []engram.Appended {
	t.Helper()
	var out struct {
		Turns    []engram.Appended `json:"turns"`
		Warnings []string          `json:"warnings"`
	}
	code, err := s.post(context.Background(), "/v1/turns", map[string]any{"turns": turns}, &out)
	if err != nil || code != http.StatusCreated || len(out.Turns) != len(turns) || len(out.Warnings) > 0 {
		t.Fatalf("POST /v1/turns: %d %v %+v", code, err, out)
	}
	return out.Turns
}

// commandsNamed checks that every `engram WORD` a warning or an error in
// the log text points to names a command `engram help` lists.
func commandsNamed(t *testing.T, text string) {
	t.Helper()
	help := runCLI(t, t.TempDir(), "", "help").stdout
	var warnings strings.Builder
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") {
			warnings.WriteString(line + "\n")
		}
	}
	for _, m := range regexp.MustCompile(`engram ([a-z-]+)`).FindAllStringSubmatch(warnings.String(), -1) {
		if !regexp.MustCompile(`(?m)^  ` + m[1] + ` `).MatchString(help) {
			t.Errorf("the log points to `engram %s`, which is no command:\n%s", m[1], text)
		}
	}
}

// TestResentDamagedLine: the id of a damaged archive line, sent again, is a
// duplicate (the palace holds it); a home whose archive already holds such
// a re-send (an older engram archived it again) starts, indexes everything
// after it and shows the skip in health and the doctor; `engram repair`
// writes the damaged line again from the palace's copy.
func TestResentDamagedLine(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	in := `{"id":"a1","session":"s","content":"alpha the first turn"}
{"id":"b2","session":"s","content":"bravo the second turn"}
{"id":"c3","session":"s","content":"charlie the third turn"}
`
	if r := runCLI(t, home, in, "ingest", "-"); r.code != 0 {
		t.Fatalf("ingest: %+v", r)
	}
	day := dayFiles(t, home)[0]
	b, err := os.ReadFile(day)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(b), "bravo")
	b[i] = 'B' // the checksum no longer matches
	if err := os.WriteFile(day, b, 0o600); err != nil {
		t.Fatal(err)
	}

	s := startServer(t, home)
	got := postTurns(t, s, map[string]any{"id": "b2", "session": "s", "content": "bravo the second turn"},
		map[string]any{"id": "d4", "session": "s", "content": "delta the fourth turn"})
	if !got[0].Duplicate || got[0].Seq != 2 || got[1].Duplicate || got[1].Seq != 4 {
		t.Fatalf("re-send of the damaged line's id: %+v, want b2 a duplicate at seq 2, d4 new at seq 4", got)
	}
	h := getHealth(t, s)
	// The archive-verify job, which runs at start, may report the line too.
	if h.IndexLag != 0 || h.IndexedSeq != 4 || h.Status != "degraded" ||
		!slices.ContainsFunc(h.Problems, func(p string) bool { return strings.Contains(p, "the archive has 1 damaged line") }) {
		t.Fatalf("health with a damaged line: %+v", h)
	}
	s.stop(t)
	if !strings.Contains(s.stderr.String(), "engram doctor") {
		t.Errorf("the log does not point to engram doctor:\n%s", s.stderr)
	}
	commandsNamed(t, s.stderr.String())

	// An engram before this fix archived the re-send again, at seq 5: the
	// archive skips the damaged line, so it does not know the id.
	a, err := archive.Open(filepath.Join(home, "archive"), archive.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Append(context.Background(), []engram.Turn{{ID: "b2", Namespace: "default", Session: "s", Role: engram.RoleUser,
		Content: "bravo the second turn", TS: time.Now()}})
	if err != nil || res[0].Duplicate || res[0].Seq != 5 {
		t.Fatalf("append the re-send: %+v %v", res, err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	s = startServer(t, home) // before the fix: exit 1, "stored under another seq"
	got = postTurns(t, s, map[string]any{"id": "e5", "session": "s", "content": "echo the fifth turn"})
	if got[0].Seq != 6 {
		t.Fatalf("a turn after the re-send: %+v", got)
	}
	h = getHealth(t, s)
	if h.IndexLag != 0 || h.IndexedSeq != 6 || h.SkippedTurns != 1 {
		t.Fatalf("health after the re-send: %+v, want every turn indexed and one skipped", h)
	}
	if a := recallHTTP(t, s, "keyword", "echo fifth"); !a.has("e5") {
		t.Fatalf("the turn after the re-send is not found: %+v", a)
	}
	rep, _ := runDoctor(t, home, 1)
	c := rep.mustFind(t, "archive", "fail", "1 damaged line", "the palace holds the turns of 1")
	if !strings.Contains(c.Fix, "engram repair") {
		t.Errorf("the damaged line's fix: %q, want engram repair", c.Fix)
	}
	rep.mustFind(t, "index", "ok", "1 archived turn is not indexed", `seq 5 (id "b2"): id "b2" is stored under seq 2`)
	rep.mustFind(t, "index", "ok", "5 turns indexed")
	if r := runCLI(t, home, "", "repair"); r.code != 1 || !strings.Contains(r.stderr, "engram serve is running") {
		t.Errorf("repair while serving: %+v", r)
	}
	s.stop(t)

	r := runCLI(t, home, "", "repair")
	if r.code != 0 || !strings.Contains(r.stdout, "seq 2 from the palace's copy") || !strings.Contains(r.stdout, "1 damaged line repaired, 0 left") {
		t.Fatalf("repair: %+v", r)
	}
	// The archive-verify job failed on the damaged line; its next run
	// passes (the id archived twice loses nothing).
	if r := runCLI(t, home, "", "jobs", "run", "archive-verify"); r.code != 0 {
		t.Fatalf("jobs run archive-verify after the repair: %+v", r)
	}
	rep, _ = runDoctor(t, home, 0)
	rep.mustFind(t, "archive", "ok", "6 turns")
	rep.mustFind(t, "archive", "warn", `id is archived a second time`)
	if b, _ := os.ReadFile(day); !strings.Contains(string(b), `"bravo the second turn"`) {
		t.Errorf("the repaired day file:\n%s", b)
	}
	s = startServer(t, home)
	defer s.stop(t)
	if h := getHealth(t, s); h.Status != "ok" || h.SkippedTurns != 1 {
		t.Errorf("health after the repair: %+v", h)
	}
}

// TestForgetAndRedactDamagedLines: turns whose archive lines were damaged
// after they were indexed (one byte edited: the checksum no longer
// matches) are still found by recall; forget by id (DELETE and POST
// /v1/forget), by session, and a redaction (whose dry run says what the
// run does) reach them from the palace's copies, as engram repair does,
// rewriting each damaged line as a tombstone or a redacted line: the
// secrets are in no file of the home afterwards, and the archive verifies
// clean.
func TestForgetAndRedactDamagedLines(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	in := `{"id":"a1","session":"s1","content":"alpha the first turn stays"}
{"id":"a2","session":"s1","content":"the secret is Quxwobble-77"}
{"id":"a3","session":"s2","content":"the secret is Zephyrquill-88"}
{"id":"a4","session":"s3","content":"the secret is Vexmurdle-99"}
{"id":"a5","session":"s3","content":"a plain turn of s3"}
{"id":"a6","session":"s4","content":"the secret is Grimblethorp-11, keep the rest"}
{"id":"a7","session":"s4","content":"the last turn stays"}
`
	if r := runCLI(t, home, in, "ingest", "-"); r.code != 0 {
		t.Fatalf("ingest: %+v", r)
	}
	day := dayFiles(t, home)[0]
	b, err := os.ReadFile(day)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"Quxwobble", "Zephyrquill", "Vexmurdle", "Grimblethorp"} {
		i := strings.Index(string(b), "secret is "+secret)
		b[i] = 'S' // the checksum no longer matches
	}
	if err := os.WriteFile(day, b, 0o600); err != nil {
		t.Fatal(err)
	}

	s := startServer(t, home)
	if a := recallHTTP(t, s, "keyword", "Quxwobble"); !a.has("a2") {
		t.Fatalf("recall does not find the turn of the damaged line: %+v", a)
	}
	ctx := context.Background()
	req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, "http://"+s.addr+"/v1/turns/a2", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var del engram.ForgetReport
	err = json.NewDecoder(resp.Body).Decode(&del)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || !slices.Equal(del.Turns, []string{"a2"}) {
		t.Fatalf("DELETE /v1/turns/a2: %d %+v %v", resp.StatusCode, del, err)
	}
	var rep engram.ForgetReport
	if code, err := s.post(ctx, "/v1/forget", map[string]any{"ids": []string{"a3"}, "dry_run": true}, &rep); err != nil || code != 200 || !slices.Equal(rep.Turns, []string{"a3"}) {
		t.Fatalf("forget a3 --dry-run: %d %+v %v", code, rep, err)
	}
	if code, err := s.post(ctx, "/v1/forget", map[string]any{"ids": []string{"a3"}}, &rep); err != nil || code != 200 || !slices.Equal(rep.Turns, []string{"a3"}) {
		t.Fatalf("forget a3: %d %+v %v", code, rep, err)
	}
	if code, err := s.post(ctx, "/v1/forget", map[string]any{"session": "s3"}, &rep); err != nil || code != 200 || len(rep.Turns) != 2 || len(rep.Unknown) != 0 {
		t.Fatalf("forget session s3: %d %+v %v", code, rep, err)
	}
	var dry, red engram.RedactReport
	if code, err := s.post(ctx, "/v1/redact", map[string]any{"texts": []string{"Grimblethorp-11"}, "dry_run": true}, &dry); err != nil || code != 200 {
		t.Fatalf("redact --dry-run: %d %v", code, err)
	}
	if code, err := s.post(ctx, "/v1/redact", map[string]any{"texts": []string{"Grimblethorp-11"}}, &red); err != nil || code != 200 {
		t.Fatalf("redact: %d %v", code, err)
	}
	if !slices.Equal(dry.Turns, []string{"a6"}) || dry.Spans != 1 || !slices.Equal(red.Turns, dry.Turns) || red.Spans != dry.Spans {
		t.Fatalf("redact of the damaged line's turn: dry run %+v, run %+v; want a6 with 1 span in both", dry, red)
	}
	if a := recallHTTP(t, s, "keyword", "keep the rest"); !a.has("a6") {
		t.Fatalf("the redacted turn is lost: %+v", a)
	}
	for _, q := range []string{"Quxwobble", "Zephyrquill", "Vexmurdle", "Grimblethorp"} {
		if a := recallHTTP(t, s, "keyword", q); len(a.Results) > 0 {
			t.Errorf("recall still finds %s: %+v", q, a)
		}
	}
	s.stop(t)
	filetest.MustHoldNowhere(t, home, "Quxwobble", "Zephyrquill", "Vexmurdle", "Grimblethorp")
	if r := runCLI(t, home, "", "jobs", "run", "archive-verify"); r.code != 0 {
		t.Fatalf("archive-verify after the forgets and the redaction: %+v", r)
	}
	rep2, _ := runDoctor(t, home, 0)
	rep2.mustFind(t, "archive", "ok", "3 turns")
}
