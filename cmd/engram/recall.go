package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/engram-dev/engram"
)

func runRecall(ctx context.Context, m *Main, args []string) error {
	fs := m.newFlagSet("recall", `recall [--namespace N] [--k 10] [--mode auto|shallow|keyword] [--json] "query"`)
	ns := fs.String("namespace", engram.DefaultNamespace, `namespace to search ("*" for all)`)
	k := fs.Int("k", engram.DefaultK, "number of results")
	mode := fs.String("mode", engram.ModeAuto, "recall mode: auto, shallow or keyword")
	asJSON := fs.Bool("json", false, "print the response as JSON (the HTTP API's shape)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return &usageError{msg: "missing the query"}
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
	resp, err := be.Recall(ctx, engram.RecallRequest{Namespace: *ns, Query: strings.Join(pos, " "), K: *k, Mode: *mode})
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(m.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(resp)
	}
	for _, w := range resp.Warnings {
		fmt.Fprintln(m.Stderr, "warning:", w)
	}
	if len(resp.Results) == 0 {
		fmt.Fprintln(m.Stdout, "no results")
		return nil
	}
	for i, r := range resp.Results {
		who := string(r.Role)
		if r.Speaker != "" {
			who = r.Speaker
		}
		fmt.Fprintf(m.Stdout, "%2d. %s  %s  [%s]  score %.3f\n    %s: %s\n", i+1,
			r.TS.Format("2006-01-02 15:04"), r.Session, r.Namespace, r.Score, who, oneLine(r.Text, 300))
		for _, s := range r.Sources {
			meta := ""
			if len(s.Meta) > 0 {
				meta = " " + string(s.Meta)
			}
			fmt.Fprintf(m.Stdout, "    source %s%s\n", s.ID, meta)
		}
	}
	fmt.Fprintf(m.Stdout, "(%d results, mode %s, %.1f ms)\n", len(resp.Results), resp.Mode, resp.TookMS)
	return nil
}

// oneLine folds white space and cuts s to at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
