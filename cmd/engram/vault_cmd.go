package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/httpapi"
	"github.com/engram-dev/engram/internal/atomicfile"
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
	if len(args) == 0 {
		return &usageError{msg: "want a subcommand: add, sync, list, graph or hook"}
	}
	var run func(context.Context, *Main, []string) error
	switch args[0] {
	case "add":
		run = runVaultAdd
	case "sync":
		run = runVaultSync
	case "list":
		run = runVaultList
	case "graph":
		run = runVaultGraph
	case "hook":
		run = runVaultHook
	case "-h", "--help", "help":
		fmt.Fprint(m.Stdout, vaultUsage)
		return flag.ErrHelp
	default:
		return &usageError{msg: fmt.Sprintf("unknown vault subcommand %q (want add, sync, list, graph or hook)", args[0])}
	}
	err := run(ctx, m, args[1:])
	var ue *usageError
	if errors.As(err, &ue) && ue.cmd == "" {
		ue.cmd = "vault " + args[0] // the hint names the subcommand's --help
	}
	return err
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
	root, err := vaultDir(pos[0])
	if err != nil {
		return err
	}
	for _, v := range cfg.Vaults {
		old := filepath.Clean(v.Path)
		switch {
		case old == root:
			return engram.Errorf(engram.ECONFLICT, "%s is already a vault (namespace %s)", root, v.NamespaceOrDefault())
		case within(old, root):
			return engram.Errorf(engram.ECONFLICT, "%s is inside the vault %s: its notes are indexed already", root, old)
		case within(root, old):
			return engram.Errorf(engram.ECONFLICT, "%s holds the vault %s: its notes would be indexed twice", root, old)
		}
	}
	path, err := m.appendVaultConfig(cfg.Home, engine.VaultConfig{Path: root, Namespace: *ns})
	if err != nil {
		return err
	}
	fmt.Fprintf(m.Stdout, "added the vault %s (namespace %s) to %s\n", root, *ns, path)
	if c := discoverServer(ctx, cfg); c != nil {
		// The server read config.toml when it started, and holds the home.
		fmt.Fprintf(m.Stdout, "engram serve is running on this home and reads config.toml only when it starts:\n"+
			"restart it, then run `engram vault sync %s` (or wait for the vault-reconcile job) to index the vault\n", root)
		return nil
	}
	if cfg, err = m.loadConfig(); err != nil {
		return err
	}
	e, err := engine.Open(ctx, cfg, m.logger(cfg))
	if err != nil {
		return fmt.Errorf("the vault is recorded, but could not be indexed now (run `engram vault sync %s` later): %w", root, err)
	}
	defer e.Close()
	reports, err := e.SyncVaults(ctx, root)
	if err != nil {
		return err
	}
	return printSyncReports(m, reports)
}

// vaultDir returns dir absolute and cleaned, the form config.toml holds,
// once it is known to be a folder.
func vaultDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	abs = filepath.Clean(abs)
	if strings.ContainsAny(abs, "\n\r") {
		return "", engram.Errorf(engram.EINVALID, "%q: a folder name with a line break cannot be a vault", abs)
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", engram.Errorf(engram.ENOTFOUND, "%s does not exist: give the folder of your Markdown notes", abs)
	case err != nil:
		return "", err
	case !fi.IsDir():
		return "", engram.Errorf(engram.EINVALID, "%s is a file, not a folder: give the folder of your Markdown notes", abs)
	}
	return abs, nil
}

// checkVaultNamespace refuses a namespace a turn could not have.
func checkVaultNamespace(ns string) error {
	bad := ""
	switch {
	case ns == "" || ns == engram.AllNamespaces:
		bad = "name one namespace"
	case !utf8.ValidString(ns):
		bad = "it is not valid UTF-8"
	case len(ns) > engram.DefaultMaxFieldBytes:
		bad = fmt.Sprintf("it is over %d bytes", engram.DefaultMaxFieldBytes)
	case strings.TrimSpace(ns) != ns:
		bad = "it begins or ends with white space"
	case strings.IndexFunc(ns, unicode.IsControl) >= 0:
		bad = "it holds a control character"
	}
	if bad != "" {
		return &usageError{msg: fmt.Sprintf("--namespace %q: %s", ns, bad)}
	}
	return nil
}

