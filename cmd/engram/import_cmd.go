package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/engram-dev/engram/importer"
)

// runImport dispatches `engram import SOURCE` to the importer of SOURCE.
func runImport(ctx context.Context, m *Main, args []string) error {
	const usage = "want a source: engram import claude-code|chatgpt|jsonl [flags] [args]"
	return m.runGroup(ctx, group{name: "import", missing: usage, unknown: "unknown source %q; " + usage,
		usage: "Usage: engram import claude-code|chatgpt|jsonl [flags] [args]\n\nRun 'engram import SOURCE --help' for a source's flags.\n",
		subs:  []command{{"claude-code", "", runImportClaudeCode}, {"chatgpt", "", runImportChatGPT}, {"jsonl", "", runImportJSONL}}}, args)
}

// importRecords archives, through the home's backend, the records read
// passes on, then prints the summary (read returns what it read, its
// head) and returns the command's error (what names the records).
func (m *Main) importRecords(ctx context.Context, cmd string, quiet bool, what string,
	read func(record func(importer.Record) error) (string, error)) error {
	cfg, be, err := m.openHome(ctx)
	if err != nil {
		return err
	}
	imp := importer.NewImporter(be, cfg.Limits(), "engram "+cmd, quiet, m.Stderr)
	head, err := imp.Import(ctx, read)
	if cerr := be.Close(); err == nil {
		err = cerr
	}
	imp.Report(head)
	return imp.Result(err, what)
}

// openImportFile opens the file an import reads; a missing one is a usage
// error, since the user most likely mistyped it.
func openImportFile(cmd, path string) (*os.File, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &usageError{cmd: cmd, msg: fmt.Sprintf("no file %s", path)}
	}
	return f, err
}

// openInput opens the file a command reads, or standard input for "-"
// (openImportFile), and returns it with its name for messages.
func (m *Main) openInput(cmd, path string) (io.ReadCloser, string, error) {
	if path == "-" {
		return io.NopCloser(m.Stdin), "stdin", nil
	}
	f, err := openImportFile(cmd, path)
	return f, path, err
}
