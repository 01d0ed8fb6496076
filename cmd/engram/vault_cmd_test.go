package main_test

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engram-dev/engram/internal/testutil"
)

// copyVault copies the shared test vault (testdata/vault) into a new
// folder and returns the folder's path.
func copyVault(t *testing.T, dst string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(dst, os.DirFS(filepath.Join("..", "..", "testdata", "vault"))); err != nil {
		t.Fatal(err)
	}
	return dst
}

type vaultStatus struct {
	Path            string `json:"path"`
	Namespace       string `json:"namespace"`
	Docs            int    `json:"docs"`
	Chunks          int    `json:"chunks"`
	UnresolvedLinks int    `json:"unresolved_links"`
	Pending         string `json:"pending"`
}

type syncReport struct {
	Vault     string   `json:"vault"`
	Namespace string   `json:"namespace"`
	Files     int      `json:"files"`
	Unchanged int      `json:"unchanged"`
	Indexed   []string `json:"indexed"`
	Removed   []string `json:"removed"`
	Skipped   []struct {
		Path, Reason string
	} `json:"skipped"`
	UnresolvedLinks int    `json:"unresolved_links"`
	Error           string `json:"error"`
}

type docGraph struct {
	Doc struct {
		Vault, Path, Title, Type string
	} `json:"doc"`
	Linked []struct {
		Path  string `json:"path"`
		Type  string `json:"type"`
		Depth int    `json:"depth"`
		Via   string `json:"via"`
	} `json:"linked"`
	Backlinks  []struct{ Path string } `json:"backlinks"`
	Unresolved []struct {
		Target string `json:"target"`
		Line   int    `json:"line"`
	} `json:"unresolved"`
}

// vaultJSON runs a vault command with --json and decodes its output.
func vaultJSON(t *testing.T, home string, out any, args ...string) result {
	t.Helper()
	r := runCLI(t, home, "", append(append([]string{"vault"}, args...), "--json")...)
	if r.code == 0 || r.code == 1 {
		if err := json.Unmarshal([]byte(r.stdout), out); err != nil {
			t.Fatalf("vault %v: %v\n%+v", args, err, r)
		}
	}
	return r
}

// linkedAt returns the linked documents as "path@depth".
func (g docGraph) linkedAt() []string {
	var out []string
	for _, d := range g.Linked {
		out = append(out, d.Path+"@"+string(rune('0'+d.Depth)))
	}
	return out
}

const (
	billingIncident = "docs/incidents/2026-03-14-billing-outage.md"
	billingADR      = "docs/adrs/0007-use-postgres.md"
	poolRules       = "docs/rules/connection-pools.md"
)

