package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/engram-dev/engram/claudecode"
)

func runIntegrate(ctx context.Context, m *Main, args []string) error {
	flags := m.newFlagSet("integrate", "integrate claude-code [--project DIR] [--namespace N] [--print] [--remove]\n\nAdds engram's hooks (UserPromptSubmit, Stop, SessionEnd) to ~/.claude/settings.json,\nor DIR/.claude/settings.json with --project, keeping every other setting and hook.\nThe first change keeps a copy in settings.json.engram-backup.")
	project := flags.String("project", "", "the project folder whose .claude/settings.json to change (default: the user's ~/.claude/settings.json)")
	ns := flags.String("namespace", "", "namespace for the hook's turns and recall (default cc-<project folder name>)")
	printOnly := flags.Bool("print", false, "print the hooks snippet and change nothing")
	remove := flags.Bool("remove", false, "take engram's hooks out again")
	pos, err := parse(flags, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || pos[0] != "claude-code" {
		return &usageError{msg: "want 'engram integrate claude-code' (the one integration there is)"}
	}
	if *printOnly && *remove {
		return &usageError{msg: "--print and --remove exclude each other"}
	}
	cfg, err := m.loadConfig()
	if err != nil {
		return err
	}
	command, err := claudecode.HookCommand(cfg.Home, *ns)
	if err != nil {
		return err
	}
	if *printOnly {
		b, _ := json.MarshalIndent(map[string]any{"hooks": claudecode.AddHooks(nil, command)}, "", "  ")
		fmt.Fprintf(m.Stdout, "%s\n", b)
		return nil
	}
	path, err := claudecode.SettingsPath(*project)
	if err != nil {
		return err
	}
	changed, err := claudecode.Integrate(path, command, *remove)
	if err != nil {
		return err
	}
	switch {
	case !changed:
		fmt.Fprintf(m.Stdout, "%s: nothing to change\n", path)
	case *remove:
		fmt.Fprintf(m.Stdout, "%s: engram's hooks removed\n", path)
	default:
		fmt.Fprintf(m.Stdout, "%s: engram hooks on %s: %s\n", path, strings.Join(claudecode.HookEvents, ", "), command)
	}
	return nil
}
