package importer

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/engram-dev/engram"
)

// Batches of an Importer: at most DefaultBatch turns, and at most
// MaxBatchBytes of content, so that a batch of long turns stays well under
// the server's request body limit (32 MiB by default).
const (
	DefaultBatch  = 1000
	MaxBatchBytes = 8 << 20
)

// progressEvery is how often an import reports progress.
const progressEvery = 2 * time.Second

// Importer validates, batches and archives the records of an importer
// (ReadChatGPT, JSONL.Read), counting what became of each, and writes what
// went wrong, progress and a summary to Log.
type Importer struct {
	Log    io.Writer
	be     engram.IngestService
	limits engram.Limits
	label  string // "engram import chatgpt", for progress
	quiet  bool
	start  time.Time

	engram.IngestTally
	read, bad  int
	skipped    map[string]int // by reason
	lastReport time.Time
	batch      []engram.Turn
	batchBytes int
}

// NewImporter returns an importer into svc that checks turns against
// limits; label names it in progress lines ("engram import chatgpt"), and
// quiet leaves those out.
func NewImporter(svc engram.IngestService, limits engram.Limits, label string, quiet bool, log io.Writer) *Importer {
	return &Importer{Log: log, be: svc, limits: limits, label: label, quiet: quiet, start: time.Now(),
		skipped: make(map[string]int)}
}

// Record takes one record: a turn is validated and batched, a skip counted,
// an error reported on stderr with where it is. It returns only errors of
// the archive, which end the import.
func (g *Importer) Record(ctx context.Context, r Record) error {
	g.read++
	switch {
	case r.Err != nil:
		g.bad++
		fmt.Fprintf(g.Log, "%s: %v\n", r.Where, r.Err)
		return nil
	case r.Skip != "":
		g.skipped[r.Skip]++
		return nil
	}
	t, err := r.Turn.Turn("", time.Now(), g.limits)
	if err != nil {
		g.bad++
		fmt.Fprintf(g.Log, "%s: %s\n", r.Where, engram.ErrorText(err))
		return nil
	}
	g.batch = append(g.batch, t)
	g.batchBytes += len(t.Content) + len(t.Meta)
	if len(g.batch) >= min(DefaultBatch, g.limits.MaxBatch) || g.batchBytes >= MaxBatchBytes {
		return g.Flush(ctx)
	}
	return nil
}

// Import runs read, a reader of records (ReadLines, JSONL.Read,
// ReadChatGPT) given Record as its emit, then archives the last batch. It
// returns what read returns (the head of Report's line) and the first
// error.
func (g *Importer) Import(ctx context.Context, read func(emit func(Record) error) (string, error)) (string, error) {
	head, err := read(func(r Record) error { return g.Record(ctx, r) })
	if err == nil {
		err = g.Flush(ctx)
	}
	return head, err
}

// Flush archives the batch, if any: call it after the last record.
func (g *Importer) Flush(ctx context.Context) error {
	if len(g.batch) == 0 {
		return nil
	}
	res, err := g.Send(ctx, g.be, g.batch)
	if err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	for _, w := range res.Warnings {
		fmt.Fprintln(g.Log, "warning:", w)
	}
	g.batch, g.batchBytes = g.batch[:0], 0
	if !g.quiet && time.Since(g.start) >= progressEvery && time.Since(g.lastReport) >= progressEvery {
		g.lastReport = time.Now()
		rate := float64(g.read) / time.Since(g.start).Seconds()
		fmt.Fprintf(g.Log, "%s: %d read, %d archived (%.0f/s)\n", g.label, g.read, g.Archived, rate)
	}
	return nil
}

// Report prints the summary line: what was read (head), then what became
// of it, the skips by reason, most frequent first.
func (g *Importer) Report(head string) {
	skipped := 0
	reasons := make([]string, 0, len(g.skipped))
	for why, n := range g.skipped {
		skipped += n
		reasons = append(reasons, why)
	}
	sort.Slice(reasons, func(i, j int) bool {
		a, b := reasons[i], reasons[j]
		return g.skipped[a] > g.skipped[b] || g.skipped[a] == g.skipped[b] && a < b
	})
	for i, why := range reasons {
		reasons[i] = fmt.Sprintf("%d %s", g.skipped[why], why)
	}
	why := ""
	if len(reasons) > 0 {
		why = " (" + strings.Join(reasons, ", ") + ")"
	}
	fmt.Fprintf(g.Log, "%s: %s read, %d turns archived (%d already present), %d skipped%s, %d bad\n",
		g.label, head, g.Archived, g.Duplicates, skipped, why, g.bad)
}

// Result is the command's error: err, else one for bad records (what names
// what they are), so that a partial import exits 1.
func (g *Importer) Result(err error, what string) error {
	if err != nil {
		return err
	}
	if g.bad > 0 {
		return fmt.Errorf("%d %s were not imported (see above)", g.bad, what)
	}
	return nil
}
