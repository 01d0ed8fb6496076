package main_test

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/pgtest"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/postgres"
	_ "modernc.org/sqlite" // the palace's driver, to damage palace.db as a disk or a bug would
)

// runDoctor runs `engram doctor --json` and decodes the report; want is the
// exit status expected (0 without a failed check, 1 with one).
func runDoctor(t *testing.T, home string, want int) (engram.DoctorReport, result) {
	t.Helper()
	r := runCLI(t, home, "", "doctor", "--json")
	var rep engram.DoctorReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("doctor --json: %v\n%+v", err, r)
	}
	if r.code != want {
		t.Fatalf("doctor exited %d, want %d:\n%s\n%s", r.code, want, testutil.ReportText(rep), r.stderr)
	}
	return rep, r
}

// TestDoctorCommand: what `engram doctor` prints and its exit status
// (engine's and server's tests check what the doctor finds): a line per
// check with the fix under a problem and a summary that says where the
// checks ran; the JSON of --json; 1 when a check failed. `engram repair`
// says which damaged line it left.
func TestDoctorCommand(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	if r := runCLI(t, home, vectorTurns, "ingest", "-"); r.code != 0 {
		t.Fatalf("ingest: %+v", r)
	}
	r := runCLI(t, home, "", "doctor")
	if r.code != 0 || !strings.Contains(r.stdout, "OK    archive") || !strings.Contains(r.stdout, "fix: engram jobs run --due") ||
		!strings.Contains(r.stdout, "0 failed (checked locally") {
		t.Fatalf("doctor: %+v", r)
	}
	rep, _ := runDoctor(t, home, 0)
	if rep.Status != "warn" {
		t.Errorf("doctor --json: status %q", rep.Status)
	}
	testutil.MustFindCheck(t, rep, "jobs", "warn", "never ran")

	// A bit flipped in a committed line: the check fails, and so does the
	// command.
	day := testutil.DayFiles(t, home)[0]
	b, err := os.ReadFile(day)
	if err != nil {
		t.Fatal(err)
	}
	b[strings.Index(string(b), "mat all afternoon")] = 'b'
	if err := os.WriteFile(day, b, 0o600); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, home, "", "doctor")
	if r.code != 1 || !strings.Contains(r.stdout, "FAIL  archive") || !strings.Contains(r.stdout, "run engram repair") ||
		!strings.Contains(r.stdout, "1 failed (checked locally") || !strings.Contains(r.stderr, "doctor: 1 check failed") {
		t.Fatalf("doctor with a damaged line: %+v", r)
	}
	rep, _ = runDoctor(t, home, 1)
	testutil.MustFindCheck(t, rep, "archive", "fail", "1 damaged line")
	for _, f := range []string{"palace.db", "palace.db-wal", "palace.db-shm"} {
		os.Remove(filepath.Join(home, f))
	}
	if r := runCLI(t, home, "", "repair"); r.code != 1 || !strings.Contains(r.stdout, "the palace holds no turn of seq 2") ||
		!strings.Contains(r.stdout, "0 damaged lines repaired, 1 left") {
		t.Errorf("repair without a copy: %+v", r)
	}

	// With a server running, the server runs the checks.
	s := startServer(t, home)
	defer s.stop(t)
	if r := runCLI(t, home, "", "doctor"); !strings.Contains(r.stdout, "checked by the server at "+s.addr) {
		t.Fatalf("doctor through the server: %+v", r)
	}
}

// TestDoctorCommandPostgres: with store = "postgres", `engram doctor
// --json` carries the checks of the database: they pass on a database
// that answers, and fail (exit 1) with a database nobody listens for,
// naming where it is, never the password.
func TestDoctorCommandPostgres(t *testing.T) {
	url := pgtest.NewDatabase(t)
	home := filepath.Join(t.TempDir(), "home")
	run := func(url string, want int) (engram.DoctorReport, result) {
		t.Helper()
		cmd := exec.Command(engramBin, "doctor", "--json")
		cmd.Env = append(os.Environ(), "ENGRAM_HOME="+home, "ENGRAM_STORE=postgres", "ENGRAM_POSTGRES_URL="+url)
		r := runCmd(t, cmd)
		var rep engram.DoctorReport
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatalf("doctor --json: %v\n%+v", err, r)
		}
		if r.code != want {
			t.Fatalf("doctor exited %d, want %d:\n%s\n%s", r.code, want, testutil.ReportText(rep), r.stderr)
		}
		return rep, r
	}
	rep, _ := run(url, 0)
	testutil.MustFindCheck(t, rep, "postgres", engram.CheckOK, "answers", postgres.Where(url))
	testutil.MustFindCheck(t, rep, "postgres-schema", engram.CheckOK, "as this engram knows")
	testutil.MustFindCheck(t, rep, "postgres-lag", engram.CheckOK, "current")

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	rep, r := run(fmt.Sprintf("postgres://team:pw-h1dden-42@127.0.0.1:%d/memory?sslmode=disable", port), 1)
	testutil.MustFindCheck(t, rep, "postgres", engram.CheckFail, fmt.Sprintf("cannot reach PostgreSQL at 127.0.0.1:%d/memory", port))
	if strings.Contains(r.stdout+r.stderr, "pw-h1dden-42") {
		t.Fatalf("the password is in the output:\n%s\n%s", r.stdout, r.stderr)
	}
}
