package main

import (
	"context"
	"flag"
	"fmt"
)

// runImport dispatches `engram import SOURCE` to the importer of SOURCE.
func runImport(ctx context.Context, m *Main, args []string) error {
	const usage = "want a source: engram import claude-code|chatgpt|jsonl [flags] [args]"
	if len(args) == 0 {
		return &usageError{msg: usage}
	}
	switch args[0] {
	case "claude-code":
		return runImportClaudeCode(ctx, m, args[1:])
	case "chatgpt":
		return runImportChatGPT(ctx, m, args[1:])
	case "jsonl":
		return runImportJSONL(ctx, m, args[1:])
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(m.Stdout, "Usage: engram import claude-code|chatgpt|jsonl [flags] [args]\n\nRun 'engram import SOURCE --help' for a source's flags.")
		return flag.ErrHelp
	}
	return &usageError{msg: fmt.Sprintf("unknown source %q; %s", args[0], usage)}
}
