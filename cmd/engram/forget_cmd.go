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
	return confirmed(ctx, m, confirmation[engram.ForgetReport]{
		yes: *yes, dry: *dry, done: "forgotten",
		run: func(ctx context.Context, svc backend, dry bool) (engram.ForgetReport, error) {
			r := req
			r.DryRun = dry
			return svc.Forget(ctx, r)
		},
		question: func(rep engram.ForgetReport) (string, error) {
			if len(rep.Turns) == 0 {
				_, err := tprintf(m.Stdout, "nothing to forget: %d already forgotten, %d unknown\n", len(rep.Already), len(rep.Unknown))
				return "", err
			}
			return fmt.Sprintf("forget %d turn(s) (%s) from the archive, the palace and the vectors?", len(rep.Turns), clipList(rep.Turns, 3)), nil
		},
		print: func(rep engram.ForgetReport) error { return printForget(m, rep, *asJSON) },
	})
}

// confirmation is what confirmed needs to run a command that cannot be
// undone (forget, redact), whose service calls report an R.
type confirmation[R any] struct {
	yes, dry bool   // --yes, --dry-run
	done     string // what nothing was when it is not confirmed: "forgotten"
	// run calls the service, as a dry run or for real.
	run func(ctx context.Context, svc backend, dry bool) (R, error)
	// question is what to ask of a dry run's report; "" when there is
	// nothing to do (it says so itself).
	question func(R) (string, error)
	print    func(R) error
}

// confirmed opens the home and runs c: with --dry-run, as a dry run only;
// else, unless --yes, first as a dry run whose report makes the question,
// then, once confirmed, for real.
func confirmed[R any](ctx context.Context, m *Main, c confirmation[R]) error {
	_, svc, err := m.openHome(ctx)
	if err != nil {
		return err
	}
	defer svc.Close()
	if !c.yes || c.dry {
		rep, err := c.run(ctx, svc, true)
		if err != nil {
			return err
		}
		if c.dry {
			return c.print(rep)
		}
		q, err := c.question(rep)
		if q == "" || err != nil {
			return err
		}
		if err := confirm(m, q, c.done); err != nil {
			return err
		}
	}
	rep, err := c.run(ctx, svc, false)
	if err != nil {
		return err
	}
	return c.print(rep)
}

// confirm asks q on stdout and reads the answer from stdin: anything but
// y or yes is a usage error saying nothing was done (done: what would have
// been, "forgotten").
func confirm(m *Main, q, done string) error {
	tprintf(m.Stdout, "%s This cannot be undone. [y/N] ", q)
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
	tprintf(m.Stdout, "%s %d turn(s)", verb, len(rep.Turns))
	if len(rep.Turns) > 0 {
		tprintf(m.Stdout, ": %s", clipList(rep.Turns, 5))
	}
	tprintln(m.Stdout)
	if !rep.DryRun {
		tprintf(m.Stdout, "  archive: %d file(s) rewritten; palace: %d memories deleted, %d kept with other sources, %d scenes (%d made again of their other turns), %d facts, %d persona facets, %d units changed, %d vectors deleted\n",
			rep.ArchiveFiles, rep.Memories, rep.MemoriesKept, rep.Scenes, rep.ScenesRemade, rep.Facts, rep.Facets, rep.Units, rep.Vectors)
	}
	if rep.PreviousPalace {
		tprintln(m.Stdout, "  removed palace.db.before-rebuild (the palace an earlier rebuild replaced), which held them")
	}
	if len(rep.Already) > 0 {
		tprintf(m.Stdout, "  already forgotten: %s\n", clipList(rep.Already, 5))
	}
	if len(rep.Unknown) > 0 {
		tprintf(m.Stdout, "  unknown: %s\n", clipList(rep.Unknown, 5))
	}
	return nil
}

func clipList(ids []string, n int) string {
	if len(ids) <= n {
		return strings.Join(ids, ", ")
	}
	return strings.Join(ids[:n], ", ") + fmt.Sprintf(" and %d more", len(ids)-n)
}
