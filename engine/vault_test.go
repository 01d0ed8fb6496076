package engine_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/engine"
)

// copyVault copies the shared test vault (testdata/vault) into a new
// folder and returns the folder's path.
func copyVault(t *testing.T, dst string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(dst, os.DirFS(filepath.Join("..", "testdata", "vault"))); err != nil {
		t.Fatal(err)
	}
	return dst
}

// linkedAt returns the linked documents of g as "path@depth".
func linkedAt(g engram.DocGraph) []string {
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

// addVault records dir as a vault of home (namespace ns) as `engram vault
// add` does, then opens the home, syncs the vault and closes it; it
// returns the sync's report and the home's configuration.
func addVault(t *testing.T, home, dir, ns string) (engram.VaultSyncReport, config.Config) {
	t.Helper()
	root, _, err := engine.AddVault(homeConfig(t, home), dir, ns, noEnv)
	if err != nil {
		t.Fatalf("add the vault %s: %v", dir, err)
	}
	cfg := homeConfig(t, home)
	e, err := engine.Open(t.Context(), cfg, quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	reports, err := e.SyncVaults(t.Context(), root)
	if err != nil || len(reports) != 1 || reports[0].Error != "" {
		t.Fatalf("sync of the added vault: %+v %v", reports, err)
	}
	return reports[0], cfg
}

// TestVaults: a vault is recorded in config.toml (the user's text kept
// byte for byte) and indexed; a refused add leaves config.toml alone; a
// second sync finds nothing to do; the graph of a document is found by
// path, alias, wiki-link name and full path; recall finds a vault's
// section by an exact identifier; an edit and a delete are synced; a vault
// that fails does not keep the others from syncing.
func TestVaults(t *testing.T) {
	ctx := t.Context()
	home := filepath.Join(t.TempDir(), "home")
	dir := copyVault(t, filepath.Join(t.TempDir(), "notes"))
	// The user's config, without a final newline: kept byte for byte.
	const userConfig = "# mine\nlog_level = \"warn\""
	writeConfig(t, home, userConfig)

	rep, cfg := addVault(t, home, dir, engram.DefaultNamespace)
	if len(rep.Indexed) == 0 || !slices.ContainsFunc(rep.Skipped, func(s engram.SkippedFile) bool { return s.Path == "attachments/corrupt.md" }) ||
		!slices.ContainsFunc(rep.Unresolved, func(l engram.DocLink) bool { return l.Target == "does-not-exist" }) {
		t.Errorf("the first sync does not report the indexed files, the skipped file and the broken link: %+v", rep)
	}
	cfgPath := filepath.Join(home, config.ConfigFile)
	written, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(written), userConfig+"\n") || !strings.Contains(string(written), "[[vaults]]\npath = \""+dir+"\"\nnamespace = \"default\"\n") {
		t.Errorf("config.toml after the add:\n%s", written)
	}

	// Refusals leave config.toml alone.
	for _, c := range []struct{ dir, want string }{
		{dir, "already a vault"},
		{dir + "/", "already a vault"},
		{filepath.Join(dir, "docs"), "inside the vault"},
		{filepath.Dir(dir), "holds the vault"},
		{filepath.Join(dir, "nope"), "does not exist"},
		{filepath.Join(dir, "README.md"), "not a folder"},
	} {
		if _, _, err := engine.AddVault(cfg, c.dir, engram.DefaultNamespace, noEnv); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("add %s: %v, want %q", c.dir, err, c.want)
		}
	}
	if after, _ := os.ReadFile(cfgPath); string(after) != string(written) {
		t.Errorf("a refused add changed config.toml:\n%s", after)
	}

	e, err := engine.Open(ctx, cfg, quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { e.Close() }()
	list, err := e.Vaults(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("vaults: %+v %v", list, err)
	}
	v := list[0]
	if v.Path != dir || v.Namespace != "default" || v.Docs < 10 || v.Chunks < v.Docs || v.UnresolvedLinks < 1 {
		t.Errorf("vaults: %+v", v)
	}

	// A second sync finds nothing to do.
	sync, err := e.SyncVaults(ctx, "")
	if err != nil || len(sync) != 1 {
		t.Fatalf("sync: %+v %v", sync, err)
	}
	if rep := sync[0]; len(rep.Indexed) != 0 || len(rep.Removed) != 0 || rep.Unchanged != v.Docs || rep.UnresolvedLinks != v.UnresolvedLinks {
		t.Errorf("second sync: %+v (list: %+v)", rep, v)
	}

	// The billing incident reaches the ADR and a rule.
	g, err := e.DocGraph(ctx, "", billingIncident, engram.DefaultGraphDepth)
	if err != nil {
		t.Fatalf("graph: %v", err)
	}
	if g.Doc.Path != billingIncident || g.Doc.Vault != dir || g.Doc.Type != "incident" {
		t.Errorf("graph doc: %+v", g.Doc)
	}
	at := linkedAt(g)
	if !slices.Contains(at, billingADR+"@1") || !slices.Contains(at, poolRules+"@1") {
		t.Errorf("the incident's links: %v", at)
	}
	if !slices.ContainsFunc(g.Unresolved, func(u engram.DocLink) bool { return u.Target == "does-not-exist" }) {
		t.Errorf("unresolved: %+v", g.Unresolved)
	}
	for _, d := range g.Linked {
		if d.Depth == 2 && d.Via == "" {
			t.Errorf("%s at depth 2 names no document it was reached through", d.Path)
		}
	}
	// By alias, from the ADR: the rule is linked, the incident links back.
	if g, err = e.DocGraph(ctx, dir, "ADR-0007", 1); err != nil || g.Doc.Path != billingADR {
		t.Fatalf("graph ADR-0007: %+v %v", g.Doc, err)
	}
	if !slices.Contains(linkedAt(g), poolRules+"@1") || !slices.ContainsFunc(g.Backlinks, func(b engram.GraphDoc) bool { return b.Path == billingIncident }) {
		t.Errorf("the ADR's graph: %+v", g)
	}
	// A note's wiki-link name resolves as [[2026-03-14-billing-outage]]
	// resolves in a note, also pasted with its brackets; a full path is
	// read against the configured vaults.
	doc, root := cfg.VaultPath(filepath.Join(dir, billingIncident), "")
	for _, c := range []struct{ root, name string }{{"", "2026-03-14-billing-outage"}, {"", "[[2026-03-14-Billing-Outage#Timeline|the outage]]"},
		{"", "incidents/2026-03-14-billing-outage.md"}, {root, doc}} {
		if g, err := e.DocGraph(ctx, c.root, c.name, engram.DefaultGraphDepth); err != nil || g.Doc.Path != billingIncident {
			t.Errorf("graph %q in %q: %+v %v, want the incident", c.name, c.root, g.Doc, err)
		}
	}
	for _, c := range []struct{ root, name string }{{"", "no-such-note"}, {t.TempDir(), billingIncident}} {
		if _, err := e.DocGraph(ctx, c.root, c.name, engram.DefaultGraphDepth); engram.ErrorCode(err) != engram.ENOTFOUND || !strings.Contains(err.Error(), "no document") {
			t.Errorf("graph %q in %q: %v, want ENOTFOUND naming no document", c.name, c.root, err)
		}
	}

	// An exact identifier of the vault finds its section first, in deep
	// recall as in the default mode.
	for _, q := range []engram.RecallRequest{{Mode: engram.ModeDeep, Query: "E4021"}, {Mode: engram.ModeDeep, Query: "which port does the pooler listen on, 6432?"}, {Query: "E4021"}} {
		resp, err := e.Recall(ctx, q)
		if err != nil || len(resp.Results) == 0 {
			t.Errorf("recall %+v: %+v %v", q, resp, err)
			continue
		}
		first := resp.Results[0]
		if first.Kind != engram.KindDoc || first.Doc == nil || first.Doc.Path != poolRules || first.Doc.Vault != dir ||
			first.Doc.StartLine < 1 || first.Doc.EndLine < first.Doc.StartLine || len(first.Doc.Heading) == 0 {
			t.Errorf("recall %+v: first result %+v, want the pool rules", q, first)
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
	if sync, err = e.SyncVaults(ctx, dir); err != nil || len(sync) != 1 {
		t.Fatalf("sync of %s: %+v %v", dir, sync, err)
	}
	if rep := sync[0]; !slices.Equal(rep.Indexed, []string{"docs/runbooks/pgbouncer-restart.md"}) ||
		!slices.Equal(rep.Removed, []string{"docs/rules/db-migrations.md"}) || rep.UnresolvedLinks <= v.UnresolvedLinks {
		t.Errorf("sync after an edit and a delete: %+v (links to the deleted rule should be unresolved now)", rep)
	}
	if _, err := e.SyncVaults(ctx, filepath.Join(dir, "docs")); err == nil || !strings.Contains(err.Error(), "not a configured vault") {
		t.Errorf("sync of a folder that is no vault: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	// A vault that fails: its report says so, the others synced all the
	// same.
	other := filepath.Join(t.TempDir(), "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "a.md"), []byte("# A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	addVault(t, home, other, "work")
	if err := os.RemoveAll(other); err != nil {
		t.Fatal(err)
	}
	if e, err = engine.Open(ctx, homeConfig(t, home), quiet()); err != nil {
		t.Fatal(err)
	}
	sync, err = e.SyncVaults(ctx, "")
	if err != nil || len(sync) != 2 || sync[0].Vault != dir || sync[0].Namespace != "default" || sync[0].Error != "" ||
		sync[1].Vault != other || sync[1].Namespace != "work" || sync[1].Error == "" {
		t.Errorf("sync with a vault gone: %+v %v", sync, err)
	}
}

// TestAddVaultKeepsABadConfig: a config.toml whose vaults are an inline
// array, to which a [[vaults]] table would not parse, is left as it was;
// a home with no config.toml gets one, readable by its owner alone.
func TestAddVaultKeepsABadConfig(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	const userConfig = "vaults = []\n"
	writeConfig(t, home, userConfig)
	dir := t.TempDir()
	if _, _, err := engine.AddVault(homeConfig(t, home), dir, engram.DefaultNamespace, noEnv); err == nil || !strings.Contains(err.Error(), "left unchanged") {
		t.Errorf("add onto an inline array: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(home, config.ConfigFile)); string(b) != userConfig {
		t.Errorf("config.toml after the failed add: %q", b)
	}
	home2 := filepath.Join(t.TempDir(), "home")
	if rep, _ := addVault(t, home2, dir, engram.DefaultNamespace); rep.Files != 0 {
		t.Fatalf("add on a new home: %+v", rep)
	}
	fi, err := os.Stat(filepath.Join(home2, config.ConfigFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("config.toml on a new home: %v %v", fi, err)
	}
}
