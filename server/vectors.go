package server

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/engine"
)

// pollEvery is how often Reembed and ReindexVectors ask a running server
// for progress.
const pollEvery = 500 * time.Millisecond

// Reembed embeds every archived turn with model (as StartReembed takes it:
// "" is the configured one) and then switches recall to it: on the home's
// running server when one answers (remote; the server goes on when ctx
// ends), else on the home opened here with logger, in the foreground. show
// is told each status, with its Total from the first call. A re-embed that
// fails leaves recall on the old vectors, and its error says so.
func Reembed(ctx context.Context, cfg Config, model string, logger *slog.Logger, show func(st engram.ReembedStatus, remote bool)) (st engram.ReembedStatus, remote bool, err error) {
	if c := Discover(ctx, cfg); c != nil {
		if st, err = c.StartReembed(ctx, model); err != nil {
			return st, true, err
		}
		show(st, true)
		st, err = c.WaitReembed(ctx, pollEvery, func(st engram.ReembedStatus) { show(st, true) })
		if err == nil && st.State == engram.ReembedFailed {
			err = fmt.Errorf("re-embed into %s failed (recall keeps the old vectors; run again to resume): %s", st.Model, st.Error)
		}
		return st, true, err
	}
	key, err := cfg.ParseModel(model)
	if err != nil {
		return st, false, err
	}
	e, err := engine.Open(ctx, cfg.Config, logger)
	if err != nil {
		return st, false, err
	}
	defer e.Close()
	if e.ActiveModel() == key {
		return st, false, engram.Errorf(engram.ECONFLICT, "%s is already the active model", key)
	}
	if err := e.CheckModel(ctx, key); err != nil {
		return st, false, err
	}
	st = engram.ReembedStatus{Model: key, State: engram.ReembedRunning, Total: e.LastSeq(), Started: time.Now().UTC()}
	show(st, false)
	err = e.Reembed(ctx, key, func(done int64) {
		st.Done = done
		show(st, false)
	})
	if err != nil {
		st.State, st.Error = engram.ReembedFailed, err.Error()
		return st, false, fmt.Errorf("re-embed into %s (recall keeps the old vectors; run again to resume): %w", key, err)
	}
	st.State = engram.ReembedDone
	return st, false, nil
}

// ReindexVectors rebuilds the vector index of the active model from the
// vectors kept in SQLite (engine.ReindexVectors): on the home's running
// server when one answers (POST /v1/reindex; remote, and the server goes
// on when ctx ends), else on the home opened here with logger. show is
// told each status. A reindex that failed once begun says to run it
// again; one refused before it began is the refusal.
func ReindexVectors(ctx context.Context, cfg Config, reembed bool, logger *slog.Logger, show func(st engram.ReindexStatus, remote bool)) (st engram.ReindexStatus, remote bool, err error) {
	if c := Discover(ctx, cfg); c != nil {
		if st, err = c.StartReindex(ctx, engram.ReindexRequest{Reembed: reembed}); err != nil {
			return st, true, err
		}
		st, err = c.WaitReindex(ctx, pollEvery, func(st engram.ReindexStatus) { show(st, true) })
		if err == nil && st.State == engram.ReindexFailed {
			err = fmt.Errorf("reindex vectors of %s failed on the server (run it again: it starts over safely): %s", modelOrNone(st.Model), st.Error)
		}
		return st, true, err
	}
	e, err := engine.Open(ctx, cfg.Config, logger)
	if err != nil {
		return st, false, err
	}
	defer e.Close()
	st, err = e.ReindexVectors(ctx, reembed, func(st engram.ReindexStatus) { show(st, false) })
	if err != nil && st.State != "" {
		err = fmt.Errorf("reindex vectors of %s (run it again: it starts over safely): %w", modelOrNone(st.Model), err)
	}
	return st, false, err
}

// modelOrNone names a vector model, or its absence.
func modelOrNone(s string) string {
	if s == "" {
		return "no vector model"
	}
	return s
}
