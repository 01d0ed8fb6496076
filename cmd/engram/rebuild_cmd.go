package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/engram-dev/engram/homedir"
	"github.com/engram-dev/engram/server"
)

func runRebuild(ctx context.Context, m *Main, args []string) error {
	fs := m.newFlagSet("rebuild", `rebuild [--keep-previous=true]

Rebuilds every derived index (the palace: turns and their keyword indexes,
vectors, the L1-L4 layers, the vault index) from the L0 archive and the
configured vaults, into a new database, and swaps it in only when it is
complete and verified. An interrupted or failed rebuild leaves the current
palace as it was. Stop `+"`engram serve`"+` first: the rebuild needs the home.`)
	keep := fs.Bool("keep-previous", true, "keep the replaced palace as palace.db"+homedir.PreviousSuffix)
	cfg, err := m.parseConfig(fs, args)
	if err != nil {
		return err
	}
	start := time.Now()
	last := ""
	rep, refilled, err := server.Rebuild(ctx, cfg, m.logger(cfg), func(stage string, done, total int64) {
		if stage != last { // one line per stage: readable in a terminal and in a log
			last = stage
			fmt.Fprintf(m.Stderr, "engram rebuild: %s (%.1f s)\n", stage, time.Since(start).Seconds())
		}
	}, *keep)
	if err != nil {
		return err
	}
	fmt.Fprintf(m.Stdout, "rebuilt %s in %.1f s: %d turns, %d vectors (%s), %d memories, %d scenes, %d facts, %d documents\n",
		filepath.Join(cfg.Home, homedir.PalaceFile), time.Since(start).Seconds(), rep.Turns, rep.Vectors, orNone(rep.Model),
		rep.Memories, rep.Scenes, rep.Facts, rep.Docs)
	if rep.Skipped > 0 {
		fmt.Fprintf(m.Stdout, "%d archived turns were not stored (a re-sent id, or a time the palace cannot hold); engram doctor lists them\n", rep.Skipped)
	}
	if rep.Previous != "" {
		fmt.Fprintf(m.Stdout, "the replaced palace is kept as %s\n", rep.Previous)
	}
	if refilled {
		fmt.Fprintln(m.Stdout, "the Chroma collection holds the rebuilt vectors")
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "no vector model"
	}
	return s
}
