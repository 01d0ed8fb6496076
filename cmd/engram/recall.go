package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/engram-dev/engram"
)

func runRecall(ctx context.Context, m *Main, args []string) error {
	fs := m.newFlagSet("recall", `recall [--namespace N] [--k 10] [--mode auto|hybrid|shallow|deep|keyword] [--as-of TIME] [--budget TOKENS] [--kinds turn,doc,memory,scene,fact,persona] [--json] "query"`)
	ns := fs.String("namespace", engram.DefaultNamespace, `namespace to search ("*" for all)`)
	k := fs.Int("k", engram.DefaultK, "number of results")
	mode := fs.String("mode", engram.ModeAuto, "recall mode: auto (deep on a trigger phrase, else hybrid), hybrid, shallow (vectors only), deep or keyword")
	asOf := fs.String("as-of", "", "answer as of this RFC 3339 time (default now)")
	budget := fs.Int("budget", 0, "also print a packed context block of at most this many tokens")
	kinds := fs.String("kinds", "", "result kinds, comma-separated: turn and doc (the default), memory, scene, fact, persona")
	asJSON := fs.Bool("json", false, "print the response as JSON (the HTTP API's shape)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return &usageError{msg: "missing the query"}
	}
	req := engram.RecallRequest{Namespace: *ns, Query: strings.Join(pos, " "), K: *k, Mode: *mode, BudgetTokens: *budget}
	if *kinds != "" {
		for _, kind := range strings.Split(*kinds, ",") {
			req.Kinds = append(req.Kinds, strings.TrimSpace(kind))
		}
	}
	if *asOf != "" {
		t, err := time.Parse(time.RFC3339Nano, *asOf)
		if err != nil {
			return &usageError{msg: fmt.Sprintf("--as-of %q is not RFC 3339 (for example 2026-05-01T14:03:00Z)", *asOf)}
		}
		req.AsOf = t
	}
	resp, err := withHome(ctx, m, func(be backend) (engram.RecallResponse, error) { return be.Recall(ctx, req) })
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(m, resp)
	}
	for _, w := range resp.Warnings {
		tprintln(m.Stderr, "warning:", w)
	}
	if resp.Trigger != "" {
		tprintf(m.Stdout, "(deep recall: %q)\n", resp.Trigger)
	}
	if tr := resp.TimeRange; tr != nil {
		tprintf(m.Stdout, "(%q: %s to %s)\n", tr.Expr, tr.From.Format("2006-01-02 15:04"), tr.To.Format("2006-01-02 15:04"))
	}
	if len(resp.Results) == 0 {
		tprintln(m.Stdout, "no results")
		return nil
	}
	for i, r := range resp.Results {
		who := string(r.Role)
		if r.Speaker != "" {
			who = r.Speaker
		}
		kind := ""
		if r.Kind != engram.KindTurn {
			kind = r.Kind + "  "
		}
		if who != "" {
			who += ": "
		}
		tprintf(m.Stdout, "%2d. %s%s  %s  [%s]  score %.3f\n    %s%s\n", i+1, kind,
			r.TS.Format("2006-01-02 15:04"), r.Session, r.Namespace, r.Score, who, oneLine(r.Text, 300))
		if sig := r.Signals; sig != nil {
			tprintf(m.Stdout, "    signals: vector %.2f  bm25 %.2f  session %.2f  neighbour %.2f  layer %.2f  kg %.2f  persona %.0f  decay %.2f\n",
				sig.Vector, sig.BM25, sig.Session, sig.Neighbour, sig.Layer, sig.KG, sig.Persona, sig.Decay)
		}
		if d := r.Doc; d != nil {
			// A document's source is its file: where to open it.
			tprintf(m.Stdout, "    %s\n", d.Place())
			continue
		}
		for _, s := range r.Sources {
			meta := ""
			if len(s.Meta) > 0 {
				meta = " " + string(s.Meta)
			}
			tprintf(m.Stdout, "    source %s%s\n", s.ID, meta)
		}
	}
	tprintf(m.Stdout, "(%s, mode %s, %.1f ms)\n", plural(len(resp.Results), "result"), resp.Mode, resp.TookMS)
	if resp.Context != "" {
		tprintf(m.Stdout, "\n%s\n(context: about %d tokens)\n", resp.Context, resp.ContextTokens)
	}
	return nil
}
