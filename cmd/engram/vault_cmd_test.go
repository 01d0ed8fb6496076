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

func TestVaultCommands(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	dir := copyVault(t, filepath.Join(t.TempDir(), "notes"))
	// The user's config, without a final newline: kept byte for byte.
	const userConfig = "# mine\nlog_level = \"warn\""
	writeConfig(t, home, userConfig)

	r := runCLI(t, home, "", "vault", "add", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "added the vault "+dir) || !strings.Contains(r.stdout, "indexed") {
		t.Fatalf("vault add: %+v", r)
	}
	if !strings.Contains(r.stdout, "skipped attachments/corrupt.md") || !strings.Contains(r.stdout, "does-not-exist") {
		t.Errorf("vault add's first sync does not report the skipped file and the broken link:\n%s", r.stdout)
	}
	cfgPath := filepath.Join(home, "config.toml")
	cfg, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(cfg), userConfig+"\n") || !strings.Contains(string(cfg), "[[vaults]]\npath = \""+dir+"\"\nnamespace = \"default\"\n") {
		t.Errorf("config.toml after vault add:\n%s", cfg)
	}

	// Refusals leave config.toml alone.
	file := filepath.Join(dir, "README.md")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{dir}, 1, "already a vault"},
		{[]string{dir + "/"}, 1, "already a vault"},
		{[]string{filepath.Join(dir, "docs")}, 1, "inside the vault"},
		{[]string{filepath.Dir(dir)}, 1, "holds the vault"},
		{[]string{filepath.Join(dir, "nope")}, 1, "does not exist"},
		{[]string{file}, 1, "not a folder"},
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
	if after, _ := os.ReadFile(cfgPath); string(after) != string(cfg) {
		t.Errorf("a refused vault add changed config.toml:\n%s", after)
	}

	var list struct{ Vaults []vaultStatus }
	if r := vaultJSON(t, home, &list, "list"); r.code != 0 || len(list.Vaults) != 1 {
		t.Fatalf("vault list: %+v", r)
	}
	v := list.Vaults[0]
	if v.Path != dir || v.Namespace != "default" || v.Docs < 10 || v.Chunks < v.Docs || v.UnresolvedLinks < 1 {
		t.Errorf("vault list: %+v", v)
	}
	if r := runCLI(t, home, "", "vault", "list"); r.code != 0 || !strings.Contains(r.stdout, dir) || !strings.Contains(r.stdout, "UNRESOLVED") {
		t.Errorf("vault list as text: %+v", r)
	}

	// A second sync finds nothing to do.
	var sync struct{ Reports []syncReport }
	if r := vaultJSON(t, home, &sync, "sync"); r.code != 0 || len(sync.Reports) != 1 {
		t.Fatalf("vault sync: %+v", r)
	}
	if rep := sync.Reports[0]; len(rep.Indexed) != 0 || len(rep.Removed) != 0 || rep.Unchanged != v.Docs || rep.UnresolvedLinks != v.UnresolvedLinks {
		t.Errorf("second sync: %+v (list: %+v)", rep, v)
	}

	// The billing incident reaches the ADR and a rule.
	var g docGraph
	if r := vaultJSON(t, home, &g, "graph", billingIncident); r.code != 0 {
		t.Fatalf("vault graph: %+v", r)
	}
	if g.Doc.Path != billingIncident || g.Doc.Vault != dir || g.Doc.Type != "incident" {
		t.Errorf("graph doc: %+v", g.Doc)
	}
	at := g.linkedAt()
	if !slices.Contains(at, billingADR+"@1") || !slices.Contains(at, poolRules+"@1") {
		t.Errorf("the incident's links: %v", at)
	}
	if !slices.ContainsFunc(g.Unresolved, func(u struct {
		Target string `json:"target"`
		Line   int    `json:"line"`
	}) bool {
		return u.Target == "does-not-exist"
	}) {
		t.Errorf("unresolved: %+v", g.Unresolved)
	}
	for _, d := range g.Linked {
		if d.Depth == 2 && d.Via == "" {
			t.Errorf("%s at depth 2 names no document it was reached through", d.Path)
		}
	}
	// By alias, from the ADR: the rule is linked, the incident links back.
	if r := vaultJSON(t, home, &g, "graph", "--depth", "1", "--vault", dir, "ADR-0007"); r.code != 0 || g.Doc.Path != billingADR {
		t.Fatalf("vault graph ADR-0007: %+v", r)
	}
	if !slices.Contains(g.linkedAt(), poolRules+"@1") || !slices.ContainsFunc(g.Backlinks, func(b struct{ Path string }) bool { return b.Path == billingIncident }) {
		t.Errorf("the ADR's graph: %+v", g)
	}
	// A note's wiki-link name resolves as [[2026-03-14-billing-outage]]
	// resolves in a note, also pasted with its brackets.
	for _, name := range []string{"2026-03-14-billing-outage", "[[2026-03-14-Billing-Outage#Timeline|the outage]]", "incidents/2026-03-14-billing-outage.md"} {
		if r := vaultJSON(t, home, &g, "graph", name); r.code != 0 || g.Doc.Path != billingIncident {
			t.Errorf("vault graph %q: %+v %+v, want the incident", name, r, g.Doc)
		}
	}
	// The text of a doc result says where it is: file, heading, lines.
	if r := runCLI(t, home, "", "recall", "--k", "1", "E4021"); r.code != 0 || !strings.Contains(r.stdout, "file "+poolRules+" > ") ||
		!strings.Contains(r.stdout, ", lines ") || !strings.Contains(r.stdout, "(vault "+dir+")") || strings.Contains(r.stdout, "source chunk-") ||
		!strings.Contains(r.stdout, "(1 result, mode ") {
		t.Errorf("recall of a doc as text: %+v", r)
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
		{[]string{"--vault", t.TempDir(), billingIncident}, 1, "no document"},
		{[]string{"--depth", "0", billingIncident}, 2, "--depth"},
		{[]string{"--depth", "7", billingIncident}, 2, "--depth"},
		{nil, 2, "Run 'engram vault graph --help'"},
	} {
		if r := runCLI(t, home, "", append([]string{"vault", "graph"}, c.args...)...); r.code != c.code || !strings.Contains(r.stderr, c.want) {
			t.Errorf("vault graph %q: %+v, want exit %d and %q", c.args, r, c.code, c.want)
		}
	}

	// An exact identifier of the vault finds its section first, in deep
	// recall as in the default mode.
	for _, q := range [][]string{{"--mode", "deep", "E4021"}, {"--mode", "deep", "which port does the pooler listen on, 6432?"}, {"E4021"}} {
		var resp struct {
			Results []struct {
				Kind string `json:"kind"`
				Doc  *struct {
					Vault     string   `json:"vault"`
					Path      string   `json:"path"`
					Heading   []string `json:"heading"`
					StartLine int      `json:"start_line"`
					EndLine   int      `json:"end_line"`
				} `json:"doc"`
			} `json:"results"`
		}
		r := runCLI(t, home, "", append([]string{"recall", "--json"}, q...)...)
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &resp) != nil || len(resp.Results) == 0 {
			t.Errorf("recall %q: %+v", q, r)
			continue
		}
		first := resp.Results[0]
		if first.Kind != "doc" || first.Doc == nil || first.Doc.Path != poolRules || first.Doc.Vault != dir ||
			first.Doc.StartLine < 1 || first.Doc.EndLine < first.Doc.StartLine || len(first.Doc.Heading) == 0 {
			t.Errorf("recall %q: first result %+v, want the pool rules", q, first)
		}
	}

	// Changes: an edited file is indexed again, a deleted one removed.
	edited := filepath.Join(dir, "docs", "runbooks", "pgbouncer-restart.md")
	if err := os.WriteFile(edited, []byte("# Restart PgBouncer\n\nUse RELOAD first; see [[connection-pools]].\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "docs", "rules", "db-migrations.md")); err != nil {
		t.Fatal(err)
	}
	if r := vaultJSON(t, home, &sync, "sync", dir); r.code != 0 || len(sync.Reports) != 1 {
		t.Fatalf("vault sync DIR: %+v", r)
	}
	if rep := sync.Reports[0]; !slices.Equal(rep.Indexed, []string{"docs/runbooks/pgbouncer-restart.md"}) ||
		!slices.Equal(rep.Removed, []string{"docs/rules/db-migrations.md"}) || rep.UnresolvedLinks <= v.UnresolvedLinks {
		t.Errorf("sync after an edit and a delete: %+v (links to the deleted rule should be unresolved now)", rep)
	}
	if r := runCLI(t, home, "", "vault", "sync", filepath.Join(dir, "docs")); r.code != 1 || !strings.Contains(r.stderr, "not a configured vault") {
		t.Errorf("sync of a folder that is no vault: %+v", r)
	}

	// A vault that fails: exit 1, the others synced all the same.
	other := filepath.Join(t.TempDir(), "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "a.md"), []byte("# A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, home, "", "vault", "add", "--namespace", "work", other); r.code != 0 {
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
	if r := vaultJSON(t, home, &sync, "sync"); r.code != 1 || len(sync.Reports) != 2 || sync.Reports[0].Error != "" || sync.Reports[1].Error == "" {
		t.Errorf("sync --json with a vault gone: %+v", r)
	}
}

func TestVaultAddKeepsABadConfig(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	// An inline vaults array: a [[vaults]] table appended to it would not
	// parse, so the file must come back as it was.
	const userConfig = "vaults = []\n"
	writeConfig(t, home, userConfig)
	dir := t.TempDir()
	r := runCLI(t, home, "", "vault", "add", dir)
	if r.code != 1 || !strings.Contains(r.stderr, "left unchanged") {
		t.Errorf("vault add onto an inline array: %+v", r)
	}
	if b, _ := os.ReadFile(filepath.Join(home, "config.toml")); string(b) != userConfig {
		t.Errorf("config.toml after the failed add: %q", b)
	}
	// No config.toml at all: created, 0600.
	home2 := filepath.Join(t.TempDir(), "home")
	if r := runCLI(t, home2, "", "vault", "add", dir); r.code != 0 || !strings.Contains(r.stdout, "0 files") {
		t.Fatalf("vault add on a new home: %+v", r)
	}
	fi, err := os.Stat(filepath.Join(home2, "config.toml"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("config.toml on a new home: %v %v", fi, err)
	}
	if r := runCLI(t, t.TempDir(), "", "vault", "list"); r.code != 0 || !strings.Contains(r.stdout, "no vaults") {
		t.Errorf("vault list with no vaults: %+v", r)
	}
	if r := runCLI(t, t.TempDir(), "", "vault", "sync"); r.code != 0 || !strings.Contains(r.stdout, "no vaults") {
		t.Errorf("vault sync with no vaults: %+v", r)
	}
	for _, args := range [][]string{{"vault"}, {"vault", "bogus"}, {"vault", "hook"}, {"vault", "hook", "bogus", dir}, {"vault", "list", "x"}} {
		if r := runCLI(t, home2, "", args...); r.code != 2 || !strings.Contains(r.stderr, "--help' for usage") {
			t.Errorf("%q: %+v", args, r)
		}
	}
	if r := runCLI(t, home2, "", "help", "vault"); r.code != 0 || !strings.Contains(r.stdout, "engram vault hook install DIR") {
		t.Errorf("help vault: %+v", r)
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
	waitFor(t, "the server's first vault-reconcile", func() bool {
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
	waitFor(t, "the hook's sync of the committed note, its link resolved", func() bool {
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

func TestVaultThroughServer(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	dir := copyVault(t, filepath.Join(t.TempDir(), "notes"))
	if r := runCLI(t, home, "", "vault", "add", dir); r.code != 0 {
		t.Fatalf("vault add: %+v", r)
	}
	s := startServer(t, home) // stopped below; killed by its cleanup if the test fails first
	ctx := context.Background()

	// The CLI goes through the server, which holds the home.
	var sync struct{ Reports []syncReport }
	if r := vaultJSON(t, home, &sync, "sync", dir); r.code != 0 || len(sync.Reports) != 1 || sync.Reports[0].Vault != dir || sync.Reports[0].Error != "" {
		t.Fatalf("vault sync through the server: %+v", r)
	}
	var list struct{ Vaults []vaultStatus }
	if r := vaultJSON(t, home, &list, "list"); r.code != 0 || len(list.Vaults) != 1 || list.Vaults[0].Docs < 10 {
		t.Errorf("vault list through the server: %+v", r)
	}
	var g docGraph
	if r := vaultJSON(t, home, &g, "graph", billingIncident); r.code != 0 || !slices.Contains(g.linkedAt(), billingADR+"@1") {
		t.Errorf("vault graph through the server: %+v", r)
	}
	if r := runCLI(t, home, "", "vault", "graph", "no-such-note"); r.code != 1 || !strings.Contains(r.stderr, "no document") {
		t.Errorf("vault graph of an unknown doc through the server: %+v", r)
	}

	// The HTTP API itself.
	g = docGraph{}
	code, err := s.get(ctx, "/v1/graph?doc="+url.QueryEscape(billingIncident)+"&depth=2&vault="+url.QueryEscape(dir), &g)
	if err != nil || code != 200 || !slices.Contains(g.linkedAt(), billingADR+"@1") {
		t.Fatalf("GET /v1/graph: %d %v %+v", code, err, g)
	}
	for _, d := range g.Linked {
		if d.Depth > 2 {
			t.Errorf("GET /v1/graph depth 2 returned %s at depth %d", d.Path, d.Depth)
		}
	}
	var e struct{ Error struct{ Code, Field string } }
	if code, _ := s.get(ctx, "/v1/graph?doc=nope", &e); code != 404 || e.Error.Code != "not_found" {
		t.Errorf("GET /v1/graph of an unknown doc: %d %+v", code, e)
	}
	if code, _ := s.get(ctx, "/v1/graph?doc=x&depth=9", &e); code != 400 || e.Error.Field != "depth" {
		t.Errorf("GET /v1/graph depth 9: %d %+v", code, e)
	}
	var reports struct{ Reports []syncReport }
	if code, err := s.post(ctx, "/v1/vaults/sync", map[string]string{}, &reports); err != nil || code != 200 || len(reports.Reports) != 1 {
		t.Errorf("POST /v1/vaults/sync: %d %v %+v", code, err, reports)
	}

	// A vault added while the server runs is recorded; the server serves
	// it after a restart.
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "a.md"), []byte("# A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, home, "", "vault", "add", other)
	if r.code != 0 || !strings.Contains(r.stdout, "restart it") {
		t.Errorf("vault add while the server runs: %+v", r)
	}
	if r := runCLI(t, home, "", "vault", "sync", other); r.code != 1 || !strings.Contains(r.stderr, "restart the server") {
		t.Errorf("vault sync of a vault the server does not know yet: %+v", r)
	}
	// vault list says it is recorded and waits for the restart (it was
	// missing from the list before).
	if r := runCLI(t, home, "", "vault", "list"); r.code != 0 || !strings.Contains(r.stdout, other+": recorded in config.toml after engram serve started") {
		t.Errorf("vault list of a vault added while serving: %+v", r)
	}
	var pending struct{ Vaults []vaultStatus }
	if r := vaultJSON(t, home, &pending, "list"); r.code != 0 || len(pending.Vaults) != 2 || pending.Vaults[1].Path != other || pending.Vaults[1].Pending == "" {
		t.Errorf("vault list --json of a vault added while serving: %+v %+v", r, pending)
	}
	g = docGraph{}
	if code, err := s.get(ctx, "/v1/graph?doc="+url.QueryEscape("2026-03-14-billing-outage"), &g); err != nil || code != 200 || g.Doc.Path != billingIncident {
		t.Errorf("GET /v1/graph by a wiki-link name: %d %v %+v", code, err, g.Doc)
	}
	s.stop(t)
	s = startServer(t, home)
	defer s.stop(t)
	if r := vaultJSON(t, home, &sync, "sync", other); r.code != 0 || len(sync.Reports) != 1 || sync.Reports[0].Files != 1 {
		t.Errorf("vault sync after the restart: %+v", r)
	}
}

// waitFor polls cond until it holds, failing the test after a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
