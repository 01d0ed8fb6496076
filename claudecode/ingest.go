package claudecode

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/textutil"
)

// OffsetsFile, in an engram home, holds how far each Claude Code transcript
// has been archived, for the hook and for `engram import claude-code`.
var OffsetsFile = filepath.Join("hooks", "claude-code-offsets.json")

// DefaultBatch is how many turns go to the archive in one call.
const DefaultBatch = 1000

// Ingester archives the lines of Claude Code transcripts that were added
// since their recorded offsets, and advances an offset only past lines whose
// turns the backend has acknowledged.
type Ingester struct {
	Ingest  engram.IngestService
	Offsets *Offsets
	Mapper  Mapper
	Limits  engram.Limits
	Warn    func(path string, end int64, err error) // a line that is not a turn

	engram.IngestTally
	Lines, Bad int // lines read, lines that were no turn
	batch      []engram.Turn
}

// NewIngester returns an ingester into svc whose offsets are the engram
// home's OffsetsFile, and turns of namespace ("": cc-<project folder
// name>). A broken offsets file is returned as the error, with an ingester
// that reads every transcript from its start: the turns' ids make that
// harmless.
func NewIngester(svc engram.IngestService, home string, limits engram.Limits, namespace string) (*Ingester, error) {
	off, err := OpenOffsets(filepath.Join(home, OffsetsFile))
	g := &Ingester{Ingest: svc, Offsets: off, Mapper: Mapper{Namespace: namespace}, Limits: limits.WithDefaults()}
	g.Warn = func(string, int64, error) {}
	return g, err
}

// Transcript archives the new complete lines of the transcript at path and
// records its new offset (Save writes it).
func (g *Ingester) Transcript(ctx context.Context, path string) error {
	var batchEnd int64
	_, err := Scan(ctx, path, g.Offsets.Get(path), func(line []byte, end int64) error {
		g.Lines++
		batchEnd = end
		if line == nil {
			g.Bad++
			g.Warn(path, end, fmt.Errorf("line over %d bytes", MaxLineBytes))
		} else if t, ok, err := g.turn(line); err != nil {
			g.Bad++
			g.Warn(path, end, err)
		} else if ok {
			g.batch = append(g.batch, t)
		}
		if len(g.batch) >= DefaultBatch {
			if err := g.flush(ctx); err != nil {
				return err
			}
			g.Offsets.Set(path, end)
		}
		return ctx.Err()
	})
	if err != nil {
		g.batch = g.batch[:0]
		return err
	}
	if err := g.flush(ctx); err != nil {
		return err
	}
	if batchEnd > 0 {
		g.Offsets.Set(path, batchEnd)
	}
	return nil
}

func (g *Ingester) turn(line []byte) (engram.Turn, bool, error) {
	in, ok, err := g.Mapper.Map(line)
	if err != nil || !ok {
		return engram.Turn{}, ok, err
	}
	if len(in.Content) > g.Limits.MaxContentBytes { // a huge paste: keep its head
		in.Content = textutil.CutBytes(in.Content, g.Limits.MaxContentBytes-len("…")) + "…"
	}
	t, err := in.Turn("", time.Now(), g.Limits)
	return t, err == nil, err
}

func (g *Ingester) flush(ctx context.Context) error {
	if len(g.batch) == 0 {
		return nil
	}
	if _, err := g.Send(ctx, g.Ingest, g.batch); err != nil {
		return fmt.Errorf("archive Claude Code turns: %w", err)
	}
	g.batch = g.batch[:0]
	return nil
}

// Transcripts archives the new lines of each transcript of paths in turn,
// saving the offsets after each, and calls progress with how many are done.
// It stops at the first error, which names the transcript.
func (g *Ingester) Transcripts(ctx context.Context, paths []string, progress func(done int)) error {
	for i, p := range paths {
		if err := g.Transcript(ctx, p); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if err := g.Offsets.Save(); err != nil {
			return fmt.Errorf("save offsets: %w", err)
		}
		progress(i + 1)
	}
	return nil
}
