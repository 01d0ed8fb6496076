// Command engram is a local-first long-term memory service for AI agents.
//
// Run `engram help` for the commands.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/engram-dev/engram"
)

// Exit statuses.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

// usageError is a mistake in the command line: printed on one line with a
// hint, exit status 2.
type usageError struct {
	cmd string
	msg string
}

func (e *usageError) Error() string { return e.msg }

// command is one subcommand.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, m *Main, args []string) error
}

func commands() []command {
	return []command{
		{"serve", "run the HTTP API, the MCP endpoint and the scheduled jobs", runServe},
		{"ingest", "archive turns from a JSONL file or stdin", runIngest},
		{"recall", "search what engram remembers", runRecall},
		{"stats", "counts per namespace and layer", runStats},
		{"memories", "list or search the L1 memories (facts, decisions, preferences, plans, events)", runMemories},
		{"scenes", "list or search the L2 scenes of conversations", runScenes},
		{"mcp", "serve the MCP tools (remember, recall, kg, memories, status) on stdio, for agents", runMCP},
		{"persona", "the L3 profile of a speaker, or of every speaker", runPersona},
		{"kg", "an entity's knowledge-graph triples, now, as of a time, or as a timeline", runKG},
		{"reembed", "embed every turn with another model, then switch recall to it", runReembed},
		{"rebuild", "rebuild every index from the archive and the vaults into a new palace, then swap it in", runRebuild},
		{"repair", "write damaged archive lines again from the palace's copies of their turns", runRepair},
		{"archive", "the PostgreSQL archive: export --to DIR writes it as JSONL day files", runArchive},
		{"migrate", "copy a home into an empty PostgreSQL database (--to postgres://...) or back (--from postgres://... --to DIR)", runMigrate},
		{"vault", "Markdown vaults: add, sync, list, graph, hook install|uninstall", runVault},
		{"jobs", "scheduled jobs: status, or run --due|--all|NAME", runJobs},
		{"doctor", "check the archive, the indexes, the vectors and the servers engram uses; name the fixes", runDoctor},
		{"reindex", "rebuild the vector index from the vectors in SQLite (reindex vectors [--reembed])", runReindex},
		{"launchd", "keep engram running on macOS: launchd agents, install|uninstall|print", runLaunchd},
		{"systemd", "keep engram running on Linux: systemd user units, install|uninstall|print", runSystemd},
		{"backup", "write a consistent copy of the home into a folder, while serving", runBackup},
		{"restore", "restore a backup into a home, checking every file's SHA-256", runRestore},
		{"forget", "forget turns everywhere: forget --turn ID | --session S | --namespace N [--yes]", runForget},
		{"redact", "replace a span in turns everywhere: redact --turn ID --span TEXT [--marker M] [--yes]", runRedact},
		{"correct", "correct a memory or a graph fact: correct --memory ID | --fact ID --wrong | --text T | --object O | --restore", runCorrect},
		{"import", "archive conversations from elsewhere: import claude-code|chatgpt|jsonl", runImport},
		{"hook", "run as a Claude Code hook: archive the transcript, print recalled memories (hook claude-code)", runHook},
		{"integrate", "add engram's hooks to Claude Code's settings (integrate claude-code [--project DIR] [--print] [--remove])", runIntegrate},
		{"bench", "measure engram: retrieval quality and latency on a data set", runBench},
		{"version", "print the version", runVersion},
	}
}

// Main holds what every subcommand shares: the streams and the global flags.
type Main struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string

	home string // --home, before or after the subcommand
}

// gcPercent is the garbage collector's goal when GOGC is not set: the heap
// grows to 1.5 times what is live instead of twice: much less memory for a
// little more CPU (docs/benchmarks.md, "Memory and the garbage collector's
// goal").
const gcPercent = 50

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	m := &Main{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := m.Run(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}

// Run runs the command line args and returns the exit status.
func (m *Main) Run(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("engram", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&m.home, "home", "", "data folder (default $ENGRAM_HOME or ~/.engram)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			m.usage(m.Stdout)
			return exitOK
		}
		return m.fail(&usageError{msg: err.Error()})
	}
	args = fs.Args()
	if len(args) == 0 {
		m.usage(m.Stderr)
		return exitUsage
	}
	name, rest := args[0], args[1:]
	if name == "help" || name == "-h" || name == "--help" {
		if len(rest) > 0 {
			return m.Run(ctx, []string{rest[0], "--help"})
		}
		m.usage(m.Stdout)
		return exitOK
	}
	for _, c := range commands() {
		if c.name == name {
			err := c.run(ctx, m, rest)
			if errors.Is(err, flag.ErrHelp) {
				return exitOK
			}
			var ue *usageError
			if errors.As(err, &ue) && ue.cmd == "" {
				ue.cmd = name
			}
			return m.fail(err)
		}
	}
	return m.fail(&usageError{msg: fmt.Sprintf("unknown command %q", name)})
}

