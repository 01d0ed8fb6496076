package main

import (
	"context"
	"fmt"

	"github.com/engram-dev/engram/importer"
)

func runIngest(ctx context.Context, m *Main, args []string) error {
	fs := m.newFlagSet("ingest", "ingest [--namespace N] FILE.jsonl|-\n\nEach line is one turn: {\"session\", \"content\", \"role\", \"speaker\", \"ts\", \"meta\", \"namespace\", \"id\"}.\nBad lines are reported by line number and skipped; good lines are kept.")
	ns := fs.String("namespace", "", "namespace for lines that name none (default \"default\")")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return &usageError{msg: "want exactly one FILE.jsonl, or - for standard input"}
	}
	in, name, err := m.openInput("ingest", pos[0])
	if err != nil {
		return err
	}
	defer in.Close()
	return m.importRecords(ctx, "ingest", *quiet, "lines", func(emit func(importer.Record) error) (string, error) {
		lines, err := importer.ReadLines(in, *ns, emit)
		return fmt.Sprintf("%s: %d lines", name, lines), err
	})
}
