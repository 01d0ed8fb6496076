package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/claudecode"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/internal/textutil"
	"github.com/engram-dev/engram/recall"
)

// Hook defaults.
const (
	defaultHookBudget  = 1500            // tokens of context printed on a prompt
	defaultHookK       = 20              // results asked for before the current session's are dropped
	defaultHookTimeout = 8 * time.Second // the whole hook; Claude Code's own timeout is set to 10 s
	hookStdinMax       = 16 << 20        // bytes of hook input read
)

// runHook is `engram hook claude-code`. It never fails the agent: whatever
// goes wrong is logged to <home>/logs/hook.log, nothing is printed, and the
// exit status is 0 (a UserPromptSubmit hook exiting 2 would block the
// prompt).
func runHook(ctx context.Context, m *Main, args []string) error {
	flags := m.newFlagSet("hook", "hook claude-code [--namespace N] [--budget TOKENS] [--include-session]\n\nRun by Claude Code (see 'engram integrate claude-code'), with the hook's JSON on stdin.\nOn UserPromptSubmit it archives the transcript's new lines and prints the memories\nrecalled for the prompt; on Stop and SessionEnd it archives the new lines only.\nIt always exits 0; errors go to <home>/logs/hook.log.")
	ns := flags.String("namespace", "", "namespace of the turns and of recall (default cc-<project folder name>)")
	budget := flags.Int("budget", defaultHookBudget, "tokens of recalled context printed on a prompt; 0 prints none")
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
	var cfg engine.Config
	if err == nil {
		cfg, err = m.loadConfig()
	}
	if err != nil {
		m.hookLog(cfg, "", err)
		return nil
	}
	h := &hook{m: m, cfg: cfg, namespace: *ns, budget: *budget, inclSession: *inclSession}
	ctx, cancel := context.WithTimeout(ctx, defaultHookTimeout)
	defer cancel()
	out, err := h.run(ctx)
	if err != nil {
		m.hookLog(cfg, h.in.HookEventName, err)
		return nil
	}
	if out != "" {
		fmt.Fprint(m.Stdout, out)
	}
	return nil
}

type hook struct {
	m           *Main
	cfg         engine.Config
	namespace   string
	budget      int
	inclSession bool
	in          claudecode.HookInput
}

// run returns what to print. Archiving errors are logged and recall still
// runs; a recall error returns nothing to print.
func (h *hook) run(ctx context.Context) (string, error) {
	b, err := io.ReadAll(io.LimitReader(h.m.Stdin, hookStdinMax))
	if err != nil {
		return "", fmt.Errorf("read stdin: %w", err)
	}
	if err := json.Unmarshal(b, &h.in); err != nil {
		return "", fmt.Errorf("hook input is not JSON: %w", err)
	}
	if h.namespace == "" {
		h.namespace = claudecode.Namespace(h.in.CWD)
	}
	be, err := h.backend(ctx)
	if err != nil {
		return "", err
	}
	defer be.Close()
	if h.in.TranscriptPath != "" {
		if err := h.ingest(ctx, be); err != nil {
			h.m.hookLog(h.cfg, h.in.HookEventName, err)
		}
	}
	if h.in.HookEventName != "UserPromptSubmit" || h.budget == 0 || strings.TrimSpace(h.in.Prompt) == "" {
		return "", nil
	}
	return h.recall(ctx, be)
}

// backend is the running server when one answers, else the home opened
// here, logging to the hook log.
func (h *hook) backend(ctx context.Context) (backend, error) {
	if c := discoverServer(ctx, h.cfg); c != nil {
		return c, nil
	}
	lf, err := claudecode.OpenHookLog(h.cfg.Home)
	if err != nil {
		return nil, err
	}
	e, err := engine.Open(ctx, h.cfg, slog.New(slog.NewTextHandler(lf, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		lf.Close()
		return nil, err
	}
	return &closeBoth{e, lf}, nil
}

type closeBoth struct {
	backend
	f *os.File
}

func (c *closeBoth) Close() error {
	err := c.backend.Close()
	c.f.Close()
	return err
}

func (h *hook) ingest(ctx context.Context, be backend) error {
	g, err := claudecode.NewIngester(be, h.cfg.Home, h.cfg.Limits(), h.namespace)
	if err != nil {
		h.m.hookLog(h.cfg, h.in.HookEventName, err)
	}
	g.Warn = func(path string, end int64, err error) {
		h.m.hookLog(h.cfg, h.in.HookEventName, fmt.Errorf("%s: line ending at byte %d skipped: %w", path, end, err))
	}
	path := h.in.TranscriptPath
	if strings.HasPrefix(path, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			path = filepath.Join(home, path[2:])
		}
	}
	if err := g.Transcript(ctx, path); err != nil {
		return err
	}
	return g.Offsets.Save()
}

func (h *hook) recall(ctx context.Context, be backend) (string, error) {
	req := engram.RecallRequest{
		Namespace: h.namespace,
		Query:     textutil.CutBytes(h.in.Prompt, engram.MaxQueryBytes),
		Mode:      engram.ModeAuto,
		K:         defaultHookK,
	}
	resp, err := be.Recall(ctx, req)
	if err != nil {
		return "", fmt.Errorf("recall: %w", err)
	}
	results := resp.Results[:0:0]
	for _, r := range resp.Results {
		if h.inclSession || r.Session != h.in.SessionID {
			results = append(results, r)
		}
	}
	block, used, _ := recall.Pack(results, h.budget)
	if block == "" {
		return "", nil
	}
	trigger := ""
	if resp.Trigger != "" {
		trigger = fmt.Sprintf(" trigger=%q", resp.Trigger)
	}
	return fmt.Sprintf("<engram-memory mode=%q%s tokens=\"%d\">\n%s\n</engram-memory>\n", resp.Mode, trigger, used, block), nil
}

// hookLog appends one line about err to <home>/logs/hook.log; it cannot
// fail the hook.
func (m *Main) hookLog(cfg engine.Config, event string, err error) {
	if cfg.Home == "" {
		cfg.Home, _ = m.resolveHome()
	}
	f, ferr := claudecode.OpenHookLog(cfg.Home)
	if ferr != nil {
		return
	}
	defer f.Close()
	slog.New(slog.NewTextHandler(f, nil)).Error("claude-code hook", "event", event, "err", err)
}
