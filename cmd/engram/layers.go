package main

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/httpapi"
)

// The layer commands (memories, scenes, persona, kg) read the derived
// layers: through the HTTP API when a server owns the home, else from the
// home's palace opened here.

func runMemories(ctx context.Context, m *Main, args []string) error {
	fs := m.newFlagSet("memories", "memories [--namespace N] [--type T] [--subject S] [--superseded] [--limit N] [--json] [QUERY...]")
	ns := fs.String("namespace", engram.DefaultNamespace, `namespace to list ("*" for all)`)
	typ := fs.String("type", "", "only memories of this type: "+strings.Join(engram.MemoryTypes(), ", "))
	subject := fs.String("subject", "", "only memories about this subject (a speaker or an entity)")
	superseded := fs.Bool("superseded", false, "include memories that a newer one replaced")
	limit := fs.Int("limit", 0, fmt.Sprintf("most memories to print, 1 to %d (default 10)", httpapi.MaxLayerLimit))
	asJSON := fs.Bool("json", false, "print JSON (the HTTP API's shape)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if *typ != "" && !engram.ValidMemoryType(*typ) {
		return &usageError{msg: fmt.Sprintf("--type %q: want one of %s", *typ, strings.Join(engram.MemoryTypes(), ", "))}
	}
	if err := checkLimit(fs, *limit); err != nil {
		return err
	}
	q := engram.MemoryQuery{Namespace: allOr(*ns), Type: *typ, Subject: *subject, Text: strings.Join(pos, " "),
		Superseded: *superseded, Limit: *limit}
	mems, err := withHome(ctx, m, func(be backend) ([]engram.Memory, error) { return be.Memories(ctx, q) })
	if err != nil {
		return err
	}
	if printed, err := printList(m, *asJSON, "memories", mems, "no memories"); printed {
		return err
	}
	tw := tabwriter.NewWriter(m.Stdout, 0, 4, 2, ' ', 0)
	tprintln(tw, "DATE\tTYPE\tSOURCES\tID\tTEXT")
	for _, mem := range mems {
		text := oneLine(mem.Text, 200)
		if mem.Rationale != "" {
			text += " (why: " + oneLine(mem.Rationale, 120) + ")"
		}
		if q.Namespace == "" {
			text = "[" + mem.Namespace + "] " + text
		}
		if mem.SupersededBy != "" {
			text += " (superseded by " + mem.SupersededBy + ")"
		}
		switch {
		case mem.Wrong:
			text += " (marked wrong by " + mem.Corrected + ")"
		case mem.Corrected != "":
			text += " (corrected by " + mem.Corrected + ")"
		}
		tprintf(tw, "%s\t%s\t%d\t%s\t%s\n", day(mem.TS), mem.Type, len(mem.Sources), mem.ID, text)
	}
	return tw.Flush()
}

func runScenes(ctx context.Context, m *Main, args []string) error {
	fs := m.newFlagSet("scenes", "scenes [--namespace N] [--session S] [--limit N] [--json] [QUERY...]")
	ns := fs.String("namespace", engram.DefaultNamespace, `namespace to list ("*" for all)`)
	session := fs.String("session", "", "only scenes of this session")
	limit := fs.Int("limit", 0, fmt.Sprintf("most scenes to print, 1 to %d (default 10)", httpapi.MaxLayerLimit))
	asJSON := fs.Bool("json", false, "print JSON (the HTTP API's shape)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := checkLimit(fs, *limit); err != nil {
		return err
	}
	q := engram.SceneQuery{Namespace: allOr(*ns), Session: *session, Text: strings.Join(pos, " "), Limit: *limit}
	scenes, err := withHome(ctx, m, func(be backend) ([]engram.Scene, error) { return be.Scenes(ctx, q) })
	if err != nil {
		return err
	}
	if printed, err := printList(m, *asJSON, "scenes", scenes, "no scenes"); printed {
		return err
	}
	for i, s := range scenes {
		if i > 0 {
			tprintln(m.Stdout)
		}
		end := s.End.Format("15:04")
		if day(s.End) != day(s.Start) {
			end = s.End.Format("2006-01-02 15:04")
		}
		tprintf(m.Stdout, "%s .. %s  %s  [%s]  %s\n", s.Start.Format("2006-01-02 15:04"), end, s.Session, s.Namespace, oneLine(s.Title, 120))
		if s.Summary != "" {
			tprintf(m.Stdout, "    %s\n", oneLine(s.Summary, 400))
		}
		tprintf(m.Stdout, "    %s; %s\n", strings.Join(s.Participants, ", "), plural(len(s.Turns), "turn"))
	}
	return nil
}