// TestVaultCommands: what the vault commands print and their exit status,
// with no server and through one (engine's and server's tests check the
// vaults themselves).
func TestVaultCommands(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	dir := copyVault(t, filepath.Join(t.TempDir(), "notes"))
	r := runCLI(t, home, "", "vault", "add", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "added the vault "+dir) || !strings.Contains(r.stdout, "indexed") {
		t.Fatalf("vault add: %+v", r)
	}
	if !strings.Contains(r.stdout, "skipped attachments/corrupt.md") || !strings.Contains(r.stdout, "does-not-exist") {
		t.Errorf("vault add's first sync does not report the skipped file and the broken link:\n%s", r.stdout)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{dir}, 1, "already a vault"},
		{nil, 2, "Run 'engram vault add --help'"},
		{[]string{"a", "b"}, 2, "want one folder"},
		{[]string{"--namespace", "*", t.TempDir()}, 2, "--namespace"},
		{[]string{"--namespace", " x", t.TempDir()}, 2, "white space"},
	} {
		r := runCLI(t, home, "", append([]string{"vault", "add"}, c.args...)...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) {
			t.Errorf("vault add %q: %+v, want exit %d and %q", c.args, r, c.code, c.want)
		}
	}
	var list struct{ Vaults []vaultStatus }
	if r := vaultJSON(t, home, &list, "list"); r.code != 0 || len(list.Vaults) != 1 || list.Vaults[0].Path != dir {
		t.Fatalf("vault list --json: %+v", r)
	}
	if r := runCLI(t, home, "", "vault", "list"); r.code != 0 || !strings.Contains(r.stdout, dir) || !strings.Contains(r.stdout, "UNRESOLVED") {
		t.Errorf("vault list as text: %+v", r)
	}
	// The text of a doc result says where it is: file, heading, lines.
	if r := runCLI(t, home, "", "recall", "--k", "1", "E4021"); r.code != 0 || !strings.Contains(r.stdout, "file "+poolRules+" > ") ||
		!strings.Contains(r.stdout, ", lines ") || !strings.Contains(r.stdout, "(vault "+dir+")") || strings.Contains(r.stdout, "source chunk-") ||
		!strings.Contains(r.stdout, "(1 result, mode ") {
		t.Errorf("recall of a doc as text: %+v", r)
	}
	var g docGraph
	if r := vaultJSON(t, home, &g, "graph", "--depth", "1", "--vault", dir, "ADR-0007"); r.code != 0 || g.Doc.Path != billingADR || !slices.Contains(g.linkedAt(), poolRules+"@1") {
		t.Fatalf("vault graph --json ADR-0007: %+v %+v", r, g)
	}
	r = runCLI(t, home, "", "vault", "graph", filepath.Join(dir, billingIncident))
	if r.code != 0 || !strings.Contains(r.stdout, "ADR-0007 Use Postgres for billing") || !strings.Contains(r.stdout, "does-not-exist") {
		t.Errorf("vault graph by full path, as text: %+v", r)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"no-such-note"}, 1, "no document"},
		{[]string{"--depth", "0", billingIncident}, 2, "--depth"},
		{[]string{"--depth", "7", billingIncident}, 2, "--depth"},
		{nil, 2, "Run 'engram vault graph --help'"},
	} {
		if r := runCLI(t, home, "", append([]string{"vault", "graph"}, c.args...)...); r.code != c.code || !strings.Contains(r.stderr, c.want) {
			t.Errorf("vault graph %q: %+v, want exit %d and %q", c.args, r, c.code, c.want)
		}
	}
	if r := runCLI(t, home, "", "vault", "sync", filepath.Join(dir, "docs")); r.code != 1 || !strings.Contains(r.stderr, "not a configured vault") {
		t.Errorf("sync of a folder that is no vault: %+v", r)
	}

	// A vault that fails: exit 1, the others synced all the same.
	other := filepath.Join(t.TempDir(), "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, home, "", "vault", "add", "--namespace", "work", other); r.code != 0 || !strings.Contains(r.stdout, "0 files") {
		t.Fatalf("vault add other: %+v", r)
	}
	if err := os.RemoveAll(other); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, home, "", "vault", "sync")
	if r.code != 1 || !strings.Contains(r.stdout, dir+"  [default]") || !strings.Contains(r.stdout, other+"  [work]\n  FAILED: ") ||
		!strings.Contains(r.stderr, "1 of 2 vaults failed") {
		t.Errorf("sync with a vault gone: %+v", r)
	}
	var sync struct{ Reports []syncReport }
	if r := vaultJSON(t, home, &sync, "sync"); r.code != 1 || len(sync.Reports) != 2 || sync.Reports[0].Error != "" || sync.Reports[1].Error == "" {
		t.Errorf("sync --json with a vault gone: %+v", r)
	}

	// An add the engine refuses exits 1 and says why.
	bad := filepath.Join(t.TempDir(), "home")
	writeConfig(t, bad, "vaults = []\n")
	if r := runCLI(t, bad, "", "vault", "add", t.TempDir()); r.code != 1 || !strings.Contains(r.stderr, "left unchanged") {
		t.Errorf("vault add onto an inline array: %+v", r)
	}
	if r := runCLI(t, t.TempDir(), "", "vault", "list"); r.code != 0 || !strings.Contains(r.stdout, "no vaults") {
		t.Errorf("vault list with no vaults: %+v", r)
	}
	if r := runCLI(t, t.TempDir(), "", "vault", "sync"); r.code != 0 || !strings.Contains(r.stdout, "no vaults") {
		t.Errorf("vault sync with no vaults: %+v", r)
	}
	for _, args := range [][]string{{"vault"}, {"vault", "bogus"}, {"vault", "hook"}, {"vault", "hook", "bogus", dir}, {"vault", "list", "x"}} {
		if r := runCLI(t, home, "", args...); r.code != 2 || !strings.Contains(r.stderr, "--help' for usage") {
			t.Errorf("%q: %+v", args, r)
		}
	}
	if r := runCLI(t, home, "", "help", "vault"); r.code != 0 || !strings.Contains(r.stdout, "engram vault hook install DIR") {
		t.Errorf("help vault: %+v", r)
	}

	// Through a server: a vault added meanwhile waits for its restart.
	s := startServer(t, home)
	defer s.stop(t)
	if r := vaultJSON(t, home, &sync, "sync", dir); r.code != 0 || len(sync.Reports) != 1 || sync.Reports[0].Vault != dir {
		t.Fatalf("vault sync through the server: %+v", r)
	}
	added := t.TempDir()
	if r := runCLI(t, home, "", "vault", "add", added); r.code != 0 || !strings.Contains(r.stdout, "restart it") {
		t.Errorf("vault add while the server runs: %+v", r)
	}
	if r := runCLI(t, home, "", "vault", "sync", added); r.code != 1 || !strings.Contains(r.stderr, "restart the server") {
		t.Errorf("vault sync of a vault the server does not know yet: %+v", r)
	}
	if r := runCLI(t, home, "", "vault", "list"); r.code != 0 || !strings.Contains(r.stdout, added+": recorded in config.toml after engram serve started") {
		t.Errorf("vault list of a vault added while serving: %+v", r)
	}
}

