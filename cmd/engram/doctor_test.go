package main_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the palace's driver, to damage palace.db as a disk or a bug would
)

// doctorReport is the JSON of `engram doctor --json` and GET /v1/doctor.
type doctorReport struct {
	Status string        `json:"status"`
	Checks []doctorCheck `json:"checks"`
}

type doctorCheck struct {
	Name, Status, Finding, Fix string
}

// runDoctor runs `engram doctor --json` and decodes the report; want is the
// exit status expected (0 without a failed check, 1 with one).
func runDoctor(t *testing.T, home string, want int) (doctorReport, result) {
	t.Helper()
	r := runCLI(t, home, "", "doctor", "--json")
	var rep doctorReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("doctor --json: %v\n%+v", err, r)
	}
	if r.code != want {
		t.Fatalf("doctor exited %d, want %d:\n%s\n%s", r.code, want, rep, r.stderr)
	}
	return rep, r
}

func (r doctorReport) String() string {
	var b strings.Builder
	for _, c := range r.Checks {
		fmt.Fprintf(&b, "%-4s %s: %s", strings.ToUpper(c.Status), c.Name, c.Finding)
		if c.Fix != "" {
			fmt.Fprintf(&b, " [fix: %s]", c.Fix)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// find returns the first check of name with status whose finding holds
// every one of words.
func (r doctorReport) find(name, status string, words ...string) (doctorCheck, bool) {
next:
	for _, c := range r.Checks {
		if c.Name != name || c.Status != status {
			continue
		}
		for _, w := range words {
			if !strings.Contains(c.Finding, w) {
				continue next
			}
		}
		return c, true
	}
	return doctorCheck{}, false
}

// mustFind fails the test unless the report has the check, and returns it.
func (r doctorReport) mustFind(t *testing.T, name, status string, words ...string) doctorCheck {
	t.Helper()
	c, ok := r.find(name, status, words...)
	if !ok {
		t.Fatalf("doctor: no %s check %q with %q in:\n%s", status, name, words, r)
	}
	return c
}

// failed lists the failed checks.
func (r doctorReport) failed() []doctorCheck {
	var out []doctorCheck
	for _, c := range r.Checks {
		if c.Status == "fail" {
			out = append(out, c)
		}
	}
	return out
}

// openPalaceDB opens a home's palace.db behind engram's back, the way an
// operator's sqlite3 would, also while a server has it open.
func openPalaceDB(t *testing.T, home string) *sql.DB {
	t.Helper()
	u := url.URL{Scheme: "file", Path: filepath.Join(home, "palace.db")}
	db, err := sql.Open("sqlite", u.String()+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

func mustExecDB(t *testing.T, db *sql.DB, q string, args ...any) int64 {
	t.Helper()
	res, err := db.Exec(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	n, _ := res.RowsAffected()
	return n
}

// TestDoctorCleanHome: a fresh home passes every check but the jobs, which
// never ran without a server; through a running server (whose jobs ran at
// start) the doctor answers over HTTP.
func TestDoctorCleanHome(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	if r := runCLI(t, home, vectorTurns, "ingest", "-"); r.code != 0 {
		t.Fatalf("ingest: %+v", r)
	}
	rep, _ := runDoctor(t, home, 0)
	for _, name := range []string{"archive", "sqlite", "index", "vectors", "vector-memory"} {
		rep.mustFind(t, name, "ok")
	}
	rep.mustFind(t, "archive", "ok", "3 turns")
	rep.mustFind(t, "vectors", "ok", "builtin-", "3 vectors")
	if c := rep.mustFind(t, "jobs", "warn", "never ran"); c.Fix != "engram jobs run --due" {
		t.Errorf("jobs fix: %q", c.Fix)
	}
	if rep.Status != "warn" {
		t.Errorf("status %q", rep.Status)
	}
	// The text form: a line per check, the fix under a problem, a summary.
	r := runCLI(t, home, "", "doctor")
	if r.code != 0 || !strings.Contains(r.stdout, "OK    archive") || !strings.Contains(r.stdout, "fix: engram jobs run --due") ||
		!strings.Contains(r.stdout, "0 failed (checked locally") {
		t.Fatalf("doctor: %+v", r)
	}

	s := startServer(t, home)
	defer s.stop(t)
	waitFor(t, "the jobs' first runs", func() bool {
		var out struct {
			Jobs []struct {
				LastSuccess time.Time `json:"last_success"`
			}
		}
		if _, err := s.get(context.Background(), "/v1/jobs", &out); err != nil {
			t.Fatal(err)
		}
		for _, j := range out.Jobs {
			if j.LastSuccess.IsZero() {
				return false
			}
		}
		return len(out.Jobs) > 0
	})
	r = runCLI(t, home, "", "doctor")
	if r.code != 0 || !strings.Contains(r.stdout, "checked by the server at "+s.addr) || !strings.Contains(r.stdout, "jobs on schedule") ||
		strings.Contains(r.stdout, "WARN") {
		t.Fatalf("doctor through the server: %+v", r)
	}
	var viaHTTP doctorReport
	if code, err := s.get(context.Background(), "/v1/doctor", &viaHTTP); err != nil || code != 200 || viaHTTP.Status != "ok" {
		t.Fatalf("GET /v1/doctor: %d %v %+v", code, err, viaHTTP)
	}
}

// TestDoctorArchive: a damaged line fails (the fix names the backup and a
// rebuild); a torn line in quarantine only warns, with its path.
func TestDoctorArchive(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	if r := runCLI(t, home, vectorTurns, "ingest", "-"); r.code != 0 {
		t.Fatalf("ingest: %+v", r)
	}
	day := dayFiles(t, home)[0]

	// A crash mid-write leaves a line without its newline: recovery moves
	// it to quarantine at the next open.
	f, err := os.OpenFile(day, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"v":1,"seq":4,"id":"torn","content":"half a li`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	rep, _ := runDoctor(t, home, 0)
	c := rep.mustFind(t, "archive", "warn", "quarantine", filepath.Join(home, "archive", "quarantine"))
	if !strings.HasPrefix(c.Fix, "rm "+filepath.Join(home, "archive", "quarantine")) {
		t.Errorf("torn line fix: %q", c.Fix)
	}
	rep.mustFind(t, "archive", "ok", "3 turns")

	// A bit flipped in a committed line: its checksum no longer matches.
	b, err := os.ReadFile(day)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(b), "mat all afternoon")
	if i < 0 {
		t.Fatalf("no turn text in %s", day)
	}
	b[i] = 'b'
	if err := os.WriteFile(day, b, 0o600); err != nil {
		t.Fatal(err)
	}
	rep, _ = runDoctor(t, home, 1)
	c = rep.mustFind(t, "archive", "fail", "1 damaged line", "checksum", "the palace holds the turns of 1")
	if !strings.Contains(c.Fix, "engram repair") || strings.Contains(c.Fix, "backup") {
		t.Errorf("damaged line fix, the palace holding its turn: %q", c.Fix)
	}
	rep.mustFind(t, "index", "ok", "as archived")

	// Without the palace's copy only a backup brings the turn back.
	for _, f := range []string{"palace.db", "palace.db-wal", "palace.db-shm"} {
		os.Remove(filepath.Join(home, f))
	}
	rep, _ = runDoctor(t, home, 1)
	c = rep.mustFind(t, "archive", "fail", "1 damaged line", "checksum")
	if !strings.Contains(c.Fix, "from a backup") || !strings.HasSuffix(c.Fix, "engram rebuild") || strings.Contains(c.Fix, "repair") {
		t.Errorf("damaged line fix, no copy in the palace: %q", c.Fix)
	}
	if r := runCLI(t, home, "", "repair"); r.code != 1 || !strings.Contains(r.stdout, "the palace holds no turn of seq 2") {
		t.Errorf("repair without a copy: %+v", r)
	}
}

// dayFiles lists the archive's day files.
func dayFiles(t *testing.T, home string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(filepath.Join(home, "archive"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			out = append(out, p)
		}
		return err
	})
	if err != nil || len(out) == 0 {
		t.Fatalf("day files: %v %v", out, err)
	}
	return out
}

// TestDoctorPalace damages the palace behind engram's back: a lost turn
// row, then a full-text index page. Both fail with `engram rebuild`, which
// repairs them.
func TestDoctorPalace(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	if r := runCLI(t, home, vectorTurns, "ingest", "-"); r.code != 0 {
		t.Fatalf("ingest: %+v", r)
	}
	db := openPalaceDB(t, home)
	mustExecDB(t, db, `DELETE FROM turns WHERE seq = 2`)
	db.Close()
	rep, _ := runDoctor(t, home, 1)
	if c := rep.mustFind(t, "index", "fail", "the archive holds 3 turns", "the palace 2"); c.Fix != "engram rebuild" {
		t.Errorf("fix: %q", c.Fix)
	}

	db = openPalaceDB(t, home)
	mustExecDB(t, db, `DELETE FROM turns_fts_data WHERE id > 1`)
	db.Close()
	rep, _ = runDoctor(t, home, 1)
	if c := rep.mustFind(t, "sqlite", "fail", "fts5"); c.Fix != "engram rebuild" {
		t.Errorf("fix: %q", c.Fix)
	}

	if r := runCLI(t, home, "", "rebuild"); r.code != 0 {
		t.Fatalf("rebuild: %+v", r)
	}
	rep, _ = runDoctor(t, home, 0)
	if f := rep.failed(); len(f) > 0 {
		t.Fatalf("after rebuild:\n%s", rep)
	}
	rep.mustFind(t, "index", "ok", "3 turns indexed")
}

// TestDoctorJobs: a failing job fails with `engram jobs run NAME`; one
// whose last success is older than twice its interval warns.
func TestDoctorJobs(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	gone := filepath.Join(t.TempDir(), "vault-that-was-deleted")
	writeConfig(t, home, "[[vaults]]\npath = \""+gone+"\"\n")
	if r := runCLI(t, home, vectorTurns, "ingest", "-"); r.code != 0 {
		t.Fatalf("ingest: %+v", r)
	}
	if r := runCLI(t, home, "", "jobs", "run", "--all"); r.code != 1 {
		t.Fatalf("jobs run --all with a missing vault: %+v", r)
	}
	db := openPalaceDB(t, home)
	old := time.Now().Add(-72 * time.Hour).UnixNano()
	if n := mustExecDB(t, db, `UPDATE job_state SET last_success = ?, last_run = ? WHERE name = 'archive-verify'`, old, old); n != 1 {
		t.Fatalf("archive-verify has no state")
	}
	db.Close()
	rep, _ := runDoctor(t, home, 1)
	if c := rep.mustFind(t, "job vault-reconcile", "fail", "failed 1 time"); c.Fix != "engram jobs run vault-reconcile" {
		t.Errorf("fix: %q", c.Fix)
	}
	if c := rep.mustFind(t, "job archive-verify", "warn", "over twice its interval of 24h"); c.Fix != "engram jobs run archive-verify" {
		t.Errorf("fix: %q", c.Fix)
	}
	if _, found := rep.find("jobs", "warn"); found {
		t.Errorf("every job ran, none is reported as never run:\n%s", rep)
	}
}

// TestDoctorOllama checks the real Ollama server: the embedding model with
// its dimension and the extractor's chat model; then a server that does not
// answer and models that are missing, each with its fix.
func TestDoctorOllama(t *testing.T) {
	env := testServers(t, "ENGRAM_TEST_OLLAMA_HOST", "ENGRAM_TEST_OLLAMA_MODEL", "ENGRAM_TEST_OLLAMA_CHAT_MODEL")
	home := filepath.Join(t.TempDir(), "home")
	config := func(host, model, chat string) {
		writeConfig(t, home, fmt.Sprintf("embedder = \"ollama\"\nextractor = \"ollama\"\nollama_host = %q\nollama_model = %q\nollama_chat_model = %q\n",
			host, model, chat))
	}
	config(env["ENGRAM_TEST_OLLAMA_HOST"], env["ENGRAM_TEST_OLLAMA_MODEL"], env["ENGRAM_TEST_OLLAMA_CHAT_MODEL"])
	if r := runCLI(t, home, vectorTurns, "ingest", "-"); r.code != 0 {
		t.Fatalf("ingest: %+v", r)
	}
	rep, _ := runDoctor(t, home, 0)
	rep.mustFind(t, "ollama-embedder", "ok", "model "+env["ENGRAM_TEST_OLLAMA_MODEL"], "dimensions")
	rep.mustFind(t, "ollama-extractor", "ok", "chat model "+env["ENGRAM_TEST_OLLAMA_CHAT_MODEL"])
	rep.mustFind(t, "vectors", "ok", "ollama:"+env["ENGRAM_TEST_OLLAMA_MODEL"], "3 vectors")

	config("127.0.0.1:1", env["ENGRAM_TEST_OLLAMA_MODEL"], env["ENGRAM_TEST_OLLAMA_CHAT_MODEL"])
	rep, _ = runDoctor(t, home, 1)
	if c := rep.mustFind(t, "ollama-embedder", "fail", "not reachable"); c.Fix != "ollama serve" {
		t.Errorf("embedder fix: %q", c.Fix)
	}
	if c := rep.mustFind(t, "ollama-extractor", "fail", "does not answer"); c.Fix != "ollama serve" {
		t.Errorf("extractor fix: %q", c.Fix)
	}
	if c := rep.mustFind(t, "vectors", "fail", "vector recall is off"); c.Fix != "ollama serve" {
		t.Errorf("vectors fix: %q", c.Fix)
	}

	config(env["ENGRAM_TEST_OLLAMA_HOST"], env["ENGRAM_TEST_OLLAMA_MODEL"], "no-such-chat-model")
	rep, _ = runDoctor(t, home, 1)
	if c := rep.mustFind(t, "ollama-extractor", "fail", "no-such-chat-model"); c.Fix != "ollama pull no-such-chat-model" {
		t.Errorf("extractor fix: %q", c.Fix)
	}
	rep.mustFind(t, "ollama-embedder", "ok")

	// The config asks for a model the server lacks: the active vectors stay
	// in use (a warning names the re-embed), the probe names the pull.
	config(env["ENGRAM_TEST_OLLAMA_HOST"], "no-such-embedder", env["ENGRAM_TEST_OLLAMA_CHAT_MODEL"])
	rep, _ = runDoctor(t, home, 1)
	if c := rep.mustFind(t, "ollama-embedder", "fail", "no-such-embedder"); c.Fix != "ollama pull no-such-embedder" {
		t.Errorf("missing embedder fix: %q", c.Fix)
	}
	if c := rep.mustFind(t, "vectors", "warn", "engram reembed"); c.Fix != "engram reembed" {
		t.Errorf("pending fix: %q", c.Fix)
	}
}
