package main_test

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-dev/engram/internal/testutil"
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
	rep.mustFind(t, "jobs", "warn", "never ran")

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
	rep.mustFind(t, "archive", "fail", "1 damaged line")
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
