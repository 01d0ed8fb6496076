package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"text/tabwriter"

	"github.com/engram-dev/engram"
)

func runStats(ctx context.Context, m *Main, args []string) error {
	fs := m.newFlagSet("stats", "stats [--json]")
	asJSON := fs.Bool("json", false, "print JSON (the HTTP API's shape)")
	if err := parseNone(fs, args); err != nil {
		return err
	}
	st, err := withHome(ctx, m, func(be backend) (engram.Stats, error) { return be.Stats(ctx) })
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(m, st)
	}
	a := st.Archive
	fmt.Fprintf(m.Stdout, "archive: %d turns in %d files, %d bytes, last seq %d, index lag %d\n",
		a.Turns, a.Files, a.Bytes, a.LastSeq, a.IndexLag)
	if a.Corrupt > 0 {
		fmt.Fprintf(m.Stdout, "archive: %d corrupt lines (kept in place, skipped)\n", a.Corrupt)
	}
	tw := tabwriter.NewWriter(m.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAMESPACE\tLAYER\tCOUNT")
	for _, ns := range slices.Sorted(maps.Keys(st.Layers)) {
		for _, layer := range slices.Sorted(maps.Keys(st.Layers[ns])) {
			fmt.Fprintf(tw, "%s\t%s\t%d\n", ns, layer, st.Layers[ns][layer])
		}
	}
	return tw.Flush()
}
