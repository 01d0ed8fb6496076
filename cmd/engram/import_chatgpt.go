package main

import (
	"context"
	"errors"
	"fmt"

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
