package main

import (
	"bufio"
	"context"
	"fmt"
	"strings"

	"github.com/engram-dev/engram"
)

// multiFlag is a flag that may be given more than once.
type multiFlag []string

func (f *multiFlag) String() string     { return strings.Join(*f, ",") }
func (f *multiFlag) Set(s string) error { *f = append(*f, s); return nil }

func runForget(ctx context.Context, m *Main, args []string) error {
	fs := m.newFlagSet("forget", `forget --turn ID [--turn ID...] | --session S [--namespace N] | --namespace N [--reason R] [--yes] [--dry-run] [--json]

Forgets turns everywhere engram keeps them: each archive line becomes a
tombstone (id, seq, time and reason; the content gone), and the palace, the
vectors (embedded and Chroma) and every memory, scene, persona facet and
graph fact standing only on them lose them at once. A rebuild brings
nothing back; a re-sent forgotten id is a duplicate unless it asks to be
resurrected. Earlier backups still hold the turns. Asks before forgetting
unless --yes.`)
	var turns multiFlag
	fs.Var(&turns, "turn", "the id of a turn to forget (repeat for more)")
	session := fs.String("session", "", "forget every turn of this session (of --namespace, default \"default\")")
	namespace := fs.String("namespace", "", "forget every turn of this namespace (with --session: the session's namespace)")
	reason := fs.String("reason", "", "why, kept in the tombstone")
	yes := fs.Bool("yes", false, "do not ask for confirmation")
	dry := fs.Bool("dry-run", false, "say what would be forgotten, change nothing")
	asJSON := fs.Bool("json", false, "print JSON (the HTTP API's shape)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return &usageError{msg: "forget takes no arguments: name the turns with --turn ID, --session S or --namespace N"}
	}
	req := engram.ForgetRequest{IDs: turns, Session: *session, Namespace: *namespace, Reason: *reason}
	if err := req.Validate(); err != nil {
		return &usageError{msg: err.Error() + " (engram forget --turn ID | --session S | --namespace N)"}
	}
	_, svc, err := m.openHome(ctx)
	if err != nil {
		return err
	}
	defer svc.Close()
	if !*yes || *dry {
		probe := req
		probe.DryRun = true
		rep, err := svc.Forget(ctx, probe)
		if err != nil {
			return err
		}
		if *dry {
			return printForget(m, rep, *asJSON)
		}
		if len(rep.Turns) == 0 {
			fmt.Fprintf(m.Stdout, "nothing to forget: %d already forgotten, %d unknown\n", len(rep.Already), len(rep.Unknown))
			return nil
		}
		q := fmt.Sprintf("forget %d turn(s) (%s) from the archive, the palace and the vectors?", len(rep.Turns), clipList(rep.Turns, 3))
		if err := confirm(m, q, "forgotten"); err != nil {
			return err
		}
	}
	rep, err := svc.Forget(ctx, req)
	if err != nil {
		return err
	}
	return printForget(m, rep, *asJSON)
}

// confirm asks q on stdout and reads the answer from stdin: anything but
// y or yes is a usage error saying nothing was done (done: what would have
// been, "forgotten").
func confirm(m *Main, q, done string) error {
	fmt.Fprintf(m.Stdout, "%s This cannot be undone. [y/N] ", q)
	line, _ := bufio.NewReader(m.Stdin).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
		return &usageError{msg: "not confirmed; nothing was " + done + " (--yes skips the question)"}
	}
	return nil
}

func printForget(m *Main, rep engram.ForgetReport, asJSON bool) error {
	if asJSON {
		return printJSON(m, rep)
	}
	verb := "forgot"
	if rep.DryRun {
		verb = "would forget"
	}
	fmt.Fprintf(m.Stdout, "%s %d turn(s)", verb, len(rep.Turns))
	if len(rep.Turns) > 0 {
		fmt.Fprintf(m.Stdout, ": %s", clipList(rep.Turns, 5))
	}
	fmt.Fprintln(m.Stdout)
	if !rep.DryRun {
		fmt.Fprintf(m.Stdout, "  archive: %d file(s) rewritten; palace: %d memories deleted, %d kept with other sources, %d scenes, %d facts, %d persona facets, %d units changed, %d vectors deleted\n",
			rep.ArchiveFiles, rep.Memories, rep.MemoriesKept, rep.Scenes, rep.Facts, rep.Facets, rep.Units, rep.Vectors)
	}
	if len(rep.Already) > 0 {
		fmt.Fprintf(m.Stdout, "  already forgotten: %s\n", clipList(rep.Already, 5))
	}
	if len(rep.Unknown) > 0 {
		fmt.Fprintf(m.Stdout, "  unknown: %s\n", clipList(rep.Unknown, 5))
	}
	return nil
}

func clipList(ids []string, n int) string {
	if len(ids) <= n {
		return strings.Join(ids, ", ")
	}
	return strings.Join(ids[:n], ", ") + fmt.Sprintf(" and %d more", len(ids)-n)
}
