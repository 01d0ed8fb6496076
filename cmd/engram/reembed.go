package main

import (
	"context"
	"fmt"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/httpapi"
	"github.com/engram-dev/engram/internal/progress"
	"github.com/engram-dev/engram/server"
)

// reembedPoll is how often the CLI asks a running server for progress.
const reembedPoll = 500 * time.Millisecond

func runReembed(ctx context.Context, m *Main, args []string) error {
	fs := m.newFlagSet("reembed", "reembed [--model builtin|ollama:NAME]\n\nEmbeds every archived turn with the model into a new index, in batches, and switches recall\nto it atomically when complete; until then recall keeps using the old index. Without --model,\nthe model the config names. With a server running, the server does the work.")
	model := fs.String("model", "", "the model: builtin, ollama (the configured ollama_model), ollama:NAME, or openai:NAME where config.toml names an OpenAI-compatible server")
	cfg, err := m.parseConfig(fs, args)
	if err != nil {
		return err
	}
	if c := server.Discover(ctx, cfg); c != nil {
		return m.reembedRemote(ctx, c, *model)
	}
	key, err := cfg.ParseModel(*model)
	if err != nil {
		return err
	}
	e, err := engine.Open(ctx, cfg.Config, m.logger(cfg))
	if err != nil {
		return err
	}
	defer e.Close()
	if e.ActiveModel() == key {
		return engram.Errorf(engram.ECONFLICT, "%s is already the active model", key)
	}
	if err := e.CheckModel(ctx, key); err != nil {
		return err
	}
	bar := progress.New(m.Stderr, e.LastSeq(), "embedding with "+key)
	err = e.Reembed(ctx, key, func(done int64) { bar.Set64(done) })
	bar.Finish()
	if err != nil {
		return fmt.Errorf("re-embed into %s (recall keeps the old vectors; run again to resume): %w", key, err)
	}
	fmt.Fprintf(m.Stderr, "engram reembed: %s is now the active model\n", key)
	return nil
}

func (m *Main) reembedRemote(ctx context.Context, c *httpapi.Client, model string) error {
	st, err := c.StartReembed(ctx, model)
	if err != nil {
		return err
	}
	bar := progress.New(m.Stderr, st.Total, "embedding with "+st.Model+" (on the server)")
	st, err = c.WaitReembed(ctx, reembedPoll, func(st engram.ReembedStatus) { bar.Set64(st.Done) })
	switch {
	case ctx.Err() != nil:
		bar.Finish()
		fmt.Fprintln(m.Stderr, "engram reembed: detached; the server goes on (see /v1/health)")
		return ctx.Err()
	case err != nil:
		return err
	}
	bar.Finish()
	if st.State == engram.ReembedFailed {
		return fmt.Errorf("re-embed into %s failed (recall keeps the old vectors; run again to resume): %s", st.Model, st.Error)
	}
	fmt.Fprintf(m.Stderr, "engram reembed: %s is now the active model\n", st.Model)
	return nil
}
