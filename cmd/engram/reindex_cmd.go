package main

import (
	"context"
	"fmt"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/httpapi"
	"github.com/engram-dev/engram/internal/progress"
	"github.com/engram-dev/engram/server"
)

// reindexPoll is how often the CLI asks a running server for progress, and
// the layer phase looks whether the layer-vector job finished.
const reindexPoll = 500 * time.Millisecond

func runReindex(ctx context.Context, m *Main, args []string) error {
	fs := m.newFlagSet("reindex", `reindex vectors [--reembed]

Rebuilds the vector index of the active model from the vectors kept in
SQLite: drops the stored vectors that are unusable (wrong length, NaN,
zero), embeds again the turns (and, when one of theirs was dropped, the
memories, facts, scenes and vault chunks) that have no vector, then
rebuilds what recall searches: the in-memory index (swapped in when
complete), or the Chroma collection (dropped, created and filled again).
With --reembed, every text is embedded again with the active model, in
place: each keeps its old vector until its new one is written.

With a server running, the server does the work (POST /v1/reindex). The
whole palace is rebuilt from the archive by `+"`engram rebuild`"+`.`)
	reembed := fs.Bool("reembed", false, "embed every turn, memory, fact, scene and vault chunk again with the active model")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || pos[0] != "vectors" {
		return &usageError{msg: "want: engram reindex vectors [--reembed] (the whole palace: engram rebuild)"}
	}
	cfg, err := m.loadConfig()
	if err != nil {
		return err
	}
	start := time.Now()
	var st engram.ReindexStatus
	if c := server.Discover(ctx, cfg); c != nil {
		if st, err = m.reindexRemote(ctx, c, *reembed); err != nil {
			return err
		}
	} else {
		e, err := engine.Open(ctx, cfg.Config, m.logger(cfg))
		if err != nil {
			return err
		}
		defer e.Close()
		bar := &progress.Phases{W: m.Stderr}
		st, err = e.ReindexVectors(ctx, *reembed, showPhase(bar))
		bar.Finish()
		switch {
		case err != nil && st.State == "": // refused before it began
			return err
		case err != nil:
			return fmt.Errorf("reindex vectors of %s (run it again: it starts over safely): %w", orNone(st.Model), err)
		}
	}
	fmt.Fprintf(m.Stdout, "reindexed the vectors of %s in %.1f s: %s\n", st.Model, time.Since(start).Seconds(), reindexSummary(st))
	return nil
}

// reindexSummary says what a reindex did.
func reindexSummary(st engram.ReindexStatus) string {
	where := fmt.Sprintf("loaded %d into memory", st.Indexed)
	if st.Backend == config.VectorsChroma {
		where = fmt.Sprintf("pushed %d to a new Chroma collection", st.Indexed)
	}
	return fmt.Sprintf("dropped %d unusable, embedded %d %s, %s", st.Dropped, st.Embedded, noun(int(st.Embedded), "text", "texts"), where)
}

func (m *Main) reindexRemote(ctx context.Context, c *httpapi.Client, reembed bool) (engram.ReindexStatus, error) {
	st, err := c.StartReindex(ctx, engram.ReindexRequest{Reembed: reembed})
	if err != nil {
		return st, err
	}
	bar := &progress.Phases{W: m.Stderr, Suffix: " (on the server)"}
	defer bar.Finish()
	st, err = c.WaitReindex(ctx, reindexPoll, showPhase(bar))
	switch {
	case ctx.Err() != nil:
		bar.Finish()
		fmt.Fprintln(m.Stderr, "engram reindex: detached; the server goes on (GET /v1/reindex)")
		return st, ctx.Err()
	case err == nil && st.State == engram.ReindexFailed:
		return st, fmt.Errorf("reindex vectors of %s failed on the server (run it again: it starts over safely): %s", orNone(st.Model), st.Error)
	}
	return st, err
}

// showPhase draws a reindex's status on p: one progress bar per phase (on
// a terminal only).
func showPhase(p *progress.Phases) func(engram.ReindexStatus) {
	return func(st engram.ReindexStatus) { p.Show(st.Phase, engine.PhaseText(st.Phase), st.Done, st.Total) }
}
