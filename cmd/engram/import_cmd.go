package main

import (
	"context"
)

// runImport dispatches `engram import SOURCE` to the importer of SOURCE.
func runImport(ctx context.Context, m *Main, args []string) error {
	const usage = "want a source: engram import claude-code|chatgpt|jsonl [flags] [args]"
	return m.runGroup(ctx, group{name: "import", missing: usage, unknown: "unknown source %q; " + usage,
		usage: "Usage: engram import claude-code|chatgpt|jsonl [flags] [args]\n\nRun 'engram import SOURCE --help' for a source's flags.\n",
		subs:  []command{{"claude-code", "", runImportClaudeCode}, {"chatgpt", "", runImportChatGPT}, {"jsonl", "", runImportJSONL}}}, args)
}