// git runs git in dir with a fixed identity and no user or system config.
func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=engram", "-c", "user.email=engram@example.com"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func TestVaultHook(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: the post-commit hook cannot be tested")
	}
	home := filepath.Join(t.TempDir(), "home")
	repo := t.TempDir()
	git(t, repo, "init", "-q", ".")
	dir := copyVault(t, filepath.Join(repo, "handbook")) // the vault is a folder of the repository
	hooks := filepath.Join(repo, ".git", "hooks")
	hook := filepath.Join(hooks, "post-commit")
	mark := filepath.Join(t.TempDir(), "mark")
	// The user's hook, which ends with an exit: engram's block must run
	// before it.
	userHook := "#!/bin/sh\necho ran >> '" + mark + "'\nexit 0\n"
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hook, []byte(userHook), 0o750); err != nil {
		t.Fatal(err)
	}

	// The server's watcher would sync the commit too: off, so that only
	// the hook can.
	writeConfig(t, home, "watch_vaults = false\n")
	if r := runCLI(t, home, "", "vault", "hook", "install", dir); r.code != 1 || !strings.Contains(r.stderr, "engram vault add") {
		t.Errorf("hook install before vault add: %+v", r)
	}
	if r := runCLI(t, home, "", "vault", "hook", "install", t.TempDir()); r.code != 1 || !strings.Contains(r.stderr, "not in a git work tree") {
		t.Errorf("hook install outside git: %+v", r)
	}
	if r := runCLI(t, home, "", "vault", "add", dir); r.code != 0 {
		t.Fatalf("vault add: %+v", r)
	}
	for range 2 { // installing twice leaves one block
		if r := runCLI(t, home, "", "vault", "hook", "install", dir); r.code != 0 || !strings.Contains(r.stdout, hook) {
			t.Fatalf("hook install: %+v", r)
		}
	}
	b, err := os.ReadFile(hook)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	if n := strings.Count(text, "# >>> engram vault sync "+dir+" >>>"); n != 1 || strings.Count(text, "vault sync '"+dir+"'") != 1 {
		t.Errorf("%d engram blocks after two installs:\n%s", n, text)
	}
	if !strings.HasPrefix(text, "#!/bin/sh\n# >>> engram") || !strings.HasSuffix(text, "echo ran >> '"+mark+"'\nexit 0\n") ||
		!strings.Contains(text, "--home '"+home+"'") || !strings.Contains(text, "&") {
		t.Errorf("hook after install:\n%s", text)
	}
	if fi, err := os.Stat(hook); err != nil || fi.Mode().Perm()&0o111 == 0 {
		t.Errorf("the hook is not executable: %v %v", fi, err)
	}
	if b, err := os.ReadFile(filepath.Join(hooks, "post-commit.engram-backup")); err != nil || string(b) != userHook {
		t.Errorf("backup of the user's hook: %q %v", b, err)
	}

	// A commit, with a server running: the hook syncs through it.
	s := startServer(t, home) // stopped below; killed by its cleanup if the test fails first
	ctx := context.Background()
	testutil.WaitUntil(t, "the server's first vault-reconcile", func() bool {
		var jobs struct {
			Jobs []struct {
				Name        string    `json:"name"`
				LastSuccess time.Time `json:"last_success"`
			} `json:"jobs"`
		}
		_, err := s.get(ctx, "/v1/jobs", &jobs)
		return err == nil && slices.ContainsFunc(jobs.Jobs, func(j struct {
			Name        string    `json:"name"`
			LastSuccess time.Time `json:"last_success"`
		}) bool {
			return j.Name == "vault-reconcile" && !j.LastSuccess.IsZero()
		})
	})
	docs := func() int {
		var list struct{ Vaults []vaultStatus }
		if code, err := s.get(ctx, "/v1/vaults", &list); err != nil || code != 200 || len(list.Vaults) != 1 {
			t.Fatalf("GET /v1/vaults: %d %v %+v", code, err, list)
		}
		return list.Vaults[0].Docs
	}
	before := docs()
	if err := os.WriteFile(filepath.Join(dir, "notes", "committed.md"), []byte("# Committed\n\nSee [[ADR-0007]].\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The commit does not wait for the sync: the block starts it in the
	// background with its output detached (checked in the hook's text
	// above and here, not by timing the commit).
	if b, _ := os.ReadFile(hook); !strings.Contains(string(b), " vault sync '"+dir+"' </dev/null >/dev/null 2>&1 & )") {
		t.Errorf("the hook does not detach the sync:\n%s", b)
	}
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-q", "-m", "a note")
	// The sync stores the note, then resolves the vault's links: the note
	// counts before its link leads anywhere, so wait for the link too.
	var g docGraph
	var code int
	testutil.WaitUntil(t, "the hook's sync of the committed note, its link resolved", func() bool {
		if docs() != before+1 {
			return false
		}
		g = docGraph{}
		code, err = s.get(ctx, "/v1/graph?doc="+url.QueryEscape("notes/committed.md"), &g)
		return err == nil && code == 200 && len(g.Linked) > 0
	})
	if b, _ := os.ReadFile(mark); string(b) != "ran\n" {
		t.Errorf("the user's hook ran %q times, want once", b)
	}
	if g.Linked[0].Path != billingADR {
		t.Errorf("GET /v1/graph of the committed note: %d %v %+v", code, err, g)
	}
	s.stop(t)

	// Uninstall removes only engram's block: the user's hook is back as it
	// was, and the spare backup goes.
	for _, want := range []string{"removed engram's block", "nothing to remove"} {
		if r := runCLI(t, home, "", "vault", "hook", "uninstall", dir); r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("hook uninstall: %+v, want %q", r, want)
		}
	}
	if b, _ := os.ReadFile(hook); string(b) != userHook {
		t.Errorf("hook after uninstall: %q, want the user's %q", b, userHook)
	}
	if _, err := os.Stat(filepath.Join(hooks, "post-commit.engram-backup")); !os.IsNotExist(err) {
		t.Errorf("the backup stayed after the hook came back as it was: %v", err)
	}

	// Without a hook: engram's is created, and removed whole.
	if err := os.Remove(hook); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, home, "", "vault", "hook", "install", dir); r.code != 0 {
		t.Fatalf("hook install on no hook: %+v", r)
	}
	if b, _ := os.ReadFile(hook); !strings.HasPrefix(string(b), "#!/bin/sh\n# >>> engram vault sync ") {
		t.Errorf("new hook: %q", b)
	}
	if r := runCLI(t, home, "", "vault", "hook", "uninstall", dir); r.code != 0 || !strings.Contains(r.stdout, "removed "+hook) {
		t.Errorf("hook uninstall of engram's own hook: %+v", r)
	}
	if _, err := os.Stat(hook); !os.IsNotExist(err) {
		t.Errorf("engram's own hook stayed after uninstall: %v", err)
	}

	// A hook in another language is left alone.
	pyHook := "#!/usr/bin/env python3\nprint('hi')\n"
	if err := os.WriteFile(hook, []byte(pyHook), 0o755); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, home, "", "vault", "hook", "install", dir); r.code != 1 || !strings.Contains(r.stderr, "python3, not sh") {
		t.Errorf("hook install onto a python hook: %+v", r)
	}
	if b, _ := os.ReadFile(hook); string(b) != pyHook {
		t.Errorf("python hook changed: %q", b)
	}
}
