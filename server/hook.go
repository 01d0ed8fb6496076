package server

import (
	"context"
	"io"
	"log/slog"

	"github.com/engram-dev/engram/claudecode"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/homedir"
)

// RunHook reads the Claude Code hook's input from stdin and runs h on it
// (claudecode.Hook.Run): through the home's running server when one
// answers, else on the home opened here, which logs its warnings to the
// hook log (claudecode.OpenHookLog), never to the output Claude Code reads.
// It returns what to print for Claude Code. A home that holds another
// program's files is refused first (homedir.Check): the hook would write
// its offsets and its log into it.
func RunHook(ctx context.Context, cfg Config, h *claudecode.Hook, stdin io.Reader) (string, error) {
	err := homedir.Check(cfg.Home)
	if err != nil {
		return "", err
	}
	if h.In, err = claudecode.ReadHookInput(ctx, stdin); err != nil {
		return "", err
	}
	if c := Discover(ctx, cfg); c != nil {
		return h.Run(ctx, c)
	}
	lf, err := claudecode.OpenHookLog(cfg.Home)
	if err != nil {
		return "", err
	}
	defer lf.Close()
	e, err := engine.Open(ctx, cfg.Config, slog.New(slog.NewTextHandler(lf, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		return "", err
	}
	defer e.Close()
	return h.Run(ctx, e)
}