func runPersona(ctx context.Context, m *Main, args []string) error {
	fs := m.newFlagSet("persona", "persona [--namespace N] [--json] [SPEAKER]")
	ns := fs.String("namespace", engram.DefaultNamespace, "namespace of the speaker")
	asJSON := fs.Bool("json", false, "print JSON (the HTTP API's shape)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := oneNamespace(*ns); err != nil {
		return err
	}
	speaker := strings.Join(pos, " ")
	ps, err := withHome(ctx, m, func(be backend) ([]engram.Persona, error) { return be.Persona(ctx, *ns, speaker) })
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(m, map[string]any{"personas": nonNil(ps)})
	}
	if len(ps) == 0 {
		if speaker != "" {
			tprintf(m.Stdout, "no persona for %q in namespace %s\n", speaker, *ns)
		} else {
			tprintf(m.Stdout, "no personas in namespace %s\n", *ns)
		}
		return nil
	}
	for i, p := range ps {
		if i > 0 {
			tprintln(m.Stdout)
		}
		tprintf(m.Stdout, "%s  [%s]  updated %s\n", p.Speaker, p.Namespace, day(p.Updated))
		tw := tabwriter.NewWriter(m.Stdout, 0, 4, 2, ' ', 0)
		for _, f := range p.Facets {
			tprintf(tw, "  %s\t%s\t%s\tsince %s\t%s\n", f.Facet, f.Key, oneLine(f.Value, 120), day(f.Since), plural(len(f.Evidence), "turn"))
			for _, h := range slices.Backward(f.History) {
				tprintf(tw, "  \t\twas %s\t%s .. %s\t%s\n", oneLine(h.Value, 120), day(h.From), day(h.To), plural(len(h.Evidence), "turn"))
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

func runKG(ctx context.Context, m *Main, args []string) error {
	fs := m.newFlagSet("kg", "kg [--namespace N] [--as-of DATE|RFC3339] [--timeline] [--limit N] [--json] ENTITY")
	ns := fs.String("namespace", engram.DefaultNamespace, "namespace of the knowledge graph")
	asOf := fs.String("as-of", "", "the triples valid at this time (RFC 3339, or a date: the end of that day, local time); default now")
	timeline := fs.Bool("timeline", false, "every triple of the entity, closed ones included, in time order")
	limit := fs.Int("limit", 0, fmt.Sprintf("most triples to print, 1 to %d (default 100)", httpapi.MaxLayerLimit))
	asJSON := fs.Bool("json", false, "print JSON (the HTTP API's shape)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return &usageError{msg: "missing the entity (for example: engram kg Alice)"}
	}
	if err := oneNamespace(*ns); err != nil {
		return err
	}
	if err := checkLimit(fs, *limit); err != nil {
		return err
	}
	q := engram.GraphQuery{Namespace: *ns, Entity: strings.Join(pos, " "), Timeline: *timeline, Limit: *limit}
	if *asOf != "" {
		if *timeline {
			return &usageError{msg: "--as-of and --timeline do not go together: a timeline holds every triple"}
		}
		if q.AsOf, err = parseAsOf(*asOf); err != nil {
			return err
		}
	}
	res, err := withHome(ctx, m, func(be backend) (engram.GraphResult, error) { return be.Graph(ctx, q) })
	if err != nil {
		return err
	}
	res.Triples = nonNil(res.Triples)
	if *asJSON {
		return printJSON(m, res)
	}
	head := res.Entity.Name
	if len(res.Entity.Aliases) > 0 {
		head += " (also " + strings.Join(res.Entity.Aliases, ", ") + ")"
	}
	switch {
	case q.Timeline:
		head += "  timeline"
	case !q.AsOf.IsZero():
		head += "  as of " + q.AsOf.Local().Format("2006-01-02 15:04")
	}
	tprintf(m.Stdout, "%s  [%s]\n", head, res.Entity.Namespace)
	if len(res.Triples) == 0 {
		tprintln(m.Stdout, "  no triples")
		return nil
	}
	tw := tabwriter.NewWriter(m.Stdout, 0, 4, 2, ' ', 0)
	for _, t := range res.Triples {
		to := ""
		if !t.ValidTo.IsZero() {
			to = " " + day(t.ValidTo)
		}
		tprintf(tw, "  %s\t%s\t%s\t[%s ..%s]\t%s\n", t.Subject, t.Predicate, t.Object, day(t.ValidFrom), to, t.ID)
	}
	return tw.Flush()
}

// parseAsOf reads --as-of: RFC 3339, or a date meaning the end of that day
// in local time (so that "as of March 11" includes what happened that day).
func parseAsOf(s string) (time.Time, error) {
	if t, ok := engram.ParseTimeOrDate(s, time.Local, true); ok {
		return t, nil
	}
	return time.Time{}, &usageError{msg: fmt.Sprintf("--as-of %q is neither a date (2026-05-01) nor RFC 3339 (2026-05-01T14:03:00Z)", s)}
}

// checkLimit refuses a --limit outside 1..MaxLayerLimit; 0 is the default
// only when --limit was not given.
func checkLimit(fs *flag.FlagSet, limit int) error {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "limit" })
	if (given || limit != 0) && (limit < 1 || limit > httpapi.MaxLayerLimit) {
		return &usageError{msg: fmt.Sprintf("--limit %d: want 1 to %d", limit, httpapi.MaxLayerLimit)}
	}
	return nil
}

// allOr maps --namespace "*" to the query's "" (every namespace).
func allOr(ns string) string {
	if ns == engram.AllNamespaces {
		return ""
	}
	return ns
}

func oneNamespace(ns string) error {
	if ns == engram.AllNamespaces {
		return &usageError{msg: "--namespace " + engram.AllNamespacesRefused}
	}
	return nil
}

func day(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Format(time.DateOnly)
}

// printList prints l as JSON, {key: l}, with asJSON, or none when l is
// empty, and reports whether it printed; else the caller prints l.
func printList[T any](m *Main, asJSON bool, key string, l []T, none string) (bool, error) {
	switch {
	case asJSON:
		return true, printJSON(m, map[string]any{key: nonNil(l)})
	case len(l) == 0:
		_, err := tprintln(m.Stdout, none)
		return true, err
	}
	return false, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
