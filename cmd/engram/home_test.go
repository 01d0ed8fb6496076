package main_test

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-dev/engram/internal/filetest"
	"github.com/engram-dev/engram/internal/testutil"
)

// otherToolDB stands for the database another tool also named engram keeps
// in ~/.engram/engram.db: the start of an SQLite file.
const otherToolDB = "SQLite format 3\x00 the other engram's observations"

// serveOnce runs `engram serve` on home until it exits or answers
// /v1/health; one that answers is stopped, and started is true.
func serveOnce(t *testing.T, home string) (r result, started bool) {
	t.Helper()
	addr := freeAddr(t)
	cmd := exec.Command(engramBin, "serve", "--addr", addr)
	cmd.Env = append(os.Environ(), "ENGRAM_HOME="+home)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	answers := func() bool {
		resp, err := http.Get("http://" + addr + "/v1/health")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
	testutil.WaitUntil(t, "engram serve to exit or answer", func() bool {
		select {
		case <-exited:
			return true
		default:
		}
		if answers() {
			started = true
			cmd.Process.Kill()
			<-exited
			return true
		}
		return false
	})
	return result{cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()}, started
}

// mustNameForeign fails t unless r is the refusal of a home holding
// engram.db: the file named, and the two ways to choose another home.
func mustNameForeign(t *testing.T, what string, r result, code int) {
	t.Helper()
	if r.code != code {
		t.Errorf("%s: exit %d, want %d\nstdout: %s\nstderr: %s", what, r.code, code, r.stdout, r.stderr)
		return
	}
	for _, want := range []string{"engram.db", "did not write", "--home", "ENGRAM_HOME"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("%s: stderr does not name %q:\n%s", what, want, r.stderr)
		}
	}
}

// TestForeignHome: a home holding another tool's engram.db is refused by
// every command that would open or write it, each naming the file and how
// to choose another home (the hook, which never fails the agent, exits 0
// and says it on stderr); the doctor names the file in a FAIL line. Not
// one byte of the folder changes, nothing appears beside it, and a restore,
// even with --force, moves nothing aside.
func TestForeignHome(t *testing.T) {
	tmp := t.TempDir()
	own := filepath.Join(tmp, "own")
	turn := `{"id":"t1","session":"s1","content":"the quokka migration is planned for May"}` + "\n"
	if r := runCLI(t, own, turn, "ingest", "-"); r.code != 0 {
		t.Fatalf("ingest into a home of engram's own: %+v", r)
	}
	backup := filepath.Join(tmp, "backup")
	if r := runCLI(t, own, "", "backup", backup); r.code != 0 {
		t.Fatalf("backup: %+v", r)
	}
	notes, projects := filepath.Join(tmp, "notes"), filepath.Join(tmp, "projects")
	os.MkdirAll(notes, 0o700)
	os.MkdirAll(projects, 0o700)
	os.WriteFile(filepath.Join(notes, "a.md"), []byte("# A\n"), 0o600)
	turns := filepath.Join(tmp, "turns.jsonl")
	os.WriteFile(turns, []byte(turn), 0o600)
	units := filepath.Join(tmp, "units")

	home := filepath.Join(tmp, "user", ".engram") // alone in its parent: what appears beside it is seen
	os.MkdirAll(home, 0o700)
	if err := os.WriteFile(filepath.Join(home, "engram.db"), []byte(otherToolDB), 0o600); err != nil {
		t.Fatal(err)
	}
	before := filetest.Snapshot(t, home)

	r, started := serveOnce(t, home)
	if started {
		t.Error("engram serve answered on a home holding another tool's engram.db")
	}
	mustNameForeign(t, "serve", r, 1)
	filetest.MustBeUnchanged(t, "serve", home, before)

	hook := `{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"what about the quokka migration?","cwd":"` + tmp + `"}`
	for _, c := range []struct {
		stdin string
		args  []string
	}{
		{turn, []string{"ingest", "-"}},
		{"", []string{"recall", "quokka"}},
		{"", []string{"stats"}},
		{"", []string{"memories"}},
		{"", []string{"scenes"}},
		{"", []string{"persona"}},
		{"", []string{"kg", "quokka"}},
		{"", []string{"jobs", "status"}},
		{"", []string{"jobs", "run", "--all"}},
		{"", []string{"forget", "--turn", "t1", "--yes"}},
		{"", []string{"redact", "--turn", "t1", "--span", "quokka", "--yes"}},
		{"", []string{"correct", "--memory", "m1", "--wrong"}},
		{"", []string{"rebuild"}},
		{"", []string{"repair"}},
		{"", []string{"reindex", "vectors"}},
		{"", []string{"reembed", "--model", "builtin"}},
		{"", []string{"vault", "add", notes}},
		{"", []string{"backup", filepath.Join(tmp, "backup2")}},
		{"", []string{"restore", backup}},
		{"", []string{"restore", "--force", backup}},
		{"", []string{"import", "jsonl", "--map", "content=content,id=id", turns}},
		{"", []string{"import", "claude-code", projects}},
		{"", []string{"mcp"}},
		{"", []string{"systemd", "install", "--no-start", "--dir", units}},
		{"", []string{"launchd", "install", "--no-start", "--dir", units}},
	} {
		what := strings.Join(c.args, " ")
		mustNameForeign(t, what, runCLI(t, home, c.stdin, c.args...), 1)
		filetest.MustBeUnchanged(t, what, home, before)
	}
	// Without a vault to sync or list, these open nothing.
	for _, args := range [][]string{{"vault", "sync"}, {"vault", "list"}} {
		what := strings.Join(args, " ")
		if r := runCLI(t, home, "", args...); r.code != 0 {
			t.Errorf("%s: %+v", what, r)
		}
		filetest.MustBeUnchanged(t, what, home, before)
	}
	if _, err := os.Stat(units); err == nil {
		t.Error("systemd or launchd install wrote its units for a home it cannot serve")
	}

	r = runCLI(t, home, hook, "hook", "claude-code")
	mustNameForeign(t, "hook claude-code", r, 0)
	if r.stdout != "" {
		t.Errorf("hook claude-code printed %q for the model", r.stdout)
	}
	filetest.MustBeUnchanged(t, "hook claude-code", home, before)

	r = runCLI(t, home, "", "doctor")
	if r.code != 1 || !strings.Contains(r.stdout, "FAIL") || !strings.Contains(r.stdout, "engram.db") ||
		!strings.Contains(r.stdout, "ENGRAM_HOME") {
		t.Errorf("doctor: %+v, want a FAIL line naming engram.db", r)
	}
	filetest.MustBeUnchanged(t, "doctor", home, before)

	// --home chooses another home: the command works there, and the home
	// holding engram.db is still untouched.
	other := filepath.Join(tmp, "engram-memory")
	if r := runCLI(t, home, "", "--home", other, "restore", backup); r.code != 0 {
		t.Errorf("restore into another home with --home: %+v", r)
	}
	if r := runCLI(t, other, "", "recall", "--mode", "keyword", "quokka migration"); r.code != 0 || !strings.Contains(r.stdout, "quokka") {
		t.Errorf("recall in the restored home: %+v", r)
	}
	filetest.MustBeUnchanged(t, "the commands on another home", home, before)
}

