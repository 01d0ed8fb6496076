package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/importer"
)

// importBatchBytes bounds the content of one batch, so that a batch of long
// turns stays well under the server's request body limit (32 MiB by default).
const importBatchBytes = 8 << 20

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
	cfg, err := m.loadConfig()
	if err != nil {
		return err
	}
	be, err := m.openBackend(ctx, cfg)
	if err != nil {
		return err
	}
	imp := newRecordImporter(m, be, cfg, "engram "+cmd, *quiet)
	st, err := importer.ReadChatGPT(f, *ns, func(r importer.Record) error { return imp.record(ctx, r) })
	if err == nil {
		err = imp.flush(ctx)
	}
	if cerr := be.Close(); err == nil {
		err = cerr
	}
	imp.report(fmt.Sprintf("%s: %d conversations, %d messages", pos[0], st.Conversations, st.Messages))
	if errors.Is(err, importer.ErrNotChatGPTExport) {
		return fmt.Errorf("%s: %w", pos[0], err)
	}
	return imp.result(err, "messages or conversations")
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

// recordImporter validates, batches and archives the records of an
// importer, counting what became of each.
type recordImporter struct {
	m      *Main
	be     backend
	limits engram.Limits
	label  string // "engram import chatgpt", for progress
	quiet  bool
	start  time.Time

	ingestTally
	read, bad  int
	skipped    map[string]int // by reason
	lastReport time.Time
	batch      []engram.Turn
	batchBytes int
}

func newRecordImporter(m *Main, be backend, cfg engine.Config, label string, quiet bool) *recordImporter {
	return &recordImporter{m: m, be: be, limits: cfg.Limits(), label: label, quiet: quiet, start: time.Now(),
		skipped: make(map[string]int)}
}

// record takes one record: a turn is validated and batched, a skip counted,
// an error reported on stderr with where it is. It returns only errors of
// the archive, which end the import.
func (g *recordImporter) record(ctx context.Context, r importer.Record) error {
	g.read++
	switch {
	case r.Err != nil:
		g.bad++
		fmt.Fprintf(g.m.Stderr, "%s: %v\n", r.Where, r.Err)
		return nil
	case r.Skip != "":
		g.skipped[r.Skip]++
		return nil
	}
	t, err := r.Turn.Turn("", time.Now(), g.limits)
	if err != nil {
		g.bad++
		fmt.Fprintf(g.m.Stderr, "%s: %s\n", r.Where, engram.ErrorText(err))
		return nil
	}
	g.batch = append(g.batch, t)
	g.batchBytes += len(t.Content) + len(t.Meta)
	if len(g.batch) >= min(ingestBatch, g.limits.MaxBatch) || g.batchBytes >= importBatchBytes {
		return g.flush(ctx)
	}
	return nil
}

func (g *recordImporter) flush(ctx context.Context) error {
	if len(g.batch) == 0 {
		return nil
	}
	res, err := g.send(ctx, g.be, g.batch)
	if err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	for _, w := range res.Warnings {
		fmt.Fprintln(g.m.Stderr, "warning:", w)
	}
	g.batch, g.batchBytes = g.batch[:0], 0
	if !g.quiet && time.Since(g.start) >= progressEvery && time.Since(g.lastReport) >= progressEvery {
		g.lastReport = time.Now()
		rate := float64(g.read) / time.Since(g.start).Seconds()
		fmt.Fprintf(g.m.Stderr, "%s: %d read, %d archived (%.0f/s)\n", g.label, g.read, g.archived, rate)
	}
	return nil
}

// report prints the summary line: what was read (head), then what became
// of it, the skips by reason, most frequent first.
func (g *recordImporter) report(head string) {
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
	fmt.Fprintf(g.m.Stderr, "%s: %s read, %d turns archived (%d already present), %d skipped%s, %d bad\n",
		g.label, head, g.archived, g.duplicates, skipped, why, g.bad)
}

// result is the command's error: err, else one for bad records (what names
// what they are), so that a partial import exits 1.
func (g *recordImporter) result(err error, what string) error {
	if err != nil {
		return err
	}
	if g.bad > 0 {
		return fmt.Errorf("%d %s were not imported (see above)", g.bad, what)
	}
	return nil
}
