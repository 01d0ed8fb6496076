package main

import (
	"context"
	"fmt"

	"github.com/engram-dev/engram/server"
)

func runRepair(ctx context.Context, m *Main, args []string) error {
	fs := m.newFlagSet("repair", `repair

Writes the damaged lines of the archive (those engram doctor reports: a
checksum that does not match, a line that does not parse) again from the
palace's copies of their turns, which the palace kept when it indexed them.
The damaged lines as they were are kept in archive/quarantine/. Lines whose
turn the palace does not hold are left: copy their day file from a backup.
Stop `+"`engram serve`"+` first: the repair needs the home.`)
	cfg, err := m.parseConfig(fs, args)
	if err != nil {
		return err
	}
	rep, err := server.Repair(ctx, cfg, m.logger(cfg))
	if err != nil {
		return err
	}
	for _, p := range rep.Repaired {
		tprintf(m.Stdout, "repaired %s:%d: seq %d from the palace's copy\n", p.Path, p.Line, p.Seq)
	}
	for _, p := range rep.Left {
		why := "the palace holds no turn of seq " + fmt.Sprint(p.Seq)
		if p.Seq == 0 {
			why = "its seq is unknown"
		}
		tprintf(m.Stdout, "left %s:%d: %s; copy the day file from a backup, then run engram rebuild\n", p.Path, p.Line, why)
	}
	for _, k := range rep.Kept {
		tprintf(m.Stdout, "the damaged lines as they were: %s\n", k)
	}
	tprintf(m.Stdout, "%d damaged %s repaired, %d left\n", len(rep.Repaired), noun(len(rep.Repaired), "line", "lines"), len(rep.Left))
	if n := len(rep.Left); n > 0 {
		return fmt.Errorf("repair: %d damaged %s left", n, noun(n, "line", "lines"))
	}
	return nil
}
