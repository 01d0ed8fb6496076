package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/engram-dev/engram/importer"
)

// progressEvery is how often ingest reports progress on stderr.
const progressEvery = 2 * time.Second

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
	cfg, err := m.loadConfig()
	if err != nil {
		return err
	}
	var in io.Reader = m.Stdin
	name := "stdin"
	if pos[0] != "-" {
		f, err := os.Open(pos[0])
		if err != nil {
			return err
		}
		defer f.Close()
		in, name = f, pos[0]
	}
	be, err := m.openBackend(ctx, cfg)
	if err != nil {
		return err
	}
	ing := importer.NewLines(be, cfg.Limits(), *ns, *quiet, m.Stderr)
	err = ing.Read(ctx, in)
	if cerr := be.Close(); err == nil {
		err = cerr
	}
	fmt.Fprintf(m.Stderr, "engram ingest: %s: %d lines, %d turns archived (%d already present), %d bad\n",
		name, ing.Lines, ing.Archived, ing.Duplicates, ing.Bad)
	if err != nil {
		return err
	}
	if ing.Bad > 0 {
		return fmt.Errorf("%d of %d lines were not ingested (see above)", ing.Bad, ing.Lines)
	}
	return nil
}
