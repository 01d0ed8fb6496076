package server_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/homedir"
	"github.com/engram-dev/engram/internal/filetest"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/server"
)

// ingestHome archives turns into home through a server that it closes
// again, and returns the home's configuration.
func ingestHome(t *testing.T, home string, turns ...map[string]any) server.Config {
	t.Helper()
	s, stop := serve(t, home, nil)
	postTurns(t, s, turns...)
	stop()
	cfg, err := server.LoadConfig(home, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// postTurns posts turns and returns the answer's turns.
func postTurns(t *testing.T, s *server.Server, turns ...map[string]any) []engram.Appended {
	t.Helper()
	var out engram.IngestResult
	if code := call(t, s, "POST", "/v1/turns", map[string]any{"turns": turns}, &out); code != 201 || len(out.Turns) != len(turns) || len(out.Warnings) > 0 {
		t.Fatalf("POST /v1/turns: %d %+v", code, out)
	}
	return out.Turns
}

// health is GET /v1/health of s.
func health(t *testing.T, s *server.Server) engram.Health {
	t.Helper()
	var h engram.Health
	if code := call(t, s, "GET", "/v1/health", nil, &h); code != 200 {
		t.Fatalf("GET /v1/health: %d", code)
	}
	return h
}

// damage edits one byte of each of texts in the archive's day file, so
// that the checksums of their lines no longer match; it returns the file.
func damage(t *testing.T, home string, texts ...string) string {
	t.Helper()
	day := testutil.DayFiles(t, home)[0]
	b, err := os.ReadFile(day)
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range texts {
		i := strings.Index(string(b), text)
		if i < 0 {
			t.Fatalf("no %q in %s", text, day)
		}
		b[i] ^= 0x20 // the case of a letter
	}
	if err := os.WriteFile(day, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return day
}

// runJob opens the home of cfg and runs the job name, which must pass.
func runJob(t *testing.T, cfg server.Config, name string) {
	t.Helper()
	e, err := engine.Open(t.Context(), cfg.Config, quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if st, err := e.RunJob(t.Context(), name); err != nil || st.Failing {
		t.Fatalf("job %s: %+v %v", name, st, err)
	}
}

// doctorHome checks the home of cfg with no server, as `engram doctor`
// does; it must find nothing failed.
func doctorHome(t *testing.T, cfg server.Config) engram.DoctorReport {
	t.Helper()
	rep := engine.DoctorHome(t.Context(), cfg.Config, quiet())
	if rep.Failed() {
		t.Fatalf("doctor:\n%s", testutil.ReportText(rep))
	}
	return rep
}

// TestResentDamagedLine: the id of a damaged archive line, sent again, is a
// duplicate (the palace holds it); a home whose archive already holds such
// a re-send (an older engram archived it again) starts, indexes everything
// after it and shows the skip in health and the doctor; the repair writes
// the damaged line again from the palace's copy.
func TestResentDamagedLine(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	cfg := ingestHome(t, home, map[string]any{"id": "a1", "session": "s", "content": "alpha the first turn"},
		map[string]any{"id": "b2", "session": "s", "content": "bravo the second turn"},
		map[string]any{"id": "c3", "session": "s", "content": "charlie the third turn"})
	day := damage(t, home, "bravo")

	s, stop := serve(t, home, nil)
	got := postTurns(t, s, map[string]any{"id": "b2", "session": "s", "content": "bravo the second turn"},
		map[string]any{"id": "d4", "session": "s", "content": "delta the fourth turn"})
	if !got[0].Duplicate || got[0].Seq != 2 || got[1].Duplicate || got[1].Seq != 4 {
		t.Fatalf("re-send of the damaged line's id: %+v, want b2 a duplicate at seq 2, d4 new at seq 4", got)
	}
	h := health(t, s)
	// The archive-verify job, which runs at start, may report the line too.
	if h.IndexLag != 0 || h.IndexedSeq != 4 || h.Status != "degraded" ||
		!slices.ContainsFunc(h.Problems, func(p string) bool { return strings.Contains(p, "the archive has 1 damaged line") }) {
		t.Fatalf("health with a damaged line: %+v", h)
	}
	stop()

	// An engram before this fix archived the re-send again, at seq 5: the
	// archive skips the damaged line, so it does not know the id.
	a, err := archive.Open(filepath.Join(home, homedir.ArchiveDir), archive.Options{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Append(t.Context(), []engram.Turn{{ID: "b2", Namespace: "default", Session: "s", Role: engram.RoleUser,
		Content: "bravo the second turn", TS: time.Now()}})
	if err != nil || res[0].Duplicate || res[0].Seq != 5 {
		t.Fatalf("append the re-send: %+v %v", res, err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	s, stop = serve(t, home, nil) // before the fix: an error, "stored under another seq"
	got = postTurns(t, s, map[string]any{"id": "e5", "session": "s", "content": "echo the fifth turn"})
	if got[0].Seq != 6 {
		t.Fatalf("a turn after the re-send: %+v", got)
	}
	h = health(t, s)
	if h.IndexLag != 0 || h.IndexedSeq != 6 || h.SkippedTurns != 1 {
		t.Fatalf("health after the re-send: %+v, want every turn indexed and one skipped", h)
	}
	if a := recallHTTP(t, s, "keyword", "echo fifth"); !has(a, "e5") {
		t.Fatalf("the turn after the re-send is not found: %+v", a)
	}
	rep := doctorHTTP(t, s, true)
	c := testutil.MustFindCheck(t, rep, "archive", "fail", "1 damaged line", "the palace holds the turns of 1")
	if !strings.Contains(c.Fix, "engram repair") {
		t.Errorf("the damaged line's fix: %q, want engram repair", c.Fix)
	}
	testutil.MustFindCheck(t, rep, "index", "ok", "1 archived turn is not indexed", `seq 5 (id "b2"): id "b2" is stored under seq 2`)
	testutil.MustFindCheck(t, rep, "index", "ok", "5 turns indexed")
	if err := server.WriteServeInfo(home, s.Addr()); err != nil { // as engram serve does
		t.Fatal(err)
	}
	if _, err := server.Repair(t.Context(), cfg, quiet()); err == nil || !strings.Contains(err.Error(), "engram serve is running") {
		t.Errorf("repair while serving: %v", err)
	}
	stop()
	if err := server.RemoveServeInfo(home); err != nil {
		t.Fatal(err)
	}

	r, err := server.Repair(t.Context(), cfg, quiet())
	if err != nil || len(r.Repaired) != 1 || r.Repaired[0].Seq != 2 || len(r.Left) != 0 {
		t.Fatalf("repair: %+v %v; want seq 2 repaired from the palace's copy, none left", r, err)
	}
	// The archive-verify job failed on the damaged line; its next run
	// passes (the id archived twice loses nothing).
	runJob(t, cfg, "archive-verify")
	rep = doctorHome(t, cfg)
	testutil.MustFindCheck(t, rep, "archive", "ok", "6 turns")
	testutil.MustFindCheck(t, rep, "archive", "warn", `id is archived a second time`)
	if b, _ := os.ReadFile(day); !strings.Contains(string(b), `"bravo the second turn"`) {
		t.Errorf("the repaired day file:\n%s", b)
	}
	s = startServer(t, home, nil)
	if h := health(t, s); h.Status != "ok" || h.SkippedTurns != 1 {
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
	cfg := ingestHome(t, home, map[string]any{"id": "a1", "session": "s1", "content": "alpha the first turn stays"},
		map[string]any{"id": "a2", "session": "s1", "content": "the secret is Quxwobble-77"},
		map[string]any{"id": "a3", "session": "s2", "content": "the secret is Zephyrquill-88"},
		map[string]any{"id": "a4", "session": "s3", "content": "the secret is Vexmurdle-99"},
		map[string]any{"id": "a5", "session": "s3", "content": "a plain turn of s3"},
		map[string]any{"id": "a6", "session": "s4", "content": "the secret is Grimblethorp-11, keep the rest"},
		map[string]any{"id": "a7", "session": "s4", "content": "the last turn stays"})
	damage(t, home, "secret is Quxwobble", "secret is Zephyrquill", "secret is Vexmurdle", "secret is Grimblethorp")

	s, stop := serve(t, home, nil)
	if a := recallHTTP(t, s, "keyword", "Quxwobble"); !has(a, "a2") {
		t.Fatalf("recall does not find the turn of the damaged line: %+v", a)
	}
	var del engram.ForgetReport
	if code := call(t, s, "DELETE", "/v1/turns/a2", nil, &del); code != 200 || !slices.Equal(del.Turns, []string{"a2"}) {
		t.Fatalf("DELETE /v1/turns/a2: %d %+v", code, del)
	}
	var rep engram.ForgetReport
	if code := call(t, s, "POST", "/v1/forget", map[string]any{"ids": []string{"a3"}, "dry_run": true}, &rep); code != 200 || !slices.Equal(rep.Turns, []string{"a3"}) {
		t.Fatalf("forget a3 --dry-run: %d %+v", code, rep)
	}
	if code := call(t, s, "POST", "/v1/forget", map[string]any{"ids": []string{"a3"}}, &rep); code != 200 || !slices.Equal(rep.Turns, []string{"a3"}) {
		t.Fatalf("forget a3: %d %+v", code, rep)
	}
	if code := call(t, s, "POST", "/v1/forget", map[string]any{"session": "s3"}, &rep); code != 200 || len(rep.Turns) != 2 || len(rep.Unknown) != 0 {
		t.Fatalf("forget session s3: %d %+v", code, rep)
	}
	var dry, red engram.RedactReport
	if code := call(t, s, "POST", "/v1/redact", map[string]any{"texts": []string{"Grimblethorp-11"}, "dry_run": true}, &dry); code != 200 {
		t.Fatalf("redact --dry-run: %d", code)
	}
	if code := call(t, s, "POST", "/v1/redact", map[string]any{"texts": []string{"Grimblethorp-11"}}, &red); code != 200 {
		t.Fatalf("redact: %d", code)
	}
	if !slices.Equal(dry.Turns, []string{"a6"}) || dry.Spans != 1 || !slices.Equal(red.Turns, dry.Turns) || red.Spans != dry.Spans {
		t.Fatalf("redact of the damaged line's turn: dry run %+v, run %+v; want a6 with 1 span in both", dry, red)
	}
	if a := recallHTTP(t, s, "keyword", "keep the rest"); !has(a, "a6") {
		t.Fatalf("the redacted turn is lost: %+v", a)
	}
	for _, q := range []string{"Quxwobble", "Zephyrquill", "Vexmurdle", "Grimblethorp"} {
		if a := recallHTTP(t, s, "keyword", q); len(a.Results) > 0 {
			t.Errorf("recall still finds %s: %+v", q, a)
		}
	}
	stop()
	filetest.MustHoldNowhere(t, home, "Quxwobble", "Zephyrquill", "Vexmurdle", "Grimblethorp")
	runJob(t, cfg, "archive-verify")
	testutil.MustFindCheck(t, doctorHome(t, cfg), "archive", "ok", "3 turns")
}
