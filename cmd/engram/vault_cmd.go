package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/server"
)

// `engram vault` manages the Markdown vaults: the folders listed as
// [[vaults]] in config.toml. Like the other commands it goes through the
// HTTP API when a server owns the home, else opens the home here.
//
// `vault add` only appends to config.toml, which a running server read
// when it started: a vault added while `engram serve` runs is indexed
// after the server restarts (then by `engram vault sync` or the
// vault-reconcile job), and `vault add` says so.

const vaultUsage = `Usage:
  engram vault add [--namespace N] DIR       index a folder of Markdown notes (recorded in config.toml)
  engram vault sync [--json] [DIR]           index what changed in every vault, or in DIR
  engram vault list [--json]                 the vaults, with their documents and unresolved links
  engram vault graph [--vault DIR] [--depth 2] [--json] DOC
                                             the documents DOC links to, its backlinks, its broken links
  engram vault hook install DIR              a git post-commit hook that syncs DIR after each commit
  engram vault hook uninstall DIR            remove that hook (and only it)

The server syncs every vault every 15 minutes (job vault-reconcile). Recall returns the
vaults' sections as results of kind "doc", with their file, heading and lines.
`

func runVault(ctx context.Context, m *Main, args []string) error {
	return m.runGroup(ctx, group{name: "vault", usage: vaultUsage, hint: true,
		missing: "want a subcommand: add, sync, list, graph or hook",
		unknown: "unknown vault subcommand %q (want add, sync, list, graph or hook)",
		subs: []command{{"add", "", runVaultAdd}, {"sync", "", runVaultSync}, {"list", "", runVaultList},
			{"graph", "", runVaultGraph}, {"hook", "", runVaultHook}}}, args)
}

// --- add ---

func runVaultAdd(ctx context.Context, m *Main, args []string) error {
	fs := m.newFlagSet("vault add", "vault add [--namespace N] DIR")
	ns := fs.String("namespace", engram.DefaultNamespace, "namespace of the vault's documents in recall")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return &usageError{msg: "want one folder (for example: engram vault add ~/notes)"}
	}
	if err := checkVaultNamespace(*ns); err != nil {
		return err
	}
	cfg, err := m.loadConfig()
	if err != nil {
		return err
	}
	added, err := server.AddVault(ctx, cfg, pos[0], *ns, m.Getenv, m.loadConfig, m.logger)
	if added.Root != "" {
		tprintf(m.Stdout, "added the vault %s (namespace %s) to %s\n", added.Root, *ns, added.Config)
	}
	if added.Served {
		tprintf(m.Stdout, "engram serve is running on this home and reads config.toml only when it starts:\n"+
			"restart it, then run `engram vault sync %s` (or wait for the vault-reconcile job) to index the vault\n", added.Root)
	}
	if err != nil {
		return err
	}
	return printSyncReports(m, added.Reports)
}

// checkVaultNamespace refuses a namespace a turn could not have.
func checkVaultNamespace(ns string) error {
	if bad := engram.NamespaceProblem(ns); bad != "" {
		return &usageError{msg: fmt.Sprintf("--namespace %q: %s", ns, bad)}
	}
	return nil
}

// --- sync ---

func runVaultSync(ctx context.Context, m *Main, args []string) error {
	fs := m.newFlagSet("vault sync", "vault sync [--json] [DIR]")
	asJSON := fs.Bool("json", false, "print JSON (the HTTP API's shape)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return &usageError{msg: "want at most one vault folder (none: every vault)"}
	}
	cfg, err := m.loadConfig()
	if err != nil {
		return err
	}
	root := ""
	if len(pos) == 1 {
		if root, err = filepath.Abs(pos[0]); err != nil {
			return err
		}
	}
	reports, err := server.SyncVaults(ctx, cfg, root, m.logger(cfg))
	if err != nil {
		return err
	}
	if printed, err := printList(m, *asJSON, "reports", reports, "no vaults: add one with `engram vault add DIR`"); printed {
		if err != nil {
			return err
		}
		return syncFailures(reports) // a failed vault's report is printed: the exit status says it failed
	}
	return printSyncReports(m, reports)
}

// maxUnresolvedShown bounds the unresolved links printed per vault.
const maxUnresolvedShown = 10

// printSyncReports prints what each sync did, and returns an error when a
// vault failed.
func printSyncReports(m *Main, reports []engram.VaultSyncReport) error {
	for _, r := range reports {
		tprintf(m.Stdout, "%s  [%s]\n", r.Vault, r.Namespace)
		if r.Error != "" {
			tprintf(m.Stdout, "  FAILED: %s\n", r.Error)
			if r.Files == 0 && len(r.Removed) == 0 {
				continue // it did nothing: no counts to print
			}
		}
		tprintf(m.Stdout, "  %s: %d indexed, %d removed, %d unchanged, %d skipped; %s; %.1f ms\n",
			plural(r.Files, "file"), len(r.Indexed), len(r.Removed), r.Unchanged, len(r.Skipped),
			plural(r.UnresolvedLinks, "unresolved link"), r.TookMS)
		for _, s := range r.Skipped {
			tprintf(m.Stdout, "  skipped %s: %s\n", s.Path, oneLine(s.Reason, 200))
		}
		for i, l := range r.Unresolved {
			if i == maxUnresolvedShown {
				tprintf(m.Stdout, "  ... and %d more unresolved (engram vault graph DOC shows a document's)\n", len(r.Unresolved)-i)
				break
			}
			tprintf(m.Stdout, "  unresolved %s:%d -> %s\n", l.FromPath, l.Line, l.Target)
		}
	}
	return syncFailures(reports)
}

