package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/server"
)

func runDoctor(ctx context.Context, m *Main, args []string) error {
	fs := m.newFlagSet("doctor", `doctor [--json]

Checks the home: the archive (checksums, order, torn lines in quarantine),
the palace's SQLite integrity (full-text indexes included), the palace
against the archive, the vectors of the active model against the turns, the
in-memory index or the Chroma collection against SQLite, Ollama and Chroma
when configured, and the scheduled jobs; with store = "postgres", the
database (reachable, its schema) and this server's lag behind it. Each
check prints OK, WARN or FAIL with a finding and, for a problem, the
command that fixes it. With a server running, the server runs the checks
(GET /v1/doctor).

Exit status: 0 when no check failed (warnings allowed), 1 when one did.`)
	asJSON := fs.Bool("json", false, "print JSON (the HTTP API's shape)")
	cfg, err := m.parseConfig(fs, args)
	if err != nil {
		return err
	}
	rep, at, err := server.Doctor(ctx, cfg, m.errorLogger())
	if err != nil {
		return err
	}
	where := "checked locally"
	if at != "" {
		where = "checked by the server at " + at
	}
	if *asJSON {
		if err := printJSON(m, rep); err != nil {
			return err
		}
	} else {
		printDoctor(m, rep, where)
	}
	if rep.Failed() {
		n := rep.Count(engram.CheckFail)
		return fmt.Errorf("doctor: %d %s failed", n, noun(n, "check", "checks"))
	}
	return nil
}

// printDoctor prints one line per check, the fix under it, then a summary.
func printDoctor(m *Main, r engram.DoctorReport, where string) {
	width := 0
	for _, c := range r.Checks {
		width = max(width, len(c.Name))
	}
	for _, c := range r.Checks {
		tprintf(m.Stdout, "%-4s  %-*s  %s\n", strings.ToUpper(c.Status), width, c.Name, c.Finding)
		if c.Fix != "" {
			tprintf(m.Stdout, "      %-*s  fix: %s\n", width, "", c.Fix)
		}
	}
	warn := r.Count(engram.CheckWarn)
	tprintf(m.Stdout, "%d ok, %d %s, %d failed (%s in %.0f ms)\n", r.Count(engram.CheckOK), warn,
		noun(warn, "warning", "warnings"), r.Count(engram.CheckFail), where, r.TookMS)
}
