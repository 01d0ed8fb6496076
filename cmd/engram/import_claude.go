package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/engram-dev/engram/claudecode"
)

// progressEvery is how often the import reports progress on stderr.
const progressEvery = 2 * time.Second

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
	cfg, be, err := m.openHome(ctx)
	if err != nil {
		return err
	}
	defer be.Close()
	g, err := claudecode.NewIngester(be, cfg.Home, cfg.Limits(), *ns)
	if err != nil {
		tprintf(m.Stderr, "warning: %v; reading every transcript from its start\n", err)
	}
	g.Warn = func(path string, end int64, err error) {
		tprintf(m.Stderr, "%s: line ending at byte %d skipped: %v\n", path, end, err)
	}
	start, last := time.Now(), time.Now()
	err = g.Transcripts(ctx, paths, func(done int) {
		if !*quiet && time.Since(last) >= progressEvery {
			last = time.Now()
			tprintf(m.Stderr, "engram import claude-code: %d of %d transcripts, %d archived (%.0f lines/s)\n",
				done, len(paths), g.Archived, float64(g.Lines)/time.Since(start).Seconds())
		}
	})
	tprintf(m.Stderr, "engram import claude-code: %s: %d transcripts, %d new lines, %d turns archived (%d duplicates), %d bad lines\n",
		dir, len(paths), g.Lines, g.Archived, g.Duplicates, g.Bad)
	return err
}
