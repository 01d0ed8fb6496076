package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/engram-dev/engram"
)

// ingestBatch is how many good lines go to the archive in one call.
const ingestBatch = 1000

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
	ing := &lineIngester{m: m, be: be, limits: cfg.Limits(), namespace: *ns, quiet: *quiet, start: time.Now()}
	err = ing.run(ctx, in)
	if cerr := be.Close(); err == nil {
		err = cerr
	}
	fmt.Fprintf(m.Stderr, "engram ingest: %s: %d lines, %d turns archived (%d already present), %d bad\n",
		name, ing.lines, ing.Archived, ing.Duplicates, ing.bad)
	if err != nil {
		return err
	}
	if ing.bad > 0 {
		return fmt.Errorf("%d of %d lines were not ingested (see above)", ing.bad, ing.lines)
	}
	return nil
}

type lineIngester struct {
	m         *Main
	be        backend
	limits    engram.Limits
	namespace string
	quiet     bool
	start     time.Time

	engram.IngestTally
	lineNo     int // physical line number, for messages
	lines, bad int // lines counts non-blank lines
	lastReport time.Time
	batch      []engram.Turn
}

func (g *lineIngester) run(ctx context.Context, in io.Reader) error {
	r := bufio.NewReaderSize(in, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			g.lineNo++
			g.line(line)
			if len(g.batch) >= ingestBatch {
				if err := g.flush(ctx); err != nil {
					return err
				}
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
	}
	return g.flush(ctx)
}

func (g *lineIngester) line(line []byte) {
	if len(bytes.TrimSpace(line)) == 0 {
		return // blank lines are not turns
	}
	g.lines++
	in, err := engram.DecodeTurnInput(line, "")
	if err == nil {
		if in.Namespace == "" {
			in.Namespace = g.namespace
		}
		var t engram.Turn
		if t, err = in.Turn("", time.Now(), g.limits); err == nil {
			g.batch = append(g.batch, t)
			return
		}
	}
	g.bad++
	msg := engram.ErrorText(err)
	if engram.ErrorField(err) == "body" {
		msg = "the line " + engram.ErrorMessage(err) // the "body" is the line itself
	}
	fmt.Fprintf(g.m.Stderr, "line %d: %s\n", g.lineNo, msg)
}

func (g *lineIngester) flush(ctx context.Context) error {
	if len(g.batch) == 0 {
		return nil
	}
	res, err := g.Send(ctx, g.be, g.batch)
	if err != nil {
		return fmt.Errorf("archive lines up to %d: %w", g.lineNo, err)
	}
	for _, w := range res.Warnings {
		fmt.Fprintln(g.m.Stderr, "warning:", w)
	}
	g.batch = g.batch[:0]
	if !g.quiet && time.Since(g.start) >= progressEvery && time.Since(g.lastReport) >= progressEvery {
		g.lastReport = time.Now()
		rate := float64(g.lines) / time.Since(g.start).Seconds()
		fmt.Fprintf(g.m.Stderr, "engram ingest: %d lines read, %d archived (%.0f lines/s)\n", g.lines, g.Archived, rate)
	}
	return nil
}
