package main

import (
	"context"
	"fmt"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/progress"
	"github.com/engram-dev/engram/server"
)

func runReembed(ctx context.Context, m *Main, args []string) error {
	fs := m.newFlagSet("reembed", "reembed [--model builtin|ollama:NAME]\n\nEmbeds every archived turn with the model into a new index, in batches, and switches recall\nto it atomically when complete; until then recall keeps using the old index. Without --model,\nthe model the config names. With a server running, the server does the work.")
	model := fs.String("model", "", "the model: builtin, ollama (the configured ollama_model), ollama:NAME, or openai:NAME where config.toml names an OpenAI-compatible server")
	cfg, err := m.parseConfig(fs, args)
	if err != nil {
		return err
	}
	bar := &progress.Phases{W: m.Stderr}
	st, remote, err := server.Reembed(ctx, cfg, *model, m.logger(cfg), func(st engram.ReembedStatus, remote bool) {
		bar.Show(st.Model, "embedding with "+st.Model+onServer(remote), st.Done, st.Total)
	})
	bar.Finish()
	if remote && ctx.Err() != nil {
		fmt.Fprintln(m.Stderr, "engram reembed: detached; the server goes on (see /v1/health)")
		return ctx.Err()
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(m.Stderr, "engram reembed: %s is now the active model\n", st.Model)
	return nil
}

// onServer is what a progress bar adds when the server does the work.
func onServer(remote bool) string {
	if remote {
		return " (on the server)"
	}
	return ""
}
