package engine_test

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/homedir"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/pipeline"
)

// vectorTurns are three turns as `engram ingest` reads them.
var vectorTurns = strings.Join([]string{
	`{"session":"s1","speaker":"Ana","content":"We decided to keep the API on port 30001","meta":{"n":1}}`,
	`{"session":"s1","speaker":"Bo","content":"The cat sat on the mat all afternoon"}`,
	`{"session":"s2","speaker":"Ana","content":"Our database will be PostgreSQL because of its JSONB support"}`,
}, "\n") + "\n"

// writeConfig writes home's config.toml.
func writeConfig(t *testing.T, home, toml string) {
	t.Helper()
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, config.ConfigFile), []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
}

// homeConfig is home's configuration as a command loads it: config.toml
// over the defaults, with no ENGRAM_ variables.
func homeConfig(t *testing.T, home string) config.Config {
	t.Helper()
	cfg, err := config.LoadConfig(home, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// ingestHome archives lines into home with its configuration and closes
// it, as `engram ingest` leaves a home; it returns the configuration.
func ingestHome(t *testing.T, home, lines string) config.Config {
	t.Helper()
	cfg := homeConfig(t, home)
	e, err := engine.Open(t.Context(), cfg, quiet())
	if err != nil {
		t.Fatal(err)
	}
	ingestLines(t, e, cfg, lines)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// doctor checks the home of cfg in this process, as `engram doctor` does
// with no server; failed is whether a check must fail (the command's exit
// status 1).
func doctor(t *testing.T, cfg config.Config, failed bool) engram.DoctorReport {
	t.Helper()
	rep := engine.DoctorHome(t.Context(), cfg, quiet())
	if rep.Failed() != failed {
		t.Fatalf("doctor: failed %v, want %v:\n%s", rep.Failed(), failed, testutil.ReportText(rep))
	}
	return rep
}

// openPalaceDB opens a home's palace.db behind engram's back.
func openPalaceDB(t *testing.T, home string) *sql.DB {
	t.Helper()
	return testutil.OpenSQLite(t, filepath.Join(home, homedir.PalaceFile))
}

// TestDoctorCleanHome: a fresh home passes every check but the jobs, which
// never ran without a server.
func TestDoctorCleanHome(t *testing.T) {
	cfg := ingestHome(t, filepath.Join(t.TempDir(), "home"), vectorTurns)
	rep := doctor(t, cfg, false)
	for _, name := range []string{"archive", "sqlite", "index", "vectors", "vector-memory"} {
		testutil.MustFindCheck(t, rep, name, "ok")
	}
	testutil.MustFindCheck(t, rep, "archive", "ok", "3 turns")
	testutil.MustFindCheck(t, rep, "vectors", "ok", "builtin-", "3 vectors")
	if c := testutil.MustFindCheck(t, rep, "jobs", "warn", "never ran"); c.Fix != "engram jobs run --due" {
		t.Errorf("jobs fix: %q", c.Fix)
	}
	if rep.Status != "warn" {
		t.Errorf("status %q", rep.Status)
	}
}

// TestDoctorArchive: a damaged line fails (the fix names the backup and a
// rebuild); a torn line in quarantine only warns, with its path.
func TestDoctorArchive(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	cfg := ingestHome(t, home, vectorTurns)
	day := testutil.DayFiles(t, home)[0]

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
	rep := doctor(t, cfg, false)
	c := testutil.MustFindCheck(t, rep, "archive", "warn", "quarantine", filepath.Join(home, "archive", "quarantine"))
	if !strings.HasPrefix(c.Fix, "rm "+filepath.Join(home, "archive", "quarantine")) {
		t.Errorf("torn line fix: %q", c.Fix)
	}
	testutil.MustFindCheck(t, rep, "archive", "ok", "3 turns")

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
	rep = doctor(t, cfg, true)
	c = testutil.MustFindCheck(t, rep, "archive", "fail", "1 damaged line", "checksum", "the palace holds the turns of 1")
	if !strings.Contains(c.Fix, "engram repair") || strings.Contains(c.Fix, "backup") {
		t.Errorf("damaged line fix, the palace holding its turn: %q", c.Fix)
	}
	testutil.MustFindCheck(t, rep, "index", "ok", "as archived")

	// Without the palace's copy only a backup brings the turn back.
	for _, f := range []string{"palace.db", "palace.db-wal", "palace.db-shm"} {
		os.Remove(filepath.Join(home, f))
	}
	rep = doctor(t, cfg, true)
	c = testutil.MustFindCheck(t, rep, "archive", "fail", "1 damaged line", "checksum")
	if !strings.Contains(c.Fix, "from a backup") || !strings.HasSuffix(c.Fix, "engram rebuild") || strings.Contains(c.Fix, "repair") {
		t.Errorf("damaged line fix, no copy in the palace: %q", c.Fix)
	}
	r, err := engine.RepairArchive(t.Context(), cfg, quiet())
	if err != nil || len(r.Repaired) != 0 || len(r.Left) != 1 || r.Left[0].Seq != 2 {
		t.Errorf("repair without a copy: %+v %v; want the line of seq 2 left", r, err)
	}
}

// TestDoctorPalace damages the palace behind engram's back: a lost turn
// row, then a full-text index page. Both fail with `engram rebuild`, which
// repairs them.
func TestDoctorPalace(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	cfg := ingestHome(t, home, vectorTurns)
	db := openPalaceDB(t, home)
	testutil.MustExec(t, db, `DELETE FROM turns WHERE seq = 2`)
	db.Close()
	rep := doctor(t, cfg, true)
	if c := testutil.MustFindCheck(t, rep, "index", "fail", "the archive holds 3 turns", "the palace 2"); c.Fix != "engram rebuild" {
		t.Errorf("fix: %q", c.Fix)
	}

	db = openPalaceDB(t, home)
	testutil.MustExec(t, db, `DELETE FROM turns_fts_data WHERE id > 1`)
	db.Close()
	rep = doctor(t, cfg, true)
	if c := testutil.MustFindCheck(t, rep, "sqlite", "fail", "fts5"); c.Fix != "engram rebuild" {
		t.Errorf("fix: %q", c.Fix)
	}

	rebuildHome(t, cfg)
	rep = doctor(t, cfg, false)
	testutil.MustFindCheck(t, rep, "index", "ok", "3 turns indexed")
}

// TestDoctorNearKeys: a memory's near-duplicate key deleted behind
// engram's back warns, with `engram rebuild`, which makes the keys again.
func TestDoctorNearKeys(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	cfg := ingestHome(t, home, vectorTurns)
	e, err := engine.Open(t.Context(), cfg, quiet())
	if err != nil {
		t.Fatal(err)
	}
	if st, err := e.RunJob(t.Context(), pipeline.WorkerMemories); err != nil || st.Failing {
		t.Fatalf("memory job: %+v, %v", st, err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	testutil.MustFindCheck(t, doctor(t, cfg, false), "near-keys", "ok")

	db := openPalaceDB(t, home)
	var memories int
	if err := db.QueryRow(`SELECT count(*) FROM memories`).Scan(&memories); err != nil || memories == 0 {
		t.Fatalf("%d memories, %v: the test needs one", memories, err)
	}
	testutil.MustExec(t, db, `DELETE FROM memory_nearkeys WHERE (grp, tok, size, n) IN (SELECT grp, tok, size, n FROM memory_nearkeys LIMIT 1)`)
	db.Close()
	if c := testutil.MustFindCheck(t, doctor(t, cfg, false), "near-keys", "warn", "1 row"); c.Fix != "engram rebuild" {
		t.Errorf("fix: %q", c.Fix)
	}
	rebuildHome(t, cfg)
	testutil.MustFindCheck(t, doctor(t, cfg, false), "near-keys", "ok")
}

// TestDoctorJobs: a failing job fails with `engram jobs run NAME`; one
// whose last success is older than twice its interval warns.
func TestDoctorJobs(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	gone := filepath.Join(t.TempDir(), "vault-that-was-deleted")
	writeConfig(t, home, "[[vaults]]\npath = \""+gone+"\"\n")
	cfg := ingestHome(t, home, vectorTurns)
	e, err := engine.Open(t.Context(), cfg, quiet())
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := e.RunJobs(t.Context(), "", false)
	failing := 0
	for _, j := range jobs {
		if j.Failing {
			failing++
		}
	}
	if err != nil || failing != 1 {
		t.Fatalf("every job run with a missing vault: %v, %d failing, want 1: %+v", err, failing, jobs)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	db := openPalaceDB(t, home)
	old := time.Now().Add(-72 * time.Hour).UnixNano()
	if n := testutil.MustExec(t, db, `UPDATE job_state SET last_success = ?, last_run = ? WHERE name = 'archive-verify'`, old, old); n != 1 {
		t.Fatalf("archive-verify has no state")
	}
	db.Close()
	rep := doctor(t, cfg, true)
	if c := testutil.MustFindCheck(t, rep, "job vault-reconcile", "fail", "failed 1 time"); c.Fix != "engram jobs run vault-reconcile" {
		t.Errorf("fix: %q", c.Fix)
	}
	if c := testutil.MustFindCheck(t, rep, "job archive-verify", "warn", "over twice its interval of 24h"); c.Fix != "engram jobs run archive-verify" {
		t.Errorf("fix: %q", c.Fix)
	}
	if _, found := testutil.FindCheck(rep, "jobs", "warn"); found {
		t.Errorf("every job ran, none is reported as never run:\n%s", testutil.ReportText(rep))
	}
}

// TestDoctorOllama checks the real Ollama server: the embedding model with
// its dimension and the extractor's chat model; then a server that does not
// answer and models that are missing, each with its fix.
func TestDoctorOllama(t *testing.T) {
	env := testutil.Servers(t, "ENGRAM_TEST_OLLAMA_HOST", "ENGRAM_TEST_OLLAMA_MODEL", "ENGRAM_TEST_OLLAMA_CHAT_MODEL")
	home := filepath.Join(t.TempDir(), "home")
	ollamaConfig := func(host, model, chat string) config.Config {
		writeConfig(t, home, fmt.Sprintf("embedder = \"ollama\"\nextractor = \"ollama\"\nollama_host = %q\nollama_model = %q\nollama_chat_model = %q\n",
			host, model, chat))
		return homeConfig(t, home)
	}
	ollamaConfig(env["ENGRAM_TEST_OLLAMA_HOST"], env["ENGRAM_TEST_OLLAMA_MODEL"], env["ENGRAM_TEST_OLLAMA_CHAT_MODEL"])
	cfg := ingestHome(t, home, vectorTurns)
	rep := doctor(t, cfg, false)
	testutil.MustFindCheck(t, rep, "ollama-embedder", "ok", "model "+env["ENGRAM_TEST_OLLAMA_MODEL"], "dimensions")
	testutil.MustFindCheck(t, rep, "ollama-extractor", "ok", "chat model "+env["ENGRAM_TEST_OLLAMA_CHAT_MODEL"])
	testutil.MustFindCheck(t, rep, "vectors", "ok", "ollama:"+env["ENGRAM_TEST_OLLAMA_MODEL"], "3 vectors")

	cfg = ollamaConfig("127.0.0.1:1", env["ENGRAM_TEST_OLLAMA_MODEL"], env["ENGRAM_TEST_OLLAMA_CHAT_MODEL"])
	rep = doctor(t, cfg, true)
	if c := testutil.MustFindCheck(t, rep, "ollama-embedder", "fail", "not reachable"); c.Fix != "ollama serve" {
		t.Errorf("embedder fix: %q", c.Fix)
	}
	if c := testutil.MustFindCheck(t, rep, "ollama-extractor", "fail", "does not answer"); c.Fix != "ollama serve" {
		t.Errorf("extractor fix: %q", c.Fix)
	}
	if c := testutil.MustFindCheck(t, rep, "vectors", "fail", "vector recall is off"); c.Fix != "ollama serve" {
		t.Errorf("vectors fix: %q", c.Fix)
	}

	cfg = ollamaConfig(env["ENGRAM_TEST_OLLAMA_HOST"], env["ENGRAM_TEST_OLLAMA_MODEL"], "no-such-chat-model")
	rep = doctor(t, cfg, true)
	if c := testutil.MustFindCheck(t, rep, "ollama-extractor", "fail", "no-such-chat-model"); c.Fix != "ollama pull no-such-chat-model" {
		t.Errorf("extractor fix: %q", c.Fix)
	}
	testutil.MustFindCheck(t, rep, "ollama-embedder", "ok")

	// The config asks for a model the server lacks: the active vectors stay
	// in use (a warning names the re-embed), the probe names the pull.
	cfg = ollamaConfig(env["ENGRAM_TEST_OLLAMA_HOST"], "no-such-embedder", env["ENGRAM_TEST_OLLAMA_CHAT_MODEL"])
	rep = doctor(t, cfg, true)
	if c := testutil.MustFindCheck(t, rep, "ollama-embedder", "fail", "no-such-embedder"); c.Fix != "ollama pull no-such-embedder" {
		t.Errorf("missing embedder fix: %q", c.Fix)
	}
	if c := testutil.MustFindCheck(t, rep, "vectors", "warn", "engram reembed"); c.Fix != "engram reembed" {
		t.Errorf("pending fix: %q", c.Fix)
	}
}
