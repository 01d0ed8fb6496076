package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	engram "github.com/engram-dev/engram"
	"github.com/robfig/cron/v3"
)

// Defaults of the Scheduler's tunables.
const (
	DefaultTick      = time.Minute      // how often Start re-runs the preflight
	DefaultRetryBase = 30 * time.Second // wait after a job's first failure
	DefaultRetryMax  = 30 * time.Minute // longest wait between retries
)

// saveTimeout bounds saving a job's state after a run; the save does not
// share the job's context, so that a run cancelled by Stop is still recorded.
const saveTimeout = 10 * time.Second

// Log attribute keys.
const (
	keyJob      = "job"
	keyErr      = "err"
	keyDuration = "duration"
	keyFailures = "failures"
	keyNext     = "next"
)

// Job is a periodic task.
type Job struct {
	Name     string                          // unique, non-empty
	Interval time.Duration                   // wanted time between successful runs, > 0
	Run      func(ctx context.Context) error // the work; a panic counts as a failure
}

// Result reports one run of a job.
type Result struct {
	Name     string
	Started  time.Time     // from Scheduler.Now
	Duration time.Duration // measured on the monotonic clock
	Err      error         // the job's error or recovered panic; nil on success
	SaveErr  error         // failure to save the job's state after the run
}

// JobStatus describes a job for display.
type JobStatus struct {
	Name        string
	Interval    time.Duration
	LastRun     time.Time
	LastSuccess time.Time
	NextRun     time.Time     // when the preflight will next run the job (now if due)
	Lag         time.Duration // how far past due the job is: now - last success - interval, >= 0
	Running     bool
	Failures    int
	LastError   string
	Failing     bool // the last run failed
}

// Scheduler runs jobs on intervals, catching up on runs missed while the
// machine slept (see the package doc). Set the exported fields before Start
// or the first run; New seeds them with the defaults.
type Scheduler struct {
	Now       func() time.Time // the wall clock
	Logger    *slog.Logger
	Tick      time.Duration // how often the preflight re-checks the wall clock
	RetryBase time.Duration // wait after a first failure, doubled per further failure
	RetryMax  time.Duration // cap on the wait between retries

	store Store
	jobs  []*job // in the order given to New
	names map[string]*job

	loadMu sync.Mutex // serialises loading the store
	loaded bool       // guarded by mu

	mu sync.Mutex // guards each job's state and running flag, and loaded

	lifeMu  sync.Mutex // serialises Start and Stop
	started bool
	stopped bool
	cron    *cron.Cron
	halt    context.CancelFunc // stops the background preflight from starting runs
	haltCtx context.Context
	cancel  context.CancelFunc // cancels the context of running jobs
	jobCtx  context.Context
	wg      sync.WaitGroup // the background preflight
}

type job struct {
	Job
	state   State // guarded by Scheduler.mu
	running bool  // guarded by Scheduler.mu
}

// New returns a Scheduler for jobs whose state is kept in store. It fails
// with EINVALID if a job has no name, a repeated name, no Run function or an
// interval that is not positive.
func New(store Store, jobs ...Job) (*Scheduler, error) {
	if store == nil {
		return nil, engram.Errorf(engram.EINVALID, "scheduler: no store given")
	}
	s := &Scheduler{
		Now:       time.Now,
		Logger:    slog.Default().With("component", "scheduler"),
		Tick:      DefaultTick,
		RetryBase: DefaultRetryBase,
		RetryMax:  DefaultRetryMax,
		store:     store,
		names:     make(map[string]*job, len(jobs)),
	}
	for i, j := range jobs {
		field := fmt.Sprintf("jobs[%d]", i)
		switch {
		case j.Name == "":
			return nil, engram.FieldError(field+".name", "a job needs a name")
		case s.names[j.Name] != nil:
			return nil, engram.FieldError(field+".name", "job %q is given twice", j.Name)
		case j.Interval <= 0:
			return nil, engram.FieldError(field+".interval", "job %q: interval %v is not positive", j.Name, j.Interval)
		case j.Run == nil:
			return nil, engram.FieldError(field+".run", "job %q has no Run function", j.Name)
		}
		jj := &job{Job: j, state: State{Name: j.Name}}
		s.jobs = append(s.jobs, jj)
		s.names[j.Name] = jj
	}
	return s, nil
}

// Load reads the stored state, so that Status shows it before Start or a
// first run (for `engram jobs status` without a server). It is idempotent.
func (s *Scheduler) Load(ctx context.Context) error { return s.load(ctx) }

// load reads the stored state once; a failed load is retried by the next
// caller.
func (s *Scheduler) load(ctx context.Context) error {
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	s.mu.Lock()
	done := s.loaded
	s.mu.Unlock()
	if done {
		return nil
	}
	m, err := s.store.Load(ctx)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, j := range s.jobs {
		if st, ok := m[j.Name]; ok && !j.running {
			st.Name = j.Name
			j.state = st
		}
	}
	s.loaded = true
	return nil
}

// backoff returns the wait before retrying a job that failed n times in a
// row (n >= 1): RetryBase * 2^(n-1), capped at RetryMax.
func (s *Scheduler) backoff(n int) time.Duration {
	d := s.RetryBase
	for i := 1; i < n && d < s.RetryMax; i++ {
		d *= 2
	}
	return min(d, s.RetryMax)
}

