package engine

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/pipeline"
	"github.com/engram-dev/engram/postgres"
	"github.com/engram-dev/engram/scheduler"
)

// newScheduler builds the scheduler of the engine's jobs (the layer
// workers and maintenance), its state kept in the palace. It is started by
// `engram serve` only; `engram jobs run` runs the same jobs once.
func (e *Engine) newScheduler() (*scheduler.Scheduler, error) {
	every, err := e.cfg.JobIntervals()
	if err != nil {
		return nil, err
	}
	var jobs []scheduler.Job
	add := func(name string, run func(context.Context) error) {
		jobs = append(jobs, scheduler.Job{Name: name, Interval: every[name], Run: run})
	}
	for _, w := range e.layerJobs() {
		add(w.Name, e.guardLayers(e.palaceJob(w.Name, w.Run)))
	}
	add(config.JobVaultReconcile, e.palaceJob(config.JobVaultReconcile, e.reconcileVaults))
	add(config.JobVerify, e.sharedJob(config.JobVerify, every[config.JobVerify], e.verifyArchive))
	add(config.JobCompact, e.palaceJob(config.JobCompact, e.palace.Optimize))
	add(config.JobSnapshot, e.healthSnapshot)
	s, err := scheduler.New(e.palace.JobStates(), jobs...)
	if err != nil {
		return nil, err
	}
	s.Logger = e.logger.With("component", "scheduler")
	return s, nil
}

// layerJobs are the layer workers over the engine's archive and palace, in
// the order each feeds the next (memories, scenes, persona, graph, then the
// layers' vectors); without an extractor only the vectors, which embed the
// sessions (retrieval units) whatever the layers. The scheduler runs them on
// their intervals, a rebuild once each: the one place they are wired.
func (e *Engine) layerJobs() []scheduler.Job {
	var jobs []scheduler.Job
	if e.extractor != nil {
		jobs = append(jobs,
			scheduler.Job{Name: pipeline.WorkerMemories, Run: (&pipeline.MemoryWorker{Archive: e.archive, Extractor: e.extractor, Store: e.palace,
				BatchSize: e.extractBatch, Parallel: e.extractParallel, Logger: e.logger.With("component", pipeline.WorkerMemories), Work: e.work}).Run},
			scheduler.Job{Name: pipeline.WorkerScenes, Run: e.sceneWorker().Run},
			scheduler.Job{Name: pipeline.WorkerPersona, Run: (&pipeline.PersonaWorker{Store: e.palace, Work: e.work}).Run},
			scheduler.Job{Name: pipeline.WorkerGraph, Run: (&pipeline.GraphWorker{Store: e.palace, Work: e.work}).Run},
		)
	}
	return append(jobs, scheduler.Job{Name: pipeline.WorkerLayerVectors, Run: e.embedLayers})
}

// LayerLag returns how far each derived layer is behind its source, for
// the layers that are: l1-memories and l2-scenes in archived turns not
// taken in yet, l3-persona and l4-graph in memory changes. Nil when the
// layers are off or current. A layer catches up at its job's next run (the
// scenes within a second under serve); until then deep recall, which
// weighs the layers, may rank otherwise than it will.
func (e *Engine) LayerLag(ctx context.Context) (map[string]int64, error) {
	if e.extractor == nil {
		return nil, nil
	}
	var lag map[string]int64
	add := func(worker string, source int64) error {
		seq, err := e.palace.WorkerSeq(ctx, worker)
		if err != nil {
			return err
		}
		if n := source - seq; n > 0 {
			if lag == nil {
				lag = map[string]int64{}
			}
			lag[worker] = n
		}
		return nil
	}
	last := e.archive.LastSeq()
	mem, err := e.palace.MemorySeq(ctx)
	if err != nil {
		return nil, err
	}
	for _, w := range []struct {
		name   string
		source int64
	}{{pipeline.WorkerMemories, last}, {pipeline.WorkerScenes, last}, {pipeline.WorkerPersona, mem}, {pipeline.WorkerGraph, mem}} {
		if err := add(w.name, w.source); err != nil {
			return nil, err
		}
	}
	return lag, nil
}

// layerLagText describes the layers that lag for recall's warning, "" when
// none do.
func (e *Engine) layerLagText(ctx context.Context) string {
	lag, err := e.LayerLag(ctx)
	if err != nil || len(lag) == 0 {
		return ""
	}
	var parts []string
	for _, w := range []string{pipeline.WorkerMemories, pipeline.WorkerScenes, pipeline.WorkerPersona, pipeline.WorkerGraph} {
		if n := lag[w]; n > 0 {
			unit := "turns"
			if w == pipeline.WorkerPersona || w == pipeline.WorkerGraph {
				unit = "memory changes"
			}
			parts = append(parts, fmt.Sprintf("%s %d %s", w, n, unit))
		}
	}
	return strings.Join(parts, ", ")
}

// embedLayers embeds the memories, facts, scenes and retrieval units not
// yet embedded with the active model. Without a vector side (embedder none,
// or not started) it does nothing: the layers stay searchable by keyword.
func (e *Engine) embedLayers(ctx context.Context) error {
	e.vec.mu.Lock()
	side := e.vec.side
	e.vec.mu.Unlock()
	if side == nil {
		e.logger.Debug("layer vectors: no vector model is active; skipped")
		return nil
	}
	w := &pipeline.LayerVectorWorker{Layers: e.palace, Embedder: side.vx.Embedder(), Store: side.store, Units: e.palace, Work: e.work}
	return w.Run(ctx)
}