func (m *Main) fail(err error) int {
	if err == nil {
		return exitOK
	}
	var ue *usageError
	if errors.As(err, &ue) {
		if ue.cmd == "" {
			tprintf(m.Stderr, "engram: %s\nRun 'engram help' for usage.\n", ue.msg)
		} else {
			tprintf(m.Stderr, "engram %s: %s\nRun 'engram %s --help' for usage.\n", ue.cmd, ue.msg, ue.cmd)
		}
		return exitUsage
	}
	if errors.Is(err, context.Canceled) {
		fmt.Fprintln(m.Stderr, "engram: interrupted")
		return exitFail
	}
	tprintf(m.Stderr, "engram: %s\n", engram.ErrorText(err))
	return exitFail
}

func (m *Main) usage(w io.Writer) {
	fmt.Fprint(w, `engram is a local-first long-term memory service for AI agents.

Usage:
  engram [--home DIR] <command> [flags] [args]

Commands:
`)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, `
The data folder is --home, else $ENGRAM_HOME, else ~/.engram. Settings come
from <home>/config.toml, overridden by ENGRAM_* environment variables,
overridden by flags.

Run 'engram <command> --help' for a command's flags.
`)
}

// newFlagSet returns a FlagSet for a subcommand that prints its help on
// --help and registers the shared --home flag. A flag without a usage
// text is hidden from the help.
func (m *Main) newFlagSet(name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet("engram "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&m.home, "home", m.home, "data folder (default $ENGRAM_HOME or ~/.engram)")
	fs.Usage = func() {
		fmt.Fprintf(m.Stdout, "Usage: engram %s\n\nFlags:\n", usage)
		shown := flag.NewFlagSet("", flag.ContinueOnError)
		fs.VisitAll(func(fl *flag.Flag) {
			if fl.Usage != "" {
				shown.Var(fl.Value, fl.Name, fl.Usage)
				shown.Lookup(fl.Name).DefValue = fl.DefValue
			}
		})
		shown.SetOutput(m.Stdout)
		shown.PrintDefaults()
	}
	return fs
}

// parse parses a subcommand's flags, which may come before or after its
// arguments, and returns the arguments. --help prints the usage (through
// fs.Usage) and returns flag.ErrHelp; a bad flag returns a usageError.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err // the FlagSet has printed its Usage
			}
			return nil, &usageError{msg: err.Error()}
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// parseNone parses the flags of a subcommand that takes no arguments.
func parseNone(fs *flag.FlagSet, args []string) error {
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return &usageError{msg: fmt.Sprintf("unexpected argument %q", pos[0])}
	}
	return nil
}

// group is a command whose first argument names a subcommand: `engram
// vault add`, `engram jobs run`, `engram import chatgpt`.
type group struct {
	name    string    // the command: "vault"
	subs    []command // its subcommands
	usage   string    // what -h, --help or help prints
	missing string    // the usage error without a subcommand
	unknown string    // the usage error for an unknown one: a format taking its name (%q)
	// hint makes a subcommand's usage errors name it in their hint
	// ("Run 'engram vault add --help'"); without it they name the group.
	hint bool
}

// runGroup runs the subcommand args[0] of g with the rest of args.
func (m *Main) runGroup(ctx context.Context, g group, args []string) error {
	if len(args) == 0 {
		return &usageError{msg: g.missing}
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(m.Stdout, g.usage)
		return flag.ErrHelp
	}
	for _, c := range g.subs {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, m, args[1:])
		var ue *usageError
		if g.hint && errors.As(err, &ue) && ue.cmd == "" {
			ue.cmd = g.name + " " + c.name
		}
		return err
	}
	return &usageError{msg: fmt.Sprintf(g.unknown, args[0])}
}

// printJSON writes v indented, the shape of the HTTP API.
func printJSON(m *Main, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := m.Stdout.Write(jsonControls(b.Bytes()))
	return err
}
