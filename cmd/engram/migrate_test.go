package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-dev/engram/internal/pgtest"
)

// runPG runs the engram binary with home as ENGRAM_HOME and url as
// ENGRAM_POSTGRES_URL.
func runPG(t *testing.T, home, url string, args ...string) result {
	t.Helper()
	cmd := exec.Command(engramBin, args...)
	cmd.Env = append(os.Environ(), "ENGRAM_HOME="+home, "ENGRAM_POSTGRES_URL="+url)
	return runCmd(t, cmd)
}

// TestMigrateCommands checks the flags and the output of engram migrate
// and engram archive export against a real PostgreSQL.
func TestMigrateCommands(t *testing.T) {
	url := pgtest.NewDatabase(t)
	tmp := t.TempDir()
	home := filepath.Join(tmp, "home")
	if r := runCLI(t, home, vectorTurns, "ingest", "-"); r.code != 0 {
		t.Fatalf("ingest: %+v", r)
	}
	for _, c := range []struct {
		name string
		args []string
		url  string
		code int
		want string
	}{
		{"no --to", []string{"migrate"}, "", 2, "want --to postgres://"},
		{"two folders", []string{"migrate", "--from", tmp, "--to", tmp}, "", 2, "want --to postgres://"},
		{"no URL", []string{"migrate", "--to", "postgres"}, "", 2, "set ENGRAM_POSTGRES_URL"},
		{"export without a URL", []string{"archive", "export", "--to", tmp}, "", 2, "set ENGRAM_POSTGRES_URL"},
		{"export without --to", []string{"archive", "export"}, url, 2, "want --to DIR"},
		{"unknown subcommand", []string{"archive", "import"}, url, 2, "unknown archive subcommand"},
		{"unreachable", []string{"migrate", "--to", "postgres://engram:sekrit@127.0.0.1:1/x"}, "", 1, "cannot reach PostgreSQL at 127.0.0.1:1/x"},
	} {
		r := runPG(t, home, c.url, c.args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) || strings.Contains(r.stdout+r.stderr, "sekrit") {
			t.Errorf("%s: %+v; want exit %d and %q", c.name, r, c.code, c.want)
		}
	}

	// The home into the database ("postgres": the URL from the environment).
	r := runPG(t, home, url, "migrate", "--to", "postgres")
	if r.code != 0 || !strings.Contains(r.stdout, "copied 3 archive lines (3 turns, 0 forgotten) from "+home+" to 127.0.0.1:") ||
		!strings.Contains(r.stdout, "checked: last seq 3") {
		t.Fatalf("migrate --to: %+v", r)
	}
	if r := runPG(t, home, url, "migrate", "--to", url); r.code != 1 || !strings.Contains(r.stderr, "the database is not empty (3 archived turns") {
		t.Fatalf("migrate into a full database: %+v", r)
	}
	out := filepath.Join(tmp, "export")
	if r := runPG(t, home, url, "archive", "export", "--to", out); r.code != 0 ||
		!strings.Contains(r.stdout, "exported 3 archive lines (3 turns, 0 forgotten) from 127.0.0.1:") || !strings.Contains(r.stdout, "to "+out) {
		t.Fatalf("archive export: %+v", r)
	}
	home2 := filepath.Join(tmp, "home2")
	if r := runPG(t, home, "", "migrate", "--from", url, "--to", home2); r.code != 0 ||
		!strings.Contains(r.stdout, "to "+home2) || !strings.Contains(r.stdout, "next: engram --home "+home2+" rebuild") {
		t.Fatalf("migrate --from: %+v", r)
	}
	if r := runPG(t, home, "", "migrate", "--from", url, "--to", home2); r.code != 1 || !strings.Contains(r.stderr, "is not empty") {
		t.Fatalf("migrate into a home with an archive: %+v", r)
	}
}