// startFollower keeps the scenes and the vectors of the retrieval units (and
// of the layers) current between the jobs' runs, as `engram serve` does:
// after each commit of the turn index, at most once a second, so a new turn
// joins its open scene and its session's vector within moments.
func (e *Engine) startFollower() {
	e.follower = pipeline.Follow("scenes and unit vectors", e.indexer.Notify, e.guardLayers(e.palaceJob("follower", func(ctx context.Context) error {
		if e.extractor != nil {
			if err := e.sceneWorker().Run(ctx); err != nil {
				return fmt.Errorf("scenes: %w", err)
			}
		}
		return e.embedLayers(ctx)
	})), time.Second, e.logger.With("component", "units"))
}

// sceneWorker returns the engine's L2 worker (its runs, the scheduled job's
// and the follower's of serve, exclude each other through e.work). It is
// bound to the turn index: a scene's retrieval unit is made of stored turns.
func (e *Engine) sceneWorker() *pipeline.SceneWorker {
	e.scenesOnce.Do(func() {
		e.scenes = &pipeline.SceneWorker{Archive: e.archive, Store: e.palace, Indexed: e.palace.IndexedSeq, Work: e.work}
	})
	return e.scenes
}

// sharedRunner is an archive shared by several servers (the PostgreSQL
// one), which leases the jobs over it to one server at a time.
type sharedRunner interface {
	RunShared(ctx context.Context, name string, every time.Duration, run func(context.Context) error) (postgres.SharedRun, error)
}

// sharedVectors is the store of turn vectors the servers of a shared
// archive share (see postgres.PutTurnVectors); nil for the home's own.
func (e *Engine) sharedVectors() pipeline.SharedVectors {
	if v, ok := e.archive.(pipeline.SharedVectors); ok {
		return v
	}
	return nil
}

// sharedJob makes run, a job over the archive itself, a job that one server
// of those sharing the archive runs an interval (see postgres.RunShared);
// over the home's own archive it is run itself. A server that leaves it to
// another records a success: the job's work is done for the interval.
func (e *Engine) sharedJob(name string, every time.Duration, run func(context.Context) error) func(context.Context) error {
	shared, ok := e.archive.(sharedRunner)
	if !ok {
		return run
	}
	return func(ctx context.Context) error {
		r, err := shared.RunShared(ctx, name, every, run)
		if err == nil && !r.Ran {
			if r.Last.IsZero() {
				e.logger.Info("shared job left to the server running it", "job", name, "server", r.Server)
			} else {
				e.logger.Info("shared job ran on a server within its interval", "job", name, "server", r.Server, "at", r.Last)
			}
		}
		return err
	}
}

// verifyArchive re-reads every archive file and fails on anything but
// quarantined torn tails (which a crash leaves and recovery keeps).
func (e *Engine) verifyArchive(ctx context.Context) error {
	rep, err := e.archive.Verify(ctx)
	if err != nil {
		return err
	}
	var bad []string
	for _, p := range rep.Problems {
		// A torn line in quarantine was never acknowledged, and an id on two
		// lines loses nothing (re-sends map to the first): the doctor warns
		// of them; the job fails for lines whose turns recall lacks.
		if p.Kind != archive.ProblemQuarantined && p.Kind != archive.ProblemDuplicateID {
			bad = append(bad, p.String())
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("archive: %d problems, first: %s; engram doctor names the fix", len(bad), bad[0])
	}
	e.logger.Info("archive verified", "files", rep.Files, "turns", rep.Turns)
	return nil
}

// healthSnapshot writes the health to the log: a record of lags and
// problems over time. It observes and never fails on a degraded state
// (which /v1/health already reports): a failing snapshot would itself keep
// the status degraded after the problem is gone.
func (e *Engine) healthSnapshot(ctx context.Context) error {
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

// RunDue runs every job whose last success is older than its interval
// (what `engram jobs run --due` does for launchd or cron).
func (e *Engine) RunDue(ctx context.Context) error {
	_, err := e.sched.RunDue(ctx)
	return err
}

// RunAll runs every job once.
func (e *Engine) RunAll(ctx context.Context) error {
	_, err := e.sched.RunAll(ctx)
	return err
}

// Jobs implements engram.JobService.
func (e *Engine) Jobs(ctx context.Context) []engram.JobStatus {
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

// ListJobs is Jobs with the signature of httpapi.Client's, so that a
// command can stand on either.
func (e *Engine) ListJobs(ctx context.Context) ([]engram.JobStatus, error) { return e.Jobs(ctx), nil }

// RunJobs runs jobs in this process: the one called name, or with due every
// job whose last success is older than its interval (RunDue), or with
// neither every job (RunAll). It returns every job's status after the runs;
// a job's own failure is in its status. ENOTFOUND for an unknown name.
func (e *Engine) RunJobs(ctx context.Context, name string, due bool) ([]engram.JobStatus, error) {
	var err error
	switch {
	case due:
		err = e.RunDue(ctx)
	case name == "":
		err = e.RunAll(ctx)
	default:
		_, err = e.RunJob(ctx, name)
	}
	if err != nil {
		return nil, err
	}
	return e.Jobs(ctx), nil
}

// maxSkipsShown bounds the skipped batches counted for `jobs status`.
const maxSkipsShown = 10000

// RunJob implements engram.JobService.
func (e *Engine) RunJob(ctx context.Context, name string) (engram.JobStatus, error) {
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
func (e *Engine) jobsHealth() []string {
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
