package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/pipeline"
	"github.com/engram-dev/engram/scheduler"
)

// Names of the maintenance jobs; the layer workers' jobs take the workers'
// names (pipeline.WorkerMemories and so on).
const (
	jobVerify   = "archive-verify"
	jobCompact  = "index-compact"
	jobSnapshot = "health-snapshot"
)

// newScheduler builds the scheduler of the engine's jobs (the layer
// workers and maintenance), its state kept in the palace. It is started by
// `engram serve` only; `engram jobs run` runs the same jobs once.
func (e *engine) newScheduler() (*scheduler.Scheduler, error) {
	every, err := e.cfg.jobIntervals()
	if err != nil {
		return nil, err
	}
	var jobs []scheduler.Job
	add := func(name string, run func(context.Context) error) {
		jobs = append(jobs, scheduler.Job{Name: name, Interval: every[name], Run: run})
	}
	if e.extractor != nil {
		add(pipeline.WorkerMemories, (&pipeline.MemoryWorker{Archive: e.archive, Extractor: e.extractor, Store: e.palace,
			BatchSize: e.extractBatch, Logger: e.logger.With("component", pipeline.WorkerMemories)}).Run)
		add(pipeline.WorkerScenes, e.sceneWorker().Run)
		add(pipeline.WorkerPersona, (&pipeline.PersonaWorker{Store: e.palace}).Run)
		add(pipeline.WorkerGraph, (&pipeline.GraphWorker{Store: e.palace}).Run)
	}
	// Layer vectors run without an extractor too: they embed the sessions
	// (retrieval units) whatever the layers.
	add(pipeline.WorkerLayerVectors, e.embedLayers)
	add(jobVaultReconcile, e.reconcileVaults)
	add(jobVerify, e.verifyArchive)
	add(jobCompact, e.palace.Optimize)
	add(jobSnapshot, e.healthSnapshot)
	s, err := scheduler.New(scheduler.NewSQLStore(e.palace), jobs...)
	if err != nil {
		return nil, err
	}
	s.Logger = e.logger.With("component", "scheduler")
	return s, nil
}

// embedLayers embeds the memories and scenes not yet embedded with the
// active model. Without a vector side (embedder none, or not started) it
// does nothing: the layers stay searchable by keyword.
func (e *engine) embedLayers(ctx context.Context) error {
	e.layerVecMu.Lock()
	defer e.layerVecMu.Unlock()
	e.vec.mu.Lock()
	side := e.vec.side
	e.vec.mu.Unlock()
	if side == nil {
		e.logger.Debug("layer vectors: no vector model is active; skipped")
		return nil
	}
	w := &pipeline.LayerVectorWorker{Layers: e.palace, Embedder: side.vx.Embedder(), Store: side.store, Units: e.palace}
	return w.Run(ctx)
}

// startFollower keeps the scenes and the vectors of the retrieval units (and
// of the layers) current between the jobs' runs, as `engram serve` does:
// after each commit of the turn index, at most once a second, so a new turn
// joins its open scene and its session's vector within moments.
func (e *engine) startFollower() {
	e.follower = pipeline.Follow("scenes and unit vectors", e.indexer.Notify, func(ctx context.Context) error {
		if e.extractor != nil {
			if err := e.sceneWorker().Run(ctx); err != nil {
				return fmt.Errorf("scenes: %w", err)
			}
		}
		return e.embedLayers(ctx)
	}, time.Second, e.logger.With("component", "units"))
}

// sceneWorker returns the engine's L2 worker: one instance, so that the
// scheduled job and the follower of serve never run at once.
func (e *engine) sceneWorker() *pipeline.SceneWorker {
	e.scenesOnce.Do(func() {
		e.scenes = &pipeline.SceneWorker{Archive: e.archive, Store: e.palace, Indexed: e.palace.IndexedSeq}
	})
	return e.scenes
}

