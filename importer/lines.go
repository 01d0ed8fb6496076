package importer

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/engram-dev/engram"
)

// Lines archives a file of engram's own turns, one JSON object per line
// (engram.DecodeTurnInput: the fields of POST /v1/turns): `engram ingest`.
// Bad lines are reported on Log by line number and skipped; good lines are
// archived in batches of DefaultBatch.
type Lines struct {
	Log       io.Writer
	be        engram.IngestService
	limits    engram.Limits
	namespace string
	quiet     bool
	start     time.Time

	engram.IngestTally
	lineNo     int // physical line number, for messages
	Lines, Bad int // Lines counts non-blank lines
	lastReport time.Time
	batch      []engram.Turn
}

// NewLines returns a reader of turn lines into svc; a line without a
// namespace gets namespace ("": the default), and quiet leaves out the
// progress lines.
func NewLines(svc engram.IngestService, limits engram.Limits, namespace string, quiet bool, log io.Writer) *Lines {
	return &Lines{Log: log, be: svc, limits: limits, namespace: namespace, quiet: quiet, start: time.Now()}
}

// Read archives the turns of in's lines. It returns the archive's error, or
// in's; bad lines are counted in Bad.
func (g *Lines) Read(ctx context.Context, in io.Reader) error {
	r := bufio.NewReaderSize(in, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			g.lineNo++
			g.line(line)
			if len(g.batch) >= DefaultBatch {
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

func (g *Lines) line(line []byte) {
	if len(bytes.TrimSpace(line)) == 0 {
		return // blank lines are not turns
	}
	g.Lines++
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
	g.Bad++
	msg := engram.ErrorText(err)
	if engram.ErrorField(err) == "body" {
		msg = "the line " + engram.ErrorMessage(err) // the "body" is the line itself
	}
	fmt.Fprintf(g.Log, "line %d: %s\n", g.lineNo, msg)
}

func (g *Lines) flush(ctx context.Context) error {
	if len(g.batch) == 0 {
		return nil
	}
	res, err := g.Send(ctx, g.be, g.batch)
	if err != nil {
		return fmt.Errorf("archive lines up to %d: %w", g.lineNo, err)
	}
	for _, w := range res.Warnings {
		fmt.Fprintln(g.Log, "warning:", w)
	}
	g.batch = g.batch[:0]
	if !g.quiet && time.Since(g.start) >= progressEvery && time.Since(g.lastReport) >= progressEvery {
		g.lastReport = time.Now()
		rate := float64(g.Lines) / time.Since(g.start).Seconds()
		fmt.Fprintf(g.Log, "engram ingest: %d lines read, %d archived (%.0f lines/s)\n", g.Lines, g.Archived, rate)
	}
	return nil
}
