package main_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-dev/engram"
)

// TestBackupCommands: what `engram backup` and `engram restore` print and
// their exit status, with no server and through one (engine's and
// server's tests check the backups and restores themselves).
func TestBackupCommands(t *testing.T) {
	tmp := t.TempDir()
	home := filepath.Join(tmp, "home")
	if r := runCLI(t, home, vectorTurns, "ingest", "-"); r.code != 0 {
		t.Fatalf("ingest: %+v", r)
	}
	dir := filepath.Join(tmp, "backup")
	r := runCLI(t, home, "", "backup", "--json", dir)
	var rep engram.BackupReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); r.code != 0 || err != nil || rep.Dir != dir || rep.ArchiveSeq != 3 || rep.ArchiveTurns != 3 {
		t.Fatalf("backup --json: %+v %v %+v", r, err, rep)
	}
	r = runCLI(t, home, "", "backup", filepath.Join(tmp, "backup2"))
	if r.code != 0 || !strings.Contains(r.stdout, "backup of "+home+" written to "+filepath.Join(tmp, "backup2")) ||
		!strings.Contains(r.stdout, "archive: 3 turns, last seq 3") || !strings.Contains(r.stdout, "palace:  indexed to seq 3") {
		t.Fatalf("backup: %+v", r)
	}
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no folder", []string{"backup"}, 2, "want one argument"},
		{"an earlier backup", []string{"backup", dir}, 1, "holds an earlier backup; choose a new folder, or --force"},
		{"restore over data", []string{"restore", dir}, 1, "holds data"},
		{"restore no backup", []string{"restore", "--home", filepath.Join(tmp, "new"), home}, 1, "is not an engram backup"},
	} {
		r := runCLI(t, home, "", c.args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%s: %+v; want exit %d and %q", c.name, r, c.code, c.want)
		}
	}
	restored := filepath.Join(tmp, "restored")
	if r := runCLI(t, home, "", "restore", "--home", restored, dir); r.code != 0 ||
		!strings.Contains(r.stdout, "restored "+dir+" into "+restored) || !strings.Contains(r.stdout, "3 turns up to seq 3") {
		t.Fatalf("restore --home: %+v", r)
	}
	if r := runCLI(t, home, "", "restore", "--force", dir); r.code != 0 || !strings.Contains(r.stdout, "the previous home is kept as "+home+".before-restore-") {
		t.Fatalf("restore --force: %+v", r)
	}

	// With a server running, the server makes the backup; a restore over
	// its home is refused.
	s := startServer(t, home)
	r = runCLI(t, home, "", "backup", "--json", filepath.Join(tmp, "backup3"))
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &rep) != nil || rep.ArchiveSeq != 3 {
		t.Fatalf("backup --json through the server: %+v", r)
	}
	if r := runCLI(t, home, "", "restore", "--force", dir); r.code != 1 || !strings.Contains(r.stderr, "engram serve is running") {
		t.Errorf("restore while serving: %+v", r)
	}
	s.stop(t)
	if n := strings.Count(s.stderr.String(), "backup written"); n != 1 {
		t.Errorf("the server logged %d backups, want 1", n)
	}
}
