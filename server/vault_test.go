package server_test

import (
	"errors"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/server"
)

const (
	billingIncident = "docs/incidents/2026-03-14-billing-outage.md"
	billingADR      = "docs/adrs/0007-use-postgres.md"
)

// linkedAt returns the linked documents of g as "path@depth".
func linkedAt(g engram.DocGraph) []string {
	var out []string
	for _, d := range g.Linked {
		out = append(out, d.Path+"@"+string(rune('0'+d.Depth)))
	}
	return out
}

// TestVaultThroughServer: a command's vault sync, list and graph go
// through the server that holds the home (server.Discover's client), as
// does the HTTP API; a vault config.toml records after the server started
// is listed as pending and its sync names the restart, after which the
// server serves it.
func TestVaultThroughServer(t *testing.T) {
	ctx := t.Context()
	home := filepath.Join(t.TempDir(), "home")
	dir := filepath.Join(t.TempDir(), "notes")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "testdata", "vault"))); err != nil {
		t.Fatal(err)
	}
	noEnv := func(string) string { return "" }
	cfg, err := server.LoadConfig(home, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := engine.AddVault(cfg.Config, dir, engram.DefaultNamespace, noEnv); err != nil {
		t.Fatal(err)
	}
	if cfg, err = server.LoadConfig(home, noEnv); err != nil {
		t.Fatal(err)
	}
	s, stop := serve(t, home, nil)
	if err := server.WriteServeInfo(home, s.Addr()); err != nil { // as engram serve does
		t.Fatal(err)
	}
	c := server.Discover(ctx, cfg)
	if c == nil {
		t.Fatal("no server found for the home")
	}

	sync, err := server.SyncVaults(ctx, cfg, dir, quiet())
	if err != nil || len(sync) != 1 || sync[0].Vault != dir || sync[0].Error != "" {
		t.Fatalf("vault sync through the server: %+v %v", sync, err)
	}
	if list, err := server.Vaults(ctx, cfg, quiet()); err != nil || len(list) != 1 || list[0].Docs < 10 {
		t.Errorf("vault list through the server: %+v %v", list, err)
	}
	if g, err := c.DocGraph(ctx, "", billingIncident, engram.DefaultGraphDepth); err != nil || !slices.Contains(linkedAt(g), billingADR+"@1") {
		t.Errorf("vault graph through the server: %+v %v", g, err)
	}
	// A document named by its full path names its vault too; the lists
	// are empty, not nil.
	if g, err := server.DocGraph(ctx, c, cfg, "", filepath.Join(dir, billingIncident), 1); err != nil || g.Doc.Path != billingIncident ||
		!slices.Contains(linkedAt(g), billingADR+"@1") || g.Backlinks == nil || g.Unresolved == nil {
		t.Errorf("vault graph of a full path: %+v %v", g, err)
	}
	if _, err := c.DocGraph(ctx, "", "no-such-note", engram.DefaultGraphDepth); engram.ErrorCode(err) != engram.ENOTFOUND || !strings.Contains(err.Error(), "no document") {
		t.Errorf("vault graph of an unknown doc through the server: %v", err)
	}

	// The HTTP API itself.
	var g engram.DocGraph
	if code := call(t, s, "GET", "/v1/graph?doc="+url.QueryEscape(billingIncident)+"&depth=2&vault="+url.QueryEscape(dir), nil, &g); code != 200 || !slices.Contains(linkedAt(g), billingADR+"@1") {
		t.Fatalf("GET /v1/graph: %d %+v", code, g)
	}
	for _, d := range g.Linked {
		if d.Depth > 2 {
			t.Errorf("GET /v1/graph depth 2 returned %s at depth %d", d.Path, d.Depth)
		}
	}
	var e struct{ Error struct{ Code, Field string } }
	if code := call(t, s, "GET", "/v1/graph?doc=nope", nil, &e); code != 404 || e.Error.Code != "not_found" {
		t.Errorf("GET /v1/graph of an unknown doc: %d %+v", code, e)
	}
	if code := call(t, s, "GET", "/v1/graph?doc=x&depth=9", nil, &e); code != 400 || e.Error.Field != "depth" {
		t.Errorf("GET /v1/graph depth 9: %d %+v", code, e)
	}
	var reports struct{ Reports []engram.VaultSyncReport }
	if code := call(t, s, "POST", "/v1/vaults/sync", map[string]string{}, &reports); code != 200 || len(reports.Reports) != 1 {
		t.Errorf("POST /v1/vaults/sync: %d %+v", code, reports)
	}

	// A vault added while the server runs is recorded; the server serves
	// it after a restart.
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "a.md"), []byte("# A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := engine.AddVault(cfg.Config, other, engram.DefaultNamespace, noEnv); err != nil {
		t.Fatal(err)
	}
	if cfg, err = server.LoadConfig(home, noEnv); err != nil {
		t.Fatal(err)
	}
	if _, err := server.SyncVaults(ctx, cfg, other, quiet()); err == nil || !strings.Contains(err.Error(), "restart the server") {
		t.Errorf("vault sync of a vault the server does not know yet: %v", err)
	}
	pending, err := server.Vaults(ctx, cfg, quiet())
	if err != nil || len(pending) != 2 || pending[1].Path != other || !strings.Contains(pending[1].Pending, "recorded in config.toml after engram serve started") {
		t.Errorf("vault list of a vault added while serving: %+v %v", pending, err)
	}
	g = engram.DocGraph{}
	if code := call(t, s, "GET", "/v1/graph?doc="+url.QueryEscape("2026-03-14-billing-outage"), nil, &g); code != 200 || g.Doc.Path != billingIncident {
		t.Errorf("GET /v1/graph by a wiki-link name: %d %+v", code, g.Doc)
	}
	stop()
	s = startServer(t, home, nil)
	if err := server.WriteServeInfo(home, s.Addr()); err != nil {
		t.Fatal(err)
	}
	if c = server.Discover(ctx, cfg); c == nil {
		t.Fatal("no server found for the home after the restart")
	}
	if sync, err := server.SyncVaults(ctx, cfg, other, quiet()); err != nil || len(sync) != 1 || sync[0].Files != 1 {
		t.Errorf("vault sync after the restart: %+v %v", sync, err)
	}
}

