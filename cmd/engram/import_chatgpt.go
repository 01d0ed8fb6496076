package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/engram-dev/engram/importer"
)

func runImportChatGPT(ctx context.Context, m *Main, args []string) error {
	const cmd = "import chatgpt"
	fs := m.newFlagSet(cmd, cmd+" [--namespace N] [--quiet] conversations.json\n\n"+
		"Archives the conversations of a ChatGPT data export (Settings > Data controls > Export data),\n"+
		"following each conversation's current branch. Turn ids are chatgpt-<message id>, so importing\n"+
		"again adds nothing. System, hidden and empty messages and non-text content (code, tool output)\n"+
		"are skipped and counted; images and files in a message become [image] or [file]-like placeholders.")
	ns := fs.String("namespace", "", "namespace of every turn (default \"default\")")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return &usageError{cmd: cmd, msg: "want exactly one conversations.json (from the ChatGPT data export)"}
	}
	f, err := openImportFile(cmd, pos[0])
	if err != nil {
		return err
	}
	defer f.Close()
	return m.importRecords(ctx, cmd, *quiet, "messages or conversations", func(record func(importer.Record) error) (string, error) {
		st, err := importer.ReadChatGPT(f, *ns, record)
		if errors.Is(err, importer.ErrNotChatGPTExport) {
			err = fmt.Errorf("%s: %w", pos[0], err)
		}
		return fmt.Sprintf("%s: %d conversations, %d messages", pos[0], st.Conversations, st.Messages), err
	})
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
	head, err := read(func(r importer.Record) error { return imp.Record(ctx, r) })
	if err == nil {
		err = imp.Flush(ctx)
	}
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