// next returns when j is due: the zero time if it never ran or its recorded
// run lies in the future (the clock was set back), the backoff after a
// failure (never later than an interval after it), else an interval after
// the last success. Call with s.mu held.
func (s *Scheduler) next(j *job, now time.Time) time.Time {
	st := j.state
	switch {
	case st.LastRun.After(now):
		return time.Time{}
	case st.Failures > 0:
		return st.LastRun.Add(min(s.backoff(st.Failures), j.Interval))
	case st.LastSuccess.IsZero():
		return time.Time{}
	default:
		return st.LastSuccess.Add(j.Interval)
	}
}

var (
	errRunning = errors.New("running")
	errNotDue  = errors.New("not due")
)

// mode says which runs of a job try accepts.
type mode int

const (
	modeForce mode = iota // run now
	modeDue               // run if due (the preflight)
	modeCron              // run unless it became due less than half an interval from now
)

// try runs j unless it is running (errRunning) or, by m, not due
// (errNotDue), records the outcome and saves it.
func (s *Scheduler) try(ctx context.Context, j *job, m mode) (Result, error) {
	s.mu.Lock()
	if j.running {
		s.mu.Unlock()
		return Result{}, errRunning
	}
	now := s.now()
	next := s.next(j, now)
	if m == modeDue && now.Before(next) || m == modeCron && now.Before(next.Add(-j.Interval/2)) {
		s.mu.Unlock()
		return Result{}, errNotDue
	}
	j.running = true
	s.mu.Unlock()

	res := Result{Name: j.Name, Started: now}
	t0 := time.Now()
	res.Err = call(ctx, j.Run)
	res.Duration = time.Since(t0)

	s.mu.Lock()
	st := &j.state
	st.LastRun = now
	if res.Err == nil {
		st.LastSuccess, st.LastError, st.Failures = now, "", 0
	} else {
		st.LastError = res.Err.Error()
		st.Failures++
	}
	saved := *st
	next = s.next(j, now)
	s.mu.Unlock()

	// Still marked running, so that a later run's save cannot overtake
	// this one's.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), saveTimeout)
	res.SaveErr = s.store.Save(sctx, saved)
	cancel()

	s.mu.Lock()
	j.running = false
	s.mu.Unlock()

	log := s.logger().With(keyJob, j.Name, keyDuration, res.Duration)
	if res.Err != nil {
		log.Warn("job failed", keyErr, res.Err, keyFailures, saved.Failures, keyNext, next)
	} else {
		log.Debug("job done")
	}
	if res.SaveErr != nil {
		log.Error("saving job state", keyErr, res.SaveErr)
	}
	return res, nil
}

func (s *Scheduler) now() time.Time {
	if s.Now == nil {
		return time.Now()
	}
	return s.Now()
}

func (s *Scheduler) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.Default()
	}
	return s.Logger
}

// call runs fn, turning a panic into an error.
func call(ctx context.Context, fn func(context.Context) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	return fn(ctx)
}

// Run runs the named job now, whether due or not, and waits for it. The
// job's own failure is reported in Result.Err, not as the error. Run fails
// with ENOTFOUND for an unknown name, ECONFLICT if the job is running, and
// with the store's error if the state cannot be loaded.
func (s *Scheduler) Run(ctx context.Context, name string) (Result, error) {
	j := s.names[name]
	if j == nil {
		return Result{}, engram.Errorf(engram.ENOTFOUND, "scheduler: no job %q", name)
	}
	if err := s.load(ctx); err != nil {
		return Result{}, err
	}
	res, err := s.try(ctx, j, modeForce)
	if errors.Is(err, errRunning) {
		return Result{}, engram.Errorf(engram.ECONFLICT, "scheduler: job %q is already running", name)
	}
	return res, err
}

// RunDue is the preflight: it runs, one after another and once each, every
// job that is due by the wall clock (see the package doc), skipping jobs
// that are running. It returns the results of the runs made, in job order.
// Job failures are reported in the results; the error is the store's, on
// loading, or ctx's, if ctx ends before every due job has run.
func (s *Scheduler) RunDue(ctx context.Context) ([]Result, error) {
	return s.runJobs(ctx, ctx, modeDue)
}

// RunAll runs every job that is not running, one after another, whether due
// or not. It reports like RunDue.
func (s *Scheduler) RunAll(ctx context.Context) ([]Result, error) {
	return s.runJobs(ctx, ctx, modeForce)
}

// runJobs runs the jobs by m with ctx, starting no further run once halt
// is done.
func (s *Scheduler) runJobs(ctx, halt context.Context, m mode) ([]Result, error) {
	if err := s.load(ctx); err != nil {
		return nil, err
	}
	var results []Result
	for _, j := range s.jobs {
		if err := halt.Err(); err != nil {
			return results, err
		}
		res, err := s.try(ctx, j, m)
		if err == nil {
			results = append(results, res)
		}
	}
	return results, nil
}

// Status describes every job, in the order given to New. Before Start or a
// first run it shows no stored state.
func (s *Scheduler) Status() []JobStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	out := make([]JobStatus, 0, len(s.jobs))
	for _, j := range s.jobs {
		st := j.state
		js := JobStatus{
			Name:        j.Name,
			Interval:    j.Interval,
			LastRun:     st.LastRun,
			LastSuccess: st.LastSuccess,
			NextRun:     s.next(j, now),
			Running:     j.running,
			Failures:    st.Failures,
			LastError:   st.LastError,
			Failing:     st.Failures > 0,
		}
		if js.NextRun.Before(now) {
			js.NextRun = now
		}
		if !st.LastSuccess.IsZero() {
			js.Lag = max(now.Sub(st.LastSuccess.Add(j.Interval)), 0)
		}
		out = append(out, js)
	}
	return out
}
