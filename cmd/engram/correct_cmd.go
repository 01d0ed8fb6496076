package main

import (
	"context"
	"fmt"

	"github.com/engram-dev/engram"
)

func runCorrect(ctx context.Context, m *Main, args []string) error {
	fs := m.newFlagSet("correct", `correct --memory ID | --fact ID  --wrong | --text T | --object O | --restore  [--reason R] [--json]

Corrects what the layers extracted: an L1 memory (ids in engram memories)
marked wrong or given its correct text, or a knowledge-graph fact (ids in
engram kg) marked wrong or given its correct object. --restore takes the
corrections of the memory or fact back. A correction is appended to the
home's corrections journal (corrections.jsonl, fsynced; with store =
"postgres", the database's, which every server sharing it applies), kept
apart from what extraction produces, and wins over it: after the jobs run
again, after a re-extraction and after engram rebuild.`)
	memory := fs.String("memory", "", "the id of the memory to correct")
	fact := fs.String("fact", "", "the id of the graph fact (triple) to correct")
	wrong := fs.Bool("wrong", false, "it is wrong: recall, the listings, the persona and the graph leave it out")
	text := fs.String("text", "", "the memory's correct text")
	object := fs.String("object", "", "the fact's correct object")
	restore := fs.Bool("restore", false, "take the corrections back: what extraction produced stands again")
	reason := fs.String("reason", "", "why, kept with the correction")
	asJSON := fs.Bool("json", false, "print JSON (the HTTP API's shape)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return &usageError{msg: "correct takes no arguments: name it with --memory ID or --fact ID"}
	}
	req := engram.CorrectionRequest{Text: *text, Object: *object, Wrong: *wrong, Restore: *restore, Reason: *reason}
	switch {
	case *memory != "" && *fact != "":
		return &usageError{msg: "name one of --memory and --fact"}
	case *memory != "":
		req.Target, req.ID = engram.CorrectMemory, *memory
	case *fact != "":
		req.Target, req.ID = engram.CorrectFact, *fact
	default:
		return &usageError{msg: "name what to correct: --memory ID (engram memories lists them) or --fact ID (engram kg ENTITY)"}
	}
	if err := req.Validate(); err != nil {
		return &usageError{msg: err.Error() + " (engram correct --memory ID --wrong | --text T | --restore)"}
	}
	c, err := withHome(ctx, m, func(be backend) (engram.Correction, error) { return be.Correct(ctx, req) })
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(m, c)
	}
	what := "memory " + c.Of
	if c.Target == engram.CorrectFact {
		what = fmt.Sprintf("fact %s (%s %s %s)", c.Of, c.Subject, c.Predicate, c.Original)
	}
	switch {
	case c.Restore:
		tprintf(m.Stdout, "restored %s as extracted\n", what)
	case c.Wrong:
		tprintf(m.Stdout, "marked %s wrong\n", what)
	case c.Text != "":
		tprintf(m.Stdout, "corrected %s: %q (was %q)\n", what, c.Text, c.Original)
	default:
		tprintf(m.Stdout, "corrected %s: object %q (was %q)\n", what, c.Object, c.Original)
	}
	tprintf(m.Stdout, "  correction %s recorded in %s\n", c.ID, "corrections.jsonl")
	return nil
}