// appendVaultConfig records v in <home>/config.toml by appending a
// [[vaults]] table: the user's text is never rewritten. The file is created
// (0600) if missing. If the result does not load (an inline `vaults = [...]`
// in the file, say), the file gets its original bytes back.
func (m *Main) appendVaultConfig(home string, v engine.VaultConfig) (string, error) {
	if err := os.MkdirAll(home, 0o700); err != nil {
		return "", fmt.Errorf("create home: %w", err)
	}
	path := filepath.Join(home, engine.ConfigFile)
	orig, err := os.ReadFile(path)
	existed := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return path, err
	}
	var b strings.Builder
	if len(orig) > 0 {
		if orig[len(orig)-1] != '\n' {
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	b.WriteString("# added by `engram vault add`\n[[vaults]]\n")
	b.WriteString("path = " + tomlString(v.Path) + "\n")
	b.WriteString("namespace = " + tomlString(v.Namespace) + "\n")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return path, err
	}
	_, werr := f.WriteString(b.String())
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = checkVaultConfig(m, v)
	}
	if werr == nil {
		return path, nil
	}
	// Put the file back as it was.
	var rerr error
	if existed {
		rerr = os.Truncate(path, int64(len(orig)))
	} else {
		rerr = os.Remove(path)
	}
	if rerr != nil {
		return path, fmt.Errorf("%s: adding the vault failed (%v), and restoring the file failed too: %w; remove the last [[vaults]] table by hand", path, werr, rerr)
	}
	return path, fmt.Errorf("%s left unchanged: adding the vault failed: %w", path, werr)
}

// checkVaultConfig loads the configuration again, as every command will,
// and checks that it holds v.
func checkVaultConfig(m *Main, v engine.VaultConfig) error {
	cfg, err := m.loadConfig()
	if err != nil {
		return err
	}
	for _, got := range cfg.Vaults {
		if got == v {
			return nil
		}
	}
	return fmt.Errorf("the appended [[vaults]] table does not read back as path %q, namespace %q", v.Path, v.Namespace)
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
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
		abs, err := filepath.Abs(pos[0])
		if err != nil {
			return err
		}
		root = filepath.Clean(abs)
	} else if len(cfg.Vaults) == 0 {
		if *asJSON {
			return printJSON(m, map[string]any{"reports": []engram.VaultSyncReport{}})
		}
		fmt.Fprintln(m.Stdout, "no vaults: add one with `engram vault add DIR`")
		return nil
	}
	vb, err := m.openBackend(ctx, cfg)
	if err != nil {
		return err
	}
	defer vb.Close()
	reports, err := vb.SyncVaults(ctx, root)
	if err != nil {
		if _, ok := vb.(*httpapi.Client); ok && engram.ErrorCode(err) == engram.ENOTFOUND && cfg.HasVault(root) {
			return engram.Errorf(engram.ENOTFOUND, "%s was added after `engram serve` started: restart the server to sync it", root)
		}
		return err
	}
	if *asJSON {
		if err := printJSON(m, map[string]any{"reports": nonNil(reports)}); err != nil {
			return err
		}
		return syncFailures(reports)
	}
	return printSyncReports(m, reports)
}

// maxUnresolvedShown bounds the unresolved links printed per vault.
const maxUnresolvedShown = 10

