package main

import (
	"context"
	"fmt"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/engram-dev/engram"
)

func runJobs(ctx context.Context, m *Main, args []string) error {
	return m.runGroup(ctx, group{name: "jobs", missing: "want a subcommand: run or status",
		unknown: "unknown jobs subcommand %q (want run or status)",
		usage: "Usage: engram jobs status [--json]\n       engram jobs run --due|--all|NAME\n\n" +
			"Jobs: archive-verify (24h), index-compact (6h), health-snapshot (1h). `engram serve` runs them on their\n" +
			"intervals and catches up after sleep; `engram jobs run --due` is what launchd or cron calls.\n",
		subs: []command{{"status", "", runJobsStatus}, {"run", "", runJobsRun}}}, args)
}

func runJobsStatus(ctx context.Context, m *Main, args []string) error {
	fs := m.newFlagSet("jobs status", "jobs status [--json]")
	asJSON := fs.Bool("json", false, "print JSON (the HTTP API's shape)")
	if err := parseNone(fs, args); err != nil {
		return err
	}
	jobs, err := withHome(ctx, m, func(be backend) ([]engram.JobStatus, error) { return be.ListJobs(ctx) })
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(m, map[string]any{"jobs": jobs})
	}
	printJobs(m, jobs)
	return nil
}

func runJobsRun(ctx context.Context, m *Main, args []string) error {
	fs := m.newFlagSet("jobs run", "jobs run --due|--all|NAME")
	due := fs.Bool("due", false, "run every job whose last success is older than its interval (catch-up)")
	all := fs.Bool("all", false, "run every job")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if n := len(pos) + len(slices.DeleteFunc([]bool{*due, *all}, func(b bool) bool { return !b })); n != 1 {
		return &usageError{msg: "want exactly one of --due, --all or a job name"}
	}
	name := "" // --due or --all
	if len(pos) == 1 {
		name = pos[0]
	}
	// A running server owns the home: it runs the jobs.
	jobs, err := withHome(ctx, m, func(be backend) ([]engram.JobStatus, error) { return be.RunJobs(ctx, name, *due) })
	if err != nil {
		return err
	}
	printJobs(m, jobs)
	for _, j := range jobs {
		if j.Failing {
			return fmt.Errorf("job %s failed: %s", j.Name, j.LastError)
		}
	}
	return nil
}

func printJobs(m *Main, jobs []engram.JobStatus) {
	tw := tabwriter.NewWriter(m.Stdout, 0, 4, 2, ' ', 0)
	tprintln(tw, "JOB\tEVERY\tLAST SUCCESS\tNEXT RUN\tLAG\tFAILURES\tLAST ERROR")
	ts := func(t time.Time) string {
		if t.IsZero() {
			return "never"
		}
		return t.Local().Format("2006-01-02 15:04:05")
	}
	for _, j := range jobs {
		tprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", j.Name, j.Interval, ts(j.LastSuccess), ts(j.NextRun),
			(time.Duration(j.LagSeconds) * time.Second).String(), j.Failures, oneLine(j.LastError, 80))
	}
	tw.Flush()
	for _, j := range jobs {
		if j.Skipped > 0 {
			tprintf(m.Stdout, "%s skipped %d batches it could not extract; latest: %s\n", j.Name, j.Skipped, oneLine(j.LastSkip, 200))
		}
	}
}
