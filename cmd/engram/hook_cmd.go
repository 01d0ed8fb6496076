package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/claudecode"
	"github.com/engram-dev/engram/homedir"
	"github.com/engram-dev/engram/recall"
	"github.com/engram-dev/engram/server"
)

// defaultHookTimeout bounds the whole hook; Claude Code's own timeout is
// set to 10 s.
const defaultHookTimeout = 8 * time.Second

// runHook is `engram hook claude-code`. It never fails the agent: whatever
// goes wrong is logged to <home>/logs/hook.log (to stderr, for a home that
// holds another program's files), nothing is printed, and the exit status
// is 0 (a UserPromptSubmit hook exiting 2 would block the prompt).
func runHook(ctx context.Context, m *Main, args []string) error {
	flags := m.newFlagSet("hook", "hook claude-code [--namespace N] [--budget TOKENS] [--include-session]\n\nRun by Claude Code (see 'engram integrate claude-code'), with the hook's JSON on stdin.\nOn UserPromptSubmit it archives the transcript's new lines and prints the memories\nrecalled for the prompt; on Stop and SessionEnd it archives the new lines only.\nIt always exits 0; errors go to <home>/logs/hook.log.")
	ns := flags.String("namespace", "", "namespace of the turns and of recall (default cc-<project folder name>)")
	budget := flags.Int("budget", claudecode.DefaultHookBudget, "tokens of recalled context printed on a prompt; 0 prints none")
	inclSession := flags.Bool("include-session", false, "also recall the current session's own turns")
	// flag prints the usage on a bad flag too: keep it off stdout, which
	// Claude Code would hand to the model, unless --help asked for it.
	var usage bytes.Buffer
	stdout := m.Stdout
	m.Stdout = &usage
	pos, err := parse(flags, args)
	m.Stdout = stdout
	if errors.Is(err, flag.ErrHelp) {
		m.Stdout.Write(usage.Bytes())
		return err
	}
	if err == nil && (len(pos) != 1 || pos[0] != "claude-code") {
		err = fmt.Errorf("want 'engram hook claude-code', got %q", pos)
	}
	if err == nil && *budget < 0 {
		err = fmt.Errorf("--budget %d is negative", *budget)
	}
	var cfg server.Config
	if err == nil {
		cfg, err = m.loadConfig()
	}
	if err != nil {
		m.hookLog(cfg, "", err)
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, defaultHookTimeout)
	defer cancel()
	h := &claudecode.Hook{Home: cfg.Home, Limits: cfg.Limits(), Namespace: *ns, Budget: *budget,
		IncludeSession: *inclSession, Pack: recall.Pack}
	h.Log = func(err error) { m.hookLog(cfg, h.In.HookEventName, err) }
	out, err := server.RunHook(ctx, cfg, h, m.Stdin)
	if err != nil {
		h.Log(err)
		return nil
	}
	if out != "" {
		fmt.Fprint(m.Stdout, termText(out))
	}
	return nil
}

// hookLog appends one line about err to <home>/logs/hook.log; it cannot
// fail the hook. Into a home that holds another program's files it writes
// nothing: the line goes to stderr, which Claude Code shows in its
// transcript's verbose mode.
func (m *Main) hookLog(cfg server.Config, event string, err error) {
	if cfg.Home == "" {
		cfg.Home, _ = m.resolveHome()
	}
	if herr := homedir.Check(cfg.Home); herr != nil {
		tprintf(m.Stderr, "engram hook: %s\n", engram.ErrorText(err))
		return
	}
	claudecode.LogHook(cfg.Home, event, err)
}