func syncFailures(reports []engram.VaultSyncReport) error {
	failed := 0
	for _, r := range reports {
		if r.Error != "" {
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %s failed to sync", failed, plural(len(reports), "vault"))
	}
	return nil
}

// --- list ---

func runVaultList(ctx context.Context, m *Main, args []string) error {
	fs := m.newFlagSet("vault list", "vault list [--json]")
	asJSON := fs.Bool("json", false, "print JSON (the HTTP API's shape)")
	cfg, err := m.parseConfig(fs, args)
	if err != nil {
		return err
	}
	vs, err := server.Vaults(ctx, cfg, m.logger(cfg))
	if err != nil {
		return err
	}
	if printed, err := printList(m, *asJSON, "vaults", vs, "no vaults: add one with `engram vault add DIR`"); printed {
		return err
	}
	tw := tabwriter.NewWriter(m.Stdout, 0, 4, 2, ' ', 0)
	tprintln(tw, "VAULT\tNAMESPACE\tDOCS\tCHUNKS\tUNRESOLVED LINKS")
	var pending []engram.VaultStatus
	for _, v := range vs {
		if v.Pending != "" {
			tprintf(tw, "%s\t%s\t-\t-\t-\n", v.Path, v.Namespace)
			pending = append(pending, v)
			continue
		}
		tprintf(tw, "%s\t%s\t%d\t%d\t%d\n", v.Path, v.Namespace, v.Docs, v.Chunks, v.UnresolvedLinks)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, v := range pending {
		tprintf(m.Stdout, "%s: %s\n", v.Path, v.Pending)
	}
	return nil
}

// --- graph ---

func runVaultGraph(ctx context.Context, m *Main, args []string) error {
	fs := m.newFlagSet("vault graph", "vault graph [--vault DIR] [--depth 2] [--json] DOC")
	dir := fs.String("vault", "", "the vault of DOC (default: any indexed vault)")
	depth := fs.Int("depth", engram.DefaultGraphDepth, fmt.Sprintf("how far to follow links, 1 to %d", engram.MaxGraphDepth))
	asJSON := fs.Bool("json", false, "print JSON (the HTTP API's shape)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return &usageError{msg: "missing the document: a path in the vault, a title, an alias or a wiki-link name (for example: engram vault graph docs/adrs/0007.md)"}
	}
	if *depth < 1 || *depth > engram.MaxGraphDepth {
		return &usageError{msg: fmt.Sprintf("--depth %d: want 1 to %d", *depth, engram.MaxGraphDepth)}
	}
	cfg, err := m.loadConfig()
	if err != nil {
		return err
	}
	vb, err := m.openBackend(ctx, cfg)
	if err != nil {
		return err
	}
	defer vb.Close()
	g, err := server.DocGraph(ctx, vb, cfg, *dir, strings.Join(pos, " "), *depth)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(m, g)
	}
	tprintf(m.Stdout, "%s%s\n  %s in %s  [%s]\n", g.Doc.Title, typeTag(g.Doc.Type), g.Doc.Path, g.Doc.Vault, g.Doc.Namespace)
	tprintf(m.Stdout, "\nlinks to (depth %d):\n", *depth)
	tw := tabwriter.NewWriter(m.Stdout, 0, 4, 2, ' ', 0)
	if len(g.Linked) == 0 {
		tprintln(tw, "  none")
	}
	for _, d := range g.Linked {
		via := ""
		if d.Depth > 1 {
			via = "  via " + d.Via
		}
		tprintf(tw, "  %d\t%s\t%s%s%s\n", d.Depth, d.Path, d.Title, typeTag(d.Type), via)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	tprintln(m.Stdout, "\nlinked from:")
	if len(g.Backlinks) == 0 {
		tprintln(tw, "  none")
	}
	for _, d := range g.Backlinks {
		tprintf(tw, "  %s\t%s%s\n", d.Path, d.Title, typeTag(d.Type))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(g.Unresolved) > 0 {
		tprintln(m.Stdout, "\nunresolved links:")
		for _, l := range g.Unresolved {
			tprintf(tw, "  line %d\t%s\n", l.Line, l.Target)
		}
		return tw.Flush()
	}
	return nil
}

func typeTag(t string) string {
	if t == "" {
		return ""
	}
	return " (" + t + ")"
}

// --- hook ---

func runVaultHook(ctx context.Context, m *Main, args []string) error {
	g := group{name: "vault hook", missing: "want install DIR or uninstall DIR",
		unknown: "unknown hook subcommand %q (want install or uninstall)",
		usage: "Usage: engram vault hook install DIR\n       engram vault hook uninstall DIR\n\n" +
			"install adds to the git post-commit hook of DIR's repository a block that starts\n" +
			"`engram vault sync DIR` in the background, so a commit never waits for it. An existing hook\n" +
			"is kept (with a copy in post-commit.engram-backup); uninstall removes only engram's block.\n"}
	for _, sub := range []string{"install", "uninstall"} {
		g.subs = append(g.subs, command{name: sub, run: func(ctx context.Context, m *Main, args []string) error {
			return vaultHook(ctx, m, sub, args)
		}})
	}
	return m.runGroup(ctx, g, args)
}

// vaultHook installs or uninstalls (sub) the git hook of a vault.
func vaultHook(ctx context.Context, m *Main, sub string, args []string) error {
	fs := m.newFlagSet("vault hook "+sub, "vault hook "+sub+" DIR")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return &usageError{msg: fmt.Sprintf("want the vault's folder (for example: engram vault hook %s ~/notes)", sub)}
	}
	cfg, err := m.loadConfig()
	if err != nil {
		return err
	}
	return server.VaultHook(ctx, cfg, pos[0], sub == "install", m.Stdout)
}
