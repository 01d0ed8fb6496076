package vault

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/atomicfile"
)

// The git post-commit hook that syncs a vault after each commit: engram's
// block in the hook of the vault's repository, one block per vault (a
// repository may hold several), installed and removed without touching the
// rest of the hook. The hook is the repository's file, not the vault's:
// nothing here writes a note.

// The post-commit hook's file, and the copy of a hook that was there
// before engram added its block.
const (
	hookName   = "post-commit"
	hookBackup = "post-commit.engram-backup"
)

// GitHooksDir returns the hooks folder of the git work tree holding dir:
// what `git rev-parse --git-path hooks` says (core.hooksPath and linked
// worktrees included) when git is installed, else the hooks folder of the
// .git found above dir (a folder, or a worktree's file pointing to one).
func GitHooksDir(ctx context.Context, dir string) (string, error) {
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
			msg = strings.Join(strings.Fields(msg), " ")
			if r := []rune(msg); len(r) > 200 {
				msg = string(r[:199]) + "…"
			}
			return "", engram.Errorf(engram.EINVALID, "%s is not in a git work tree (git: %s)", dir, msg)
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

// HookBlock is the shell that syncs root after a commit: started in a
// subshell in the background, its output discarded, so the commit returns
// at once and a failing sync (the vault-reconcile job catches up) never
// fails the hook.
func HookBlock(exe, home, root string) string {
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

// InstallHook puts block, engram's block for the vault root (HookBlock),
// into the post-commit hook in the folder hooks: a new hook, or an existing
// one (kept, with a copy in post-commit.engram-backup) whose first lines
// gain the block, or the block refreshed where it was. A hook that does not
// run with a POSIX shell is EINVALID, with the block to add by hand. What
// it did is written to w.
func InstallHook(hooks, block, root string, w io.Writer) error {
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
	fmt.Fprintf(w, "installed the post-commit hook %s: each commit syncs %s in the background\n", path, root)
	if kept {
		fmt.Fprintf(w, "kept the hook that was there (a copy is in %s)\n", filepath.Join(filepath.Dir(path), hookBackup))
	}
	return nil
}

// UninstallHook removes engram's block for the vault root from the
// post-commit hook in hooks, and the hook itself when nothing else is left.
// What it did is written to w.
func UninstallHook(hooks, root string, w io.Writer) error {
	path := filepath.Join(hooks, hookName)
	if p, err := filepath.EvalSymlinks(path); err == nil {
		path = p
	}
	old, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(w, "no post-commit hook in %s: nothing to remove\n", hooks)
		return nil
	}
	if err != nil {
		return err
	}
	begin, end := hookMarkers(root)
	rest, at := removeBlock(string(old), begin, end)
	if at < 0 {
		fmt.Fprintf(w, "%s has no engram block for %s: nothing to remove\n", path, root)
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
		fmt.Fprintf(w, "removed %s (it held only engram's block)\n", path)
		return nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(path, []byte(rest), fi.Mode().Perm()); err != nil {
		return err
	}
	fmt.Fprintf(w, "removed engram's block for %s from %s; the rest of the hook is kept\n", root, path)
	return nil
}