// TestAddVault: server.AddVault records a vault and syncs it on the home
// opened here; with a server answering for the home it records the vault
// only, and says so, since the server reads config.toml when it starts.
func TestAddVault(t *testing.T) {
	ctx := t.Context()
	home := filepath.Join(t.TempDir(), "home")
	dir := filepath.Join(t.TempDir(), "notes")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "testdata", "vault"))); err != nil {
		t.Fatal(err)
	}
	noEnv := func(string) string { return "" }
	load := func() (server.Config, error) { return server.LoadConfig(home, noEnv) }
	newLogger := func(server.Config) *slog.Logger { return quiet() }
	cfg, err := load()
	if err != nil {
		t.Fatal(err)
	}
	if vs, err := server.Vaults(ctx, cfg, quiet()); err != nil || vs != nil {
		t.Fatalf("the vaults of a home with none: %+v, %v", vs, err)
	}
	if reports, err := server.SyncVaults(ctx, cfg, "", quiet()); err != nil || reports != nil {
		t.Fatalf("syncing a home with no vaults: %+v, %v", reports, err)
	}
	if _, err := os.Stat(home); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("listing or syncing no vaults opened the home: %v", err)
	}
	a, err := server.AddVault(ctx, cfg, dir, "notes", noEnv, load, newLogger)
	if err != nil || a.Root != dir || a.Config != filepath.Join(home, "config.toml") || a.Served ||
		len(a.Reports) != 1 || a.Reports[0].Vault != dir || len(a.Reports[0].Indexed) < 10 {
		t.Fatalf("AddVault here: %+v, %v", a, err)
	}
	if cfg, err = load(); err != nil {
		t.Fatal(err)
	}
	if vs, err := server.Vaults(ctx, cfg, quiet()); err != nil || len(vs) != 1 || vs[0].Path != dir || vs[0].Docs < 10 {
		t.Errorf("the vaults of the home opened here: %+v, %v", vs, err)
	}
	if _, err := server.AddVault(ctx, cfg, dir, "notes", noEnv, load, newLogger); err == nil {
		t.Errorf("the same vault again: %v", err)
	}

	s := startServer(t, home, nil)
	if err := server.WriteServeInfo(home, s.Addr()); err != nil { // as engram serve does
		t.Fatal(err)
	}
	other := t.TempDir()
	a, err = server.AddVault(ctx, cfg, other, "notes", noEnv, load, newLogger)
	if err != nil || a.Root != other || !a.Served || a.Reports != nil {
		t.Fatalf("AddVault beside a server: %+v, %v", a, err)
	}
	if cfg, err = load(); err != nil || !cfg.HasVault(other) {
		t.Errorf("the vault added beside a server is not recorded: %v", err)
	}
}

// TestVaultHook: server.VaultHook puts the block that syncs a configured
// vault in the post-commit hook of its repository, refuses a folder that
// is no configured vault, and takes the block out again.
func TestVaultHook(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: the post-commit hook cannot be tested")
	}
	ctx := t.Context()
	home, repo := filepath.Join(t.TempDir(), "home"), t.TempDir()
	if out, err := exec.Command("git", "-C", repo, "init", "-q", ".").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	dir := filepath.Join(repo, "notes")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	noEnv := func(string) string { return "" }
	cfg, err := server.LoadConfig(home, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := server.VaultHook(ctx, cfg, dir, true, &out); engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Fatalf("install for a folder that is no vault: %v", err)
	}
	if _, _, err := engine.AddVault(cfg.Config, dir, engram.DefaultNamespace, noEnv); err != nil {
		t.Fatal(err)
	}
	if cfg, err = server.LoadConfig(home, noEnv); err != nil {
		t.Fatal(err)
	}
	hook := filepath.Join(repo, ".git", "hooks", "post-commit")
	if err := server.VaultHook(ctx, cfg, dir, true, &out); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(hook); err != nil || !strings.Contains(string(b), "vault sync '"+dir+"'") || !strings.Contains(string(b), "--home '"+home+"'") {
		t.Fatalf("the hook after install: %s, %v", b, err)
	}
	if err := server.VaultHook(ctx, cfg, dir, false, &out); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(hook); err == nil && strings.Contains(string(b), "vault sync") {
		t.Errorf("the hook after uninstall:\n%s", b)
	}
}
