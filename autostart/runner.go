package autostart

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// Runner runs a service manager's command (launchctl, systemctl): the
// process edge, which tests replace with a recorder.
type Runner interface {
	// Run runs name with args and returns its combined output. A command
	// that exits non-zero returns an error.
	Run(ctx context.Context, name string, args ...string) ([]byte, error)
}

// ExecRunner runs commands with os/exec.
type ExecRunner struct{}

var _ Runner = ExecRunner{}

// Run implements Runner.
func (ExecRunner) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	return exec.CommandContext(ctx, name, args...).CombinedOutput()
}

// Command is a command line: the program, then its arguments.
type Command []string

// String returns the command line quoted for a POSIX shell, for a person to
// copy.
func (c Command) String() string {
	quoted := make([]string, len(c))
	for i, a := range c {
		quoted[i] = shellQuote(a)
	}
	return strings.Join(quoted, " ")
}

func shellQuote(a string) string {
	if a != "" && strings.IndexFunc(a, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@%+=,", r))
	}) < 0 {
		return a
	}
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}

// CommandError is a launchctl or systemctl command that failed.
type CommandError struct {
	Command Command
	Output  string // what it printed, trimmed
	Err     error
}

// Error implements the error interface.
func (e *CommandError) Error() string {
	msg := fmt.Sprintf("%s: %v", e.Command, e.Err)
	if e.Output != "" {
		msg += ": " + e.Output
	}
	return msg
}

// Unwrap returns the error of the run.
func (e *CommandError) Unwrap() error { return e.Err }

// Result is what Install or Uninstall did, in order.
type Result struct {
	Written []string  // files written (replaced or created)
	Removed []string  // files removed
	Ran     []Command // commands run (not launchctl print, which only asks); a failed one is last
	// Todo are the commands to run by hand, when there is no Runner.
	Todo []Command
}

// run runs c through r and records it in res.Ran.
func run(ctx context.Context, r Runner, res *Result, c Command) error {
	res.Ran = append(res.Ran, c)
	return query(ctx, r, c)
}

// query runs c through r without recording it: a command that only asks.
func query(ctx context.Context, r Runner, c Command) error {
	out, err := r.Run(ctx, c[0], c[1:]...)
	if err != nil {
		return &CommandError{Command: c, Output: strings.TrimSpace(string(out)), Err: err}
	}
	return nil
}