// verifyArchive re-reads every archive file and fails on anything but
// quarantined torn tails (which a crash leaves and recovery keeps).
func (e *engine) verifyArchive(ctx context.Context) error {
	rep, err := e.archive.Verify(ctx)
	if err != nil {
		return err
	}
	var bad []string
	for _, p := range rep.Problems {
		if p.Kind != archive.ProblemQuarantined {
			bad = append(bad, p.String())
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("archive: %d problems, first: %s", len(bad), bad[0])
	}
	e.logger.Info("archive verified", "files", rep.Files, "turns", rep.Turns)
	return nil
}

// healthSnapshot writes the health to the log: a record of lags and
// problems over time. It observes and never fails on a degraded state
// (which /v1/health already reports): a failing snapshot would itself keep
// the status degraded after the problem is gone.
func (e *engine) healthSnapshot(ctx context.Context) error {
	h := e.Health(ctx)
	attrs := []any{"status", h.Status, "archive_seq", h.ArchiveSeq, "index_lag", h.IndexLag}
	if h.Vectors != nil {
		attrs = append(attrs, "vector_model", h.Vectors.Model, "vector_lag", h.Vectors.Lag)
	}
	if h.Status != "ok" {
		e.logger.Warn("health snapshot", append(attrs, "problems", strings.Join(h.Problems, "; "))...)
		return nil
	}
	e.logger.Info("health snapshot", attrs...)
	return nil
}

// Jobs implements engram.JobService.
func (e *engine) Jobs(ctx context.Context) []engram.JobStatus {
	if err := e.sched.Load(ctx); err != nil {
		e.logger.Warn("load job state", "err", err)
	}
	skips, err := e.palace.Skips(ctx, maxSkipsShown)
	if err != nil {
		e.logger.Warn("read skipped batches", "err", err)
	}
	var out []engram.JobStatus
	for _, j := range e.sched.Status() {
		st := jobStatus(j)
		for _, sk := range skips { // newest first
			if sk.Worker == st.Name {
				if st.Skipped == 0 {
					st.LastSkip = fmt.Sprintf("seq %d-%d at %s: %s", sk.From, sk.To, sk.At.Format(time.RFC3339), sk.Error)
				}
				st.Skipped++
			}
		}
		out = append(out, st)
	}
	return out
}

// maxSkipsShown bounds the skipped batches counted for `jobs status`.
const maxSkipsShown = 10000

// RunJob implements engram.JobService.
func (e *engine) RunJob(ctx context.Context, name string) (engram.JobStatus, error) {
	if _, err := e.sched.Run(ctx, name); err != nil {
		return engram.JobStatus{}, err
	}
	for _, j := range e.sched.Status() {
		if j.Name == name {
			return jobStatus(j), nil
		}
	}
	return engram.JobStatus{}, engram.Errorf(engram.ENOTFOUND, "no job %q", name)
}

func jobStatus(j scheduler.JobStatus) engram.JobStatus {
	return engram.JobStatus{Name: j.Name, Interval: j.Interval.String(), LastRun: j.LastRun, LastSuccess: j.LastSuccess,
		NextRun: j.NextRun, LagSeconds: j.Lag.Seconds(), Running: j.Running, Failures: j.Failures,
		LastError: j.LastError, Failing: j.Failing}
}

// jobsHealth lists failing jobs for /v1/health.
func (e *engine) jobsHealth() []string {
	if e.sched == nil {
		return nil
	}
	var problems []string
	for _, j := range e.sched.Status() {
		if j.Failing {
			problems = append(problems, fmt.Sprintf("job %s is failing (%d in a row): %s", j.Name, j.Failures, j.LastError))
		}
	}
	return problems
}

func runJobs(ctx context.Context, m *Main, args []string) error {
	if len(args) == 0 {
		return &usageError{msg: "want a subcommand: run or status"}
	}
	switch args[0] {
	case "status":
		return runJobsStatus(ctx, m, args[1:])
	case "run":
		return runJobsRun(ctx, m, args[1:])
	case "-h", "--help", "help":
		fmt.Fprint(m.Stdout, "Usage: engram jobs status [--json]\n       engram jobs run --due|--all|NAME\n\n"+
			"Jobs: archive-verify (24h), index-compact (6h), health-snapshot (1h). `engram serve` runs them on their\n"+
			"intervals and catches up after sleep; `engram jobs run --due` is what launchd or cron calls.\n")
		return flag.ErrHelp
	}
	return &usageError{msg: fmt.Sprintf("unknown jobs subcommand %q (want run or status)", args[0])}
}

func runJobsStatus(ctx context.Context, m *Main, args []string) error {
	fs := m.newFlagSet("jobs status", "jobs status [--json]")
	asJSON := fs.Bool("json", false, "print JSON (the HTTP API's shape)")
	if err := parseNone(fs, args); err != nil {
		return err
	}
	cfg, err := m.loadConfig()
	if err != nil {
		return err
	}
	var jobs []engram.JobStatus
	if c := discoverServer(ctx, cfg); c != nil {
		var out struct{ Jobs []engram.JobStatus }
		if err := c.do(ctx, http.MethodGet, "/v1/jobs", nil, &out); err != nil {
			return err
		}
		jobs = out.Jobs
	} else {
		e, err := openEngine(ctx, cfg, m.logger(cfg))
		if err != nil {
			return err
		}
		defer e.Close()
		jobs = e.Jobs(ctx)
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
	if n := btoi(*due) + btoi(*all) + len(pos); n != 1 {
		return &usageError{msg: "want exactly one of --due, --all or a job name"}
	}
	cfg, err := m.loadConfig()
	if err != nil {
		return err
	}
	var jobs []engram.JobStatus
	if c := discoverServer(ctx, cfg); c != nil {
		// The server owns the home: ask it to run the jobs.
		var list struct{ Jobs []engram.JobStatus }
		if err := c.do(ctx, http.MethodGet, "/v1/jobs", nil, &list); err != nil {
			return err
		}
		for _, j := range list.Jobs {
			if (len(pos) == 1 && j.Name != pos[0]) || (*due && !j.NextRun.IsZero() && j.NextRun.After(time.Now())) {
				continue
			}
			var st engram.JobStatus
			if err := c.do(ctx, http.MethodPost, "/v1/jobs/"+url.PathEscape(j.Name)+"/run", nil, &st); err != nil {
				return err
			}
			jobs = append(jobs, st)
		}
		if len(pos) == 1 && len(jobs) == 0 {
			return engram.Errorf(engram.ENOTFOUND, "no job %q", pos[0])
		}
	} else {
		e, err := openEngine(ctx, cfg, m.logger(cfg))
		if err != nil {
			return err
		}
		defer e.Close()
		switch {
		case *due:
			_, err = e.sched.RunDue(ctx)
		case *all:
			_, err = e.sched.RunAll(ctx)
		default:
			_, err = e.sched.Run(ctx, pos[0])
		}
		if err != nil {
			return err
		}
		jobs = e.Jobs(ctx)
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
	fmt.Fprintln(tw, "JOB\tEVERY\tLAST SUCCESS\tNEXT RUN\tLAG\tFAILURES\tLAST ERROR")
	ts := func(t time.Time) string {
		if t.IsZero() {
			return "never"
		}
		return t.Local().Format("2006-01-02 15:04:05")
	}
	for _, j := range jobs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", j.Name, j.Interval, ts(j.LastSuccess), ts(j.NextRun),
			(time.Duration(j.LagSeconds) * time.Second).String(), j.Failures, oneLine(j.LastError, 80))
	}
	tw.Flush()
	for _, j := range jobs {
		if j.Skipped > 0 {
			fmt.Fprintf(m.Stdout, "%s skipped %d batches it could not extract; latest: %s\n", j.Name, j.Skipped, oneLine(j.LastSkip, 200))
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
