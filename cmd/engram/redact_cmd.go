package main

import (
	"context"
	"fmt"

	"github.com/engram-dev/engram"
)

func runRedact(ctx context.Context, m *Main, args []string) error {
	fs := m.newFlagSet("redact", `redact --span TEXT [--span TEXT...] [--turn ID... | --session S [--namespace N] | --namespace N] [--marker M] [--reason R] [--yes] [--dry-run] [--json]

Replaces every occurrence of each span (a secret, a name) in the content,
the speaker and the meta's string values of the turns named, or of a
session or a namespace, or of every namespace, by the marker (default
"[redacted]"): in the archive (each line rewritten in place, with a record
of when, why and how many spans), the palace (the turn, its keyword
indexes, its session and scene units, the memories, scenes and persona
facets citing it, the graph's entities named by a span, the corrections)
and the vectors (the turn embedded again with every model that had one; a
model that cannot embed now is named in a warning). Earlier backups still
hold the text. Asks before redacting unless --yes.

What it does not reach: a turn's id, namespace and session, and the keys of
its meta, stay as they are (they are what the turn is named and filed by).
A span found there is named in a warning; forget those turns (engram
forget --turn ID) to remove it. At most 1000 spans at once; spans are
matched as given (case matters), the longer first where two overlap.`)
	var turns, spans multiFlag
	fs.Var(&turns, "turn", "the id of a turn to redact (repeat for more)")
	fs.Var(&spans, "span", "the text to replace (repeat for more; at least 3 bytes)")
	session := fs.String("session", "", "redact in every turn of this session (of --namespace, default \"default\")")
	namespace := fs.String("namespace", "", "redact in every turn of this namespace")
	marker := fs.String("marker", "", `what replaces a span (default "[redacted]")`)
	reason := fs.String("reason", "", "why, kept in the turn's redaction record")
	yes := fs.Bool("yes", false, "do not ask for confirmation")
	dry := fs.Bool("dry-run", false, "say what would be redacted, change nothing")
	asJSON := fs.Bool("json", false, "print JSON (the HTTP API's shape)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return &usageError{msg: "redact takes no arguments: name the text with --span TEXT and the turns with --turn ID"}
	}
	ns := *namespace
	if *session != "" && ns == "" {
		ns = engram.DefaultNamespace
	}
	req := engram.RedactRequest{Texts: spans, IDs: turns, Session: *session, Namespace: ns, Marker: *marker, Reason: *reason}
	if err := req.Validate(); err != nil {
		return &usageError{msg: err.Error() + " (engram redact --turn ID --span TEXT)"}
	}
	show := func(rep engram.RedactReport) error { return printRedact(m, rep, *asJSON) }
	return confirmed(ctx, m, confirmation[engram.RedactReport]{
		yes: *yes, dry: *dry, done: "redacted",
		run: func(ctx context.Context, svc backend, dry bool) (engram.RedactReport, error) {
			r := req
			r.DryRun = dry
			return svc.Redact(ctx, r)
		},
		question: func(rep engram.RedactReport) (string, error) {
			if len(rep.Turns) == 0 {
				return "", show(rep)
			}
			return fmt.Sprintf("redact %d span(s) in %d turn(s) (%s) in the archive, the palace and the vectors?", rep.Spans, len(rep.Turns), clipList(rep.Turns, 3)), nil
		},
		print: show,
	})
}

func printRedact(m *Main, rep engram.RedactReport, asJSON bool) error {
	if asJSON {
		return printJSON(m, rep)
	}
	verb := "redacted"
	if rep.DryRun {
		verb = "would redact"
	}
	tprintf(m.Stdout, "%s %d span(s) in %d turn(s)", verb, rep.Spans, len(rep.Turns))
	if len(rep.Turns) > 0 {
		tprintf(m.Stdout, ": %s", clipList(rep.Turns, 5))
	}
	tprintln(m.Stdout)
	if !rep.DryRun && len(rep.Turns) > 0 {
		tprintf(m.Stdout, "  archive: %d file(s) rewritten; palace: %d memories and %d scenes rewritten\n", rep.ArchiveFiles, rep.Memories, rep.Scenes)
	}
	if rep.PreviousPalace {
		tprintln(m.Stdout, "  removed palace.db.before-rebuild (the palace an earlier rebuild replaced), which held the old text")
	}
	for _, w := range rep.Warnings {
		tprintln(m.Stderr, "warning:", w)
	}
	return nil
}
