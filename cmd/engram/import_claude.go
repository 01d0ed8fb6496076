package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"
	"unicode/utf8"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/claudecode"
	"github.com/engram-dev/engram/engine"
)

// ccOffsetsFile, in the home, holds how far each Claude Code transcript has
// been archived, for the hook and for `engram import claude-code`.
var ccOffsetsFile = filepath.Join("hooks", "claude-code-offsets.json")

// ccIngester archives the lines of Claude Code transcripts that were added
// since their recorded offsets, and advances an offset only past lines whose
// turns the backend has acknowledged.
type ccIngester struct {
	be      backend
	offsets *claudecode.Offsets
	mapper  claudecode.Mapper
	limits  engram.Limits
	warn    func(path string, end int64, err error) // a line that is not a turn

	ingestTally
	lines, bad int
	batch      []engram.Turn
}

func newCCIngester(be backend, cfg engine.Config, namespace string) (*ccIngester, error) {
	off, err := claudecode.OpenOffsets(filepath.Join(cfg.Home, ccOffsetsFile))
	g := &ccIngester{be: be, offsets: off, mapper: claudecode.Mapper{Namespace: namespace}, limits: cfg.Limits().WithDefaults()}
	g.warn = func(string, int64, error) {}
	return g, err // a broken offsets file: start over, ids make it harmless
}

// transcript archives the new complete lines of the transcript at path and
// records its new offset (Save writes it).
func (g *ccIngester) transcript(ctx context.Context, path string) error {
	var batchEnd int64
	_, err := claudecode.Scan(path, g.offsets.Get(path), func(line []byte, end int64) error {
		g.lines++
		batchEnd = end
		if line == nil {
			g.bad++
			g.warn(path, end, fmt.Errorf("line over %d bytes", claudecode.MaxLineBytes))
		} else if t, ok, err := g.turn(line); err != nil {
			g.bad++
			g.warn(path, end, err)
		} else if ok {
			g.batch = append(g.batch, t)
		}
		if len(g.batch) >= ingestBatch {
			if err := g.flush(ctx); err != nil {
				return err
			}
			g.offsets.Set(path, end)
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
		g.offsets.Set(path, batchEnd)
	}
	return nil
}

func (g *ccIngester) turn(line []byte) (engram.Turn, bool, error) {
	in, ok, err := g.mapper.Map(line)
	if err != nil || !ok {
		return engram.Turn{}, ok, err
	}
	if len(in.Content) > g.limits.MaxContentBytes { // a huge paste: keep its head
		in.Content = cutBytes(in.Content, g.limits.MaxContentBytes-len("…")) + "…"
	}
	t, err := in.Turn("", time.Now(), g.limits)
	return t, err == nil, err
}

func (g *ccIngester) flush(ctx context.Context) error {
	if len(g.batch) == 0 {
		return nil
	}
	if _, err := g.send(ctx, g.be, g.batch); err != nil {
		return fmt.Errorf("archive Claude Code turns: %w", err)
	}
	g.batch = g.batch[:0]
	return nil
}

// cutBytes returns the longest prefix of s of at most n bytes that ends on a
// character boundary.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func runImportClaudeCode(ctx context.Context, m *Main, args []string) error {
	flags := m.newFlagSet("import claude-code", "import claude-code [--namespace N] [--quiet] [DIR]\n\nArchives every Claude Code transcript (*.jsonl) under DIR, default ~/.claude/projects,\nfrom where the last import or hook left off. Each project's turns go to the namespace\ncc-<project folder name> unless --namespace is given. Importing again adds nothing.")
	ns := flags.String("namespace", "", "namespace of every turn (default cc-<project folder name>)")
	quiet := flags.Bool("quiet", false, "no progress on stderr")
	pos, err := parse(flags, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return &usageError{cmd: "import claude-code", msg: fmt.Sprintf("want at most one DIR, got %d arguments", len(pos))}
	}
	dir := ""
	if len(pos) == 1 {
		dir = pos[0]
	} else if dir, err = claudecode.DefaultDir(); err != nil {
		return err
	}
	paths, err := claudecode.Transcripts(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return &usageError{cmd: "import claude-code", msg: fmt.Sprintf("no folder %s (give the folder of the transcripts)", dir)}
	}
	if err != nil {
		return err
	}
	cfg, err := m.loadConfig()
	if err != nil {
		return err
	}
	be, err := m.openBackend(ctx, cfg)
	if err != nil {
		return err
	}
	defer be.Close()
	g, err := newCCIngester(be, cfg, *ns)
	if err != nil {
		fmt.Fprintf(m.Stderr, "warning: %v; reading every transcript from its start\n", err)
	}
	g.warn = func(path string, end int64, err error) {
		fmt.Fprintf(m.Stderr, "%s: line ending at byte %d skipped: %v\n", path, end, err)
	}
	start, last := time.Now(), time.Now()
	var ferr error
	for i, p := range paths {
		if err := g.transcript(ctx, p); err != nil {
			ferr = fmt.Errorf("%s: %w", p, err)
			break
		}
		if err := g.offsets.Save(); err != nil {
			ferr = fmt.Errorf("save offsets: %w", err)
			break
		}
		if !*quiet && time.Since(last) >= progressEvery {
			last = time.Now()
			fmt.Fprintf(m.Stderr, "engram import claude-code: %d of %d transcripts, %d archived (%.0f lines/s)\n",
				i+1, len(paths), g.archived, float64(g.lines)/time.Since(start).Seconds())
		}
	}
	fmt.Fprintf(m.Stderr, "engram import claude-code: %s: %d transcripts, %d new lines, %d turns archived (%d duplicates), %d bad lines\n",
		dir, len(paths), g.lines, g.archived, g.duplicates, g.bad)
	return ferr
}
