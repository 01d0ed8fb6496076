package main

import (
	"context"
	"fmt"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/internal/progress"
	"github.com/engram-dev/engram/server"
)

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
	bar := &progress.Phases{W: m.Stderr}
	st, remote, err := server.ReindexVectors(ctx, cfg, *reembed, m.logger(cfg), func(st engram.ReindexStatus, remote bool) {
		bar.Show(st.Phase, engine.PhaseText(st.Phase)+onServer(remote), st.Done, st.Total)
	})
	bar.Finish()
	if remote && ctx.Err() != nil {
		fmt.Fprintln(m.Stderr, "engram reindex: detached; the server goes on (GET /v1/reindex)")
		return ctx.Err()
	}
	if err != nil {
		return err
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