// TestForeignFileWhileServing: a home of an older version (engram's files,
// no marker) and a .DS_Store serve as before, and are marked; when another
// program puts its engram.db into the home while the server runs, the
// doctor (run by the server) names it, and the commands refuse the home
// even though the server answers.
func TestForeignFileWhileServing(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	turn := `{"id":"t1","session":"s1","content":"the quokka migration is planned for May"}` + "\n"
	if r := runCLI(t, home, turn, "ingest", "-"); r.code != 0 {
		t.Fatalf("ingest: %+v", r)
	}
	if err := os.Remove(filepath.Join(home, "engram-home.json")); err != nil {
		t.Fatalf("the new home is not marked: %v", err)
	}
	os.WriteFile(filepath.Join(home, ".DS_Store"), []byte("Bud1"), 0o600)
	s := startServer(t, home)
	defer s.stop(t)
	if _, err := os.Stat(filepath.Join(home, "engram-home.json")); err != nil {
		t.Errorf("the older home was not marked: %v", err)
	}
	if r := runCLI(t, home, "", "doctor"); r.code != 0 || strings.Contains(r.stdout, "home") && strings.Contains(r.stdout, "FAIL") {
		t.Fatalf("doctor on an engram home: %+v", r)
	}

	os.WriteFile(filepath.Join(home, "engram.db"), []byte(otherToolDB), 0o600)
	r := runCLI(t, home, "", "doctor")
	if r.code != 1 || !strings.Contains(r.stdout, "FAIL") || !strings.Contains(r.stdout, "engram.db") || !strings.Contains(r.stdout, "checked by the server") {
		t.Errorf("doctor through the server: %+v, want a FAIL line naming engram.db", r)
	}
	mustNameForeign(t, "ingest beside the server", runCLI(t, home, turn, "ingest", "-"), 1)
	mustNameForeign(t, "import claude-code beside the server", runCLI(t, home, "", "import", "claude-code", t.TempDir()), 1)
}