// printSyncReports prints what each sync did, and returns an error when a
// vault failed.
func printSyncReports(m *Main, reports []engram.VaultSyncReport) error {
	for _, r := range reports {
		fmt.Fprintf(m.Stdout, "%s  [%s]\n", r.Vault, r.Namespace)
		if r.Error != "" {
			fmt.Fprintf(m.Stdout, "  FAILED: %s\n", r.Error)
			if r.Files == 0 && len(r.Removed) == 0 {
				continue // it did nothing: no counts to print
			}
		}
		fmt.Fprintf(m.Stdout, "  %s: %d indexed, %d removed, %d unchanged, %d skipped; %s; %.1f ms\n",
			plural(r.Files, "file"), len(r.Indexed), len(r.Removed), r.Unchanged, len(r.Skipped),
			plural(r.UnresolvedLinks, "unresolved link"), r.TookMS)
		for _, s := range r.Skipped {
			fmt.Fprintf(m.Stdout, "  skipped %s: %s\n", s.Path, oneLine(s.Reason, 200))
		}
		for i, l := range r.Unresolved {
			if i == maxUnresolvedShown {
				fmt.Fprintf(m.Stdout, "  ... and %d more unresolved (engram vault graph DOC shows a document's)\n", len(r.Unresolved)-i)
				break
			}
			fmt.Fprintf(m.Stdout, "  unresolved %s:%d -> %s\n", l.FromPath, l.Line, l.Target)
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
	if err := parseNone(fs, args); err != nil {
		return err
	}
	cfg, err := m.loadConfig()
	if err != nil {
		return err
	}
	var vs []engram.VaultStatus
	if len(cfg.Vaults) > 0 || discoverServer(ctx, cfg) != nil {
		vb, err := m.openBackend(ctx, cfg)
		if err != nil {
			return err
		}
		defer vb.Close()
		if vs, err = vb.Vaults(ctx); err != nil {
			return err
		}
	}
	if *asJSON {
		return printJSON(m, map[string]any{"vaults": nonNil(vs)})
	}
	if len(vs) == 0 {
		fmt.Fprintln(m.Stdout, "no vaults: add one with `engram vault add DIR`")
		return nil
	}
	tw := tabwriter.NewWriter(m.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "VAULT\tNAMESPACE\tDOCS\tCHUNKS\tUNRESOLVED LINKS")
	for _, v := range vs {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\n", v.Path, v.Namespace, v.Docs, v.Chunks, v.UnresolvedLinks)
	}
	return tw.Flush()
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
		return &usageError{msg: "missing the document: a path in the vault, a title or an alias (for example: engram vault graph docs/adrs/0007.md)"}
	}
	if *depth < 1 || *depth > engram.MaxGraphDepth {
		return &usageError{msg: fmt.Sprintf("--depth %d: want 1 to %d", *depth, engram.MaxGraphDepth)}
	}
	cfg, err := m.loadConfig()
	if err != nil {
		return err
	}
	doc, root := strings.Join(pos, " "), ""
	if *dir != "" {
		abs, err := filepath.Abs(*dir)
		if err != nil {
			return err
		}
		root = filepath.Clean(abs)
	}
	if filepath.IsAbs(doc) {
		// A file of a vault, named by its full path.
		for _, v := range cfg.Vaults {
			vr := filepath.Clean(v.Path)
			if within(vr, filepath.Clean(doc)) && (root == "" || root == vr) {
				rel, _ := filepath.Rel(vr, filepath.Clean(doc))
				doc, root = filepath.ToSlash(rel), vr
				break
			}
		}
	}
	vb, err := m.openBackend(ctx, cfg)
	if err != nil {
		return err
	}
	defer vb.Close()
	g, err := vb.DocGraph(ctx, root, doc, *depth)
	if err != nil {
		return err
	}
	g.Linked, g.Backlinks, g.Unresolved = nonNil(g.Linked), nonNil(g.Backlinks), nonNil(g.Unresolved)
	if *asJSON {
		return printJSON(m, g)
	}
	fmt.Fprintf(m.Stdout, "%s%s\n  %s in %s  [%s]\n", g.Doc.Title, typeTag(g.Doc.Type), g.Doc.Path, g.Doc.Vault, g.Doc.Namespace)
	fmt.Fprintf(m.Stdout, "\nlinks to (depth %d):\n", *depth)
	tw := tabwriter.NewWriter(m.Stdout, 0, 4, 2, ' ', 0)
	if len(g.Linked) == 0 {
		fmt.Fprintln(tw, "  none")
	}
	for _, d := range g.Linked {
		via := ""
		if d.Depth > 1 {
			via = "  via " + d.Via
		}
		fmt.Fprintf(tw, "  %d\t%s\t%s%s%s\n", d.Depth, d.Path, d.Title, typeTag(d.Type), via)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(m.Stdout, "\nlinked from:")
	if len(g.Backlinks) == 0 {
		fmt.Fprintln(tw, "  none")
	}
	for _, d := range g.Backlinks {
		fmt.Fprintf(tw, "  %s\t%s%s\n", d.Path, d.Title, typeTag(d.Type))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(g.Unresolved) > 0 {
		fmt.Fprintln(m.Stdout, "\nunresolved links:")
		for _, l := range g.Unresolved {
			fmt.Fprintf(tw, "  line %d\t%s\n", l.Line, l.Target)
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

// The post-commit hook's file, and the copy of a hook that was there
// before engram added its block.
const (
	hookName   = "post-commit"
	hookBackup = "post-commit.engram-backup"
)

func runVaultHook(ctx context.Context, m *Main, args []string) error {
	if len(args) == 0 {
		return &usageError{msg: "want install DIR or uninstall DIR"}
	}
	sub := args[0]
	switch sub {
	case "install", "uninstall":
	case "-h", "--help", "help":
		fmt.Fprint(m.Stdout, "Usage: engram vault hook install DIR\n       engram vault hook uninstall DIR\n\n"+
			"install adds to the git post-commit hook of DIR's repository a block that starts\n"+
			"`engram vault sync DIR` in the background, so a commit never waits for it. An existing hook\n"+
			"is kept (with a copy in post-commit.engram-backup); uninstall removes only engram's block.\n")
		return flag.ErrHelp
	default:
		return &usageError{msg: fmt.Sprintf("unknown hook subcommand %q (want install or uninstall)", sub)}
	}
	fs := m.newFlagSet("vault hook "+sub, "vault hook "+sub+" DIR")
	pos, err := parse(fs, args[1:])
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
	root, err := vaultDir(pos[0])
	if err != nil {
		return err
	}
	hooks, err := gitHooksDir(ctx, root)
	if err != nil {
		return err
	}
	if sub == "uninstall" {
		return uninstallHook(m, hooks, root)
	}
	if !cfg.HasVault(root) {
		return engram.Errorf(engram.ENOTFOUND, "%s is not a configured vault: run `engram vault add %s` first", root, root)
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the engram binary: %w", err)
	}
	return installHook(m, hooks, hookBlock(exe, cfg.Home, root), root)
}

// gitHooksDir returns the hooks folder of the git work tree holding dir:
// what `git rev-parse --git-path hooks` says (core.hooksPath and linked
// worktrees included) when git is installed, else the hooks folder of the
// .git found above dir (a folder, or a worktree's file pointing to one).
func gitHooksDir(ctx context.Context, dir string) (string, error) {
	if git, err := exec.LookPath("git"); err == nil {
		cmd := exec.CommandContext(ctx, git, "-C", dir, "rev-parse", "--is-inside-work-tree", "--git-path", "hooks")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if err != nil || len(lines) != 2 || lines[0] != "true" {
			msg := strings.TrimSpace(stderr.String())
			if msg == "" && err != nil {
				msg = err.Error()
			}
			if msg == "" {
				msg = "not inside a work tree"
			}
			return "", engram.Errorf(engram.EINVALID, "%s is not in a git work tree (git: %s)", dir, oneLine(msg, 200))
		}
		hooks := strings.TrimSpace(lines[1])
		if !filepath.IsAbs(hooks) {
			hooks = filepath.Join(dir, hooks)
		}
		return filepath.Clean(hooks), nil
	}
	for d := dir; ; {
		dotGit := filepath.Join(d, ".git")
		fi, err := os.Stat(dotGit)
		switch {
		case err == nil && fi.IsDir():
			return filepath.Join(dotGit, "hooks"), nil
		case err == nil:
			return worktreeHooks(d, dotGit)
		case !errors.Is(err, fs.ErrNotExist):
			return "", err
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", engram.Errorf(engram.EINVALID, "%s is not in a git work tree (no .git above it)", dir)
		}
		d = parent
	}
}

// worktreeHooks reads a .git file ("gitdir: PATH", a linked worktree or a
// submodule) and returns the hooks folder of the repository it points to.
func worktreeHooks(top, dotGit string) (string, error) {
	b, err := os.ReadFile(dotGit)
	if err != nil {
		return "", err
	}
	gitDir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return "", engram.Errorf(engram.EINVALID, "%s is not a gitdir file", dotGit)
	}
	gitDir = strings.TrimSpace(gitDir)
	if !filepath.IsAbs(gitDir) {
		gitDir = filepath.Join(top, gitDir)
	}
	common := gitDir
	if c, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		common = strings.TrimSpace(string(c))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
	}
	return filepath.Join(filepath.Clean(common), "hooks"), nil
}

// hookMarkers are the comment lines around engram's block for the vault
// root: one block per vault, so a repository may hold several vaults.
func hookMarkers(root string) (begin, end string) {
	return "# >>> engram vault sync " + root + " >>>", "# <<< engram vault sync " + root + " <<<"
}

// hookBlock is the shell that syncs root after a commit: started in a
// subshell in the background, its output discarded, so the commit returns
// at once and a failing sync (the vault-reconcile job catches up) never
// fails the hook.
func hookBlock(exe, home, root string) string {
	begin, end := hookMarkers(root)
	return begin + "\n" +
		"# Added by `engram vault hook install`: syncs this vault into engram after each commit,\n" +
		"# in the background. `engram vault hook uninstall " + root + "` removes this block.\n" +
		"( " + shQuote(exe) + " --home " + shQuote(home) + " vault sync " + shQuote(root) + " </dev/null >/dev/null 2>&1 & )\n" +
		end + "\n"
}

// shQuote quotes s for sh.
func shQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// posixShells are the interpreters engram's block runs under.
var posixShells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "ash": true}

// shellHook reports whether a hook's first line runs it with a POSIX
// shell: a shebang naming one, or none (git runs such a file with sh).
func shellHook(first string) (string, bool) {
	rest, ok := strings.CutPrefix(first, "#!")
	if !ok {
		return "", true
	}
	f := strings.Fields(rest)
	if len(f) == 0 {
		return "", true
	}
	prog := filepath.Base(f[0])
	if prog == "env" {
		prog = ""
		for _, a := range f[1:] {
			if !strings.HasPrefix(a, "-") && !strings.Contains(a, "=") {
				prog = filepath.Base(a)
				break
			}
		}
	}
	return prog, posixShells[prog]
}

// removeBlock returns text without the lines from begin to end (markers
// included), and the offset where they were (-1: not found).
func removeBlock(text, begin, end string) (string, int) {
	lines := strings.SplitAfter(text, "\n")
	from, to := -1, -1
	for i, l := range lines {
		switch strings.TrimRight(l, "\r\n") {
		case begin:
			if from < 0 {
				from = i
			}
		case end:
			if from >= 0 && to < 0 {
				to = i
			}
		}
	}
	if from < 0 || to < 0 {
		return text, -1
	}
	head := strings.Join(lines[:from], "")
	return head + strings.Join(lines[to+1:], ""), len(head)
}

func installHook(m *Main, hooks, block, root string) error {
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		return err
	}
	path := filepath.Join(hooks, hookName)
	if p, err := filepath.EvalSymlinks(path); err == nil {
		path = p // a hook managed elsewhere: edit the file it points to
	}
	old, err := os.ReadFile(path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	mode := fs.FileMode(0o755)
	if exists {
		fi, err := os.Stat(path)
		if err != nil {
			return err
		}
		mode = fi.Mode().Perm() | 0o111
	}
	text, kept := string(old), false
	begin, end := hookMarkers(root)
	var out string
	switch rest, at := removeBlock(text, begin, end); {
	case strings.TrimSpace(text) == "":
		out = "#!/bin/sh\n" + block
	case at >= 0:
		// Installed before: put the block back where it was, refreshed.
		out = rest[:at] + block + rest[at:]
	default:
		first, _, _ := strings.Cut(text, "\n")
		if prog, ok := shellHook(strings.TrimRight(first, "\r")); !ok {
			return engram.Errorf(engram.EINVALID, "%s runs with %s, not sh: add this to it yourself to sync the vault after each commit:\n%s",
				path, prog, block)
		}
		backup := filepath.Join(filepath.Dir(path), hookBackup)
		if _, err := os.Lstat(backup); errors.Is(err, fs.ErrNotExist) {
			if err := atomicfile.WriteFile(backup, old, mode); err != nil {
				return fmt.Errorf("back up %s: %w", path, err)
			}
		}
		// Right after the shebang: an `exit` at the end of the hook would
		// never reach a block appended there.
		if strings.HasPrefix(text, "#!") {
			i := strings.Index(text, "\n")
			if i < 0 {
				text, i = text+"\n", len(text)
			}
			out = text[:i+1] + block + text[i+1:]
		} else {
			out = block + text
		}
		kept = true
	}
	if err := atomicfile.WriteFile(path, []byte(out), mode); err != nil {
		return err
	}
	fmt.Fprintf(m.Stdout, "installed the post-commit hook %s: each commit syncs %s in the background\n", path, root)
	if kept {
		fmt.Fprintf(m.Stdout, "kept the hook that was there (a copy is in %s)\n", filepath.Join(filepath.Dir(path), hookBackup))
	}
	return nil
}

func uninstallHook(m *Main, hooks, root string) error {
	path := filepath.Join(hooks, hookName)
	if p, err := filepath.EvalSymlinks(path); err == nil {
		path = p
	}
	old, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(m.Stdout, "no post-commit hook in %s: nothing to remove\n", hooks)
		return nil
	}
	if err != nil {
		return err
	}
	begin, end := hookMarkers(root)
	rest, at := removeBlock(string(old), begin, end)
	if at < 0 {
		fmt.Fprintf(m.Stdout, "%s has no engram block for %s: nothing to remove\n", path, root)
		return nil
	}
	backup := filepath.Join(filepath.Dir(path), hookBackup)
	if b, err := os.ReadFile(backup); err == nil && string(b) == rest {
		// The hook is back to what it was before engram: the copy is spare.
		os.Remove(backup)
	}
	first, body, _ := strings.Cut(rest, "\n")
	if strings.TrimSpace(rest) == "" || (strings.HasPrefix(first, "#!") && strings.TrimSpace(body) == "") {
		if err := os.Remove(path); err != nil {
			return err
		}
		fmt.Fprintf(m.Stdout, "removed %s (it held only engram's block)\n", path)
		return nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(path, []byte(rest), fi.Mode().Perm()); err != nil {
		return err
	}
	fmt.Fprintf(m.Stdout, "removed engram's block for %s from %s; the rest of the hook is kept\n", root, path)
	return nil
}

// --- the engine's side ---

// --- the vault routes of the HTTP API ---

// within reports whether path lies inside the folder dir (both cleaned).
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
