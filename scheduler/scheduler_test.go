package scheduler_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/palace"
	"github.com/engram-dev/engram/scheduler"
)

var t0 = time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)

// newClock returns a settable wall clock at t0.
func newClock() *testutil.Clock { return testutil.NewClock(t0) }

// mustOpenPalace opens a palace at path, closed when the test ends.
func mustOpenPalace(tb testing.TB, path string) *palace.DB {
	tb.Helper()
	db, err := palace.Open(path, palace.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

func mustNew(tb testing.TB, store scheduler.Store, c *testutil.Clock, jobs ...scheduler.Job) *scheduler.Scheduler {
	tb.Helper()
	s, err := scheduler.New(store, jobs...)
	if err != nil {
		tb.Fatal(err)
	}
	s.Now = c.Now
	s.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	return s
}

// counter is a job body that counts its runs.
type counter struct{ n atomic.Int64 }

func (c *counter) Run(context.Context) error { c.n.Add(1); return nil }

func names(results []scheduler.Result) string {
	var s []string
	for _, r := range results {
		if r.Err != nil || r.SaveErr != nil {
			s = append(s, r.Name+"(err)")
		} else {
			s = append(s, r.Name)
		}
	}
	return strings.Join(s, ",")
}

func status(tb testing.TB, s *scheduler.Scheduler, name string) scheduler.JobStatus {
	tb.Helper()
	for _, js := range s.Status() {
		if js.Name == name {
			return js
		}
	}
	tb.Fatalf("no status for %q", name)
	return scheduler.JobStatus{}
}

func TestRunDueCatchUp(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "palace.db")
	db := mustOpenPalace(t, path)
	c := newClock()
	var hourly, sixHourly, daily counter
	jobs := []scheduler.Job{
		{Name: "hourly", Interval: time.Hour, Run: hourly.Run},
		{Name: "six-hourly", Interval: 6 * time.Hour, Run: sixHourly.Run},
		{Name: "daily", Interval: 24 * time.Hour, Run: daily.Run},
	}
	s := mustNew(t, scheduler.NewSQLStore(db), c, jobs...)

	// Nothing ever succeeded: everything runs.
	res, err := s.RunDue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(res); got != "hourly,six-hourly,daily" {
		t.Fatalf("first RunDue ran %q", got)
	}
	if res, _ := s.RunDue(ctx); len(res) != 0 {
		t.Fatalf("second RunDue at the same time ran %q", names(res))
	}

	// The Mac sleeps for eight hours.
	c.Advance(8 * time.Hour)
	if js := status(t, s, "hourly"); js.Lag != 7*time.Hour || !js.NextRun.Equal(c.Now()) {
		t.Errorf("hourly after the sleep: lag %v, next %v; want 7h, now", js.Lag, js.NextRun)
	}
	if js := status(t, s, "daily"); js.Lag != 0 || !js.NextRun.Equal(t0.Add(24*time.Hour)) {
		t.Errorf("daily after the sleep: lag %v, next %v", js.Lag, js.NextRun)
	}
	res, err = s.RunDue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(res); got != "hourly,six-hourly" {
		t.Fatalf("RunDue after the sleep ran %q, want the stale jobs once each", got)
	}
	if h, six, d := hourly.n.Load(), sixHourly.n.Load(), daily.n.Load(); h != 2 || six != 2 || d != 1 {
		t.Fatalf("runs = %d, %d, %d; want 2, 2, 1", h, six, d)
	}

	// The state survives a restart: reopen the palace, a new scheduler runs
	// nothing at the same time.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = mustOpenPalace(t, path)
	store := scheduler.NewSQLStore(db)
	saved, err := store.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st := saved["hourly"]; !st.LastSuccess.Equal(t0.Add(8*time.Hour)) || !st.LastRun.Equal(st.LastSuccess) || st.Failures != 0 {
		t.Errorf("saved hourly = %+v", st)
	}
	if st := saved["daily"]; !st.LastSuccess.Equal(t0) {
		t.Errorf("saved daily = %+v", st)
	}
	s2 := mustNew(t, store, c, jobs...)
	if res, err := s2.RunDue(ctx); err != nil || len(res) != 0 {
		t.Fatalf("RunDue after restart ran %q, %v", names(res), err)
	}
	c.Advance(16 * time.Hour)
	if res, _ := s2.RunDue(ctx); names(res) != "hourly,six-hourly,daily" {
		t.Fatalf("RunDue a day later ran %q", names(res))
	}
}

func TestNoOverlap(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	started, release := make(chan struct{}), make(chan struct{})
	var runs atomic.Int64
	block := func(context.Context) error {
		runs.Add(1)
		started <- struct{}{}
		<-release
		return nil
	}
	s := mustNew(t, scheduler.NewSQLStore(mustOpenPalace(t, filepath.Join(t.TempDir(), "p.db"))), c,
		scheduler.Job{Name: "slow", Interval: time.Hour, Run: block})

	done := make(chan scheduler.Result)
	go func() {
		res, err := s.Run(ctx, "slow")
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	<-started
	if !status(t, s, "slow").Running {
		t.Error("status does not show the job running")
	}
	if _, err := s.Run(ctx, "slow"); engram.ErrorCode(err) != engram.ECONFLICT {
		t.Fatalf("second Run: err = %v, want ECONFLICT", err)
	}
	if res, err := s.RunDue(ctx); err != nil || len(res) != 0 {
		t.Fatalf("RunDue while running ran %q, %v", names(res), err)
	}
	if res, err := s.RunAll(ctx); err != nil || len(res) != 0 {
		t.Fatalf("RunAll while running ran %q, %v", names(res), err)
	}
	close(release)
	if res := <-done; res.Err != nil || res.SaveErr != nil {
		t.Fatalf("blocked run: %+v", res)
	}
	if n := runs.Load(); n != 1 {
		t.Fatalf("job ran %d times, want 1", n)
	}
	if status(t, s, "slow").Running {
		t.Error("status shows the job running after it finished")
	}
}

func TestFailureBackoff(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	var fail atomic.Bool
	fail.Store(true)
	flaky := func(context.Context) error {
		if fail.Load() {
			return errors.New("ollama is down")
		}
		return nil
	}
	store := scheduler.NewSQLStore(mustOpenPalace(t, filepath.Join(t.TempDir(), "p.db")))
	s := mustNew(t, store, c,
		scheduler.Job{Name: "flaky", Interval: time.Hour, Run: flaky},
		scheduler.Job{Name: "panics", Interval: time.Hour, Run: func(context.Context) error { panic("boom") }},
		scheduler.Job{Name: "minutely", Interval: time.Minute, Run: flaky},
	)
	s.RetryBase, s.RetryMax = 30*time.Second, 2*time.Minute

	res, err := s.Run(ctx, "flaky")
	if err != nil || res.Err == nil || res.Err.Error() != "ollama is down" {
		t.Fatalf("Run = %+v, %v; want the job's error in the result", res, err)
	}
	// Retries wait 30 s, 1 min, 2 min, 2 min (capped), not the interval.
	for i, wait := range []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 2 * time.Minute} {
		js := status(t, s, "flaky")
		if js.Failures != i+1 || !js.Failing || js.LastError != "ollama is down" || !js.NextRun.Equal(c.Now().Add(wait)) {
			t.Fatalf("after failure %d: %+v; want next run in %v", i+1, js, wait)
		}
		c.Advance(wait - time.Second)
		if res, _ := s.RunDue(ctx); strings.Contains(names(res), "flaky") {
			t.Fatalf("failure %d: retried before the backoff", i+1)
		}
		c.Advance(time.Second)
		if res, _ := s.RunDue(ctx); !strings.Contains(names(res), "flaky(err)") {
			t.Fatalf("failure %d: not retried after the backoff: %q", i+1, names(res))
		}
	}
	saved, err := store.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st := saved["flaky"]; st.Failures != 5 || st.LastError != "ollama is down" || !st.LastSuccess.IsZero() || !st.LastRun.Equal(c.Now()) {
		t.Errorf("saved state after 5 failures = %+v", st)
	}

	// The backoff never exceeds the interval.
	if js := status(t, s, "minutely"); js.Failures != 4 || !js.NextRun.Equal(js.LastRun.Add(time.Minute)) {
		t.Errorf("minutely: %+v; want next run an interval after the last", js)
	}

	// Success resets.
	fail.Store(false)
	c.Advance(2 * time.Minute)
	if res, err := s.Run(ctx, "flaky"); err != nil || res.Err != nil {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	js := status(t, s, "flaky")
	if js.Failures != 0 || js.Failing || js.LastError != "" || !js.LastSuccess.Equal(c.Now()) || !js.NextRun.Equal(c.Now().Add(time.Hour)) {
		t.Fatalf("after success: %+v", js)
	}

	// A panic is a recorded failure.
	js = status(t, s, "panics")
	if js.Failures == 0 || !strings.HasPrefix(js.LastError, "panic: boom") {
		t.Fatalf("panicking job: %+v", js)
	}
}

func TestUnknownAndInvalid(t *testing.T) {
	ctx := context.Background()
	store := scheduler.NewSQLStore(mustOpenPalace(t, filepath.Join(t.TempDir(), "p.db")))
	s := mustNew(t, store, newClock(), scheduler.Job{Name: "a", Interval: time.Hour, Run: (&counter{}).Run})
	if _, err := s.Run(ctx, "nope"); engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Fatalf("Run(unknown): err = %v, want ENOTFOUND", err)
	}
	run := (&counter{}).Run
	for name, jobs := range map[string][]scheduler.Job{
		"no name":       {{Interval: time.Hour, Run: run}},
		"duplicate":     {{Name: "a", Interval: time.Hour, Run: run}, {Name: "a", Interval: time.Minute, Run: run}},
		"zero interval": {{Name: "a", Run: run}},
		"no func":       {{Name: "a", Interval: time.Hour}},
	} {
		if _, err := scheduler.New(store, jobs...); engram.ErrorCode(err) != engram.EINVALID {
			t.Errorf("%s: err = %v, want EINVALID", name, err)
		}
	}
}

// failingStore fails every Save: the scheduler has to carry on and report it.
type failingStore struct{ scheduler.Store }

func (failingStore) Save(context.Context, scheduler.State) error { return errors.New("disk full") }

func TestSaveError(t *testing.T) {
	store := failingStore{scheduler.NewSQLStore(mustOpenPalace(t, filepath.Join(t.TempDir(), "p.db")))}
	s := mustNew(t, store, newClock(), scheduler.Job{Name: "a", Interval: time.Hour, Run: (&counter{}).Run})
	res, err := s.Run(context.Background(), "a")
	if err != nil || res.Err != nil || res.SaveErr == nil {
		t.Fatalf("Run = %+v, %v; want the save error in the result", res, err)
	}
	if js := status(t, s, "a"); !js.LastSuccess.Equal(t0) {
		t.Errorf("state in memory not updated: %+v", js)
	}
}

func TestStartStop(t *testing.T) {
	c := newClock()
	var a, b counter
	s := mustNew(t, scheduler.NewSQLStore(mustOpenPalace(t, filepath.Join(t.TempDir(), "p.db"))), c,
		scheduler.Job{Name: "a", Interval: time.Hour, Run: a.Run},
		scheduler.Job{Name: "b", Interval: 24 * time.Hour, Run: b.Run},
	)
	s.Tick = 5 * time.Millisecond
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); engram.ErrorCode(err) != engram.ECONFLICT {
		t.Fatalf("second Start: err = %v, want ECONFLICT", err)
	}
	// The start-up preflight runs both jobs, which never succeeded.
	testutil.WaitUntil(t, "the start-up preflight", func() bool { return a.n.Load() == 1 && b.n.Load() == 1 })

	// The machine sleeps: cron's timers do not notice, the tick does.
	c.Advance(8 * time.Hour)
	testutil.WaitUntil(t, "the catch-up after the sleep", func() bool { return a.n.Load() == 2 })
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := b.n.Load(); n != 1 {
		t.Errorf("daily job ran %d times, want 1", n)
	}
	if err := s.Stop(context.Background()); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
}

func TestStartCronEntries(t *testing.T) {
	// On the real clock the per-job cron entries run a short-interval job.
	var a counter
	s := mustNew(t, scheduler.NewSQLStore(mustOpenPalace(t, filepath.Join(t.TempDir(), "p.db"))), newClock(),
		scheduler.Job{Name: "a", Interval: 10 * time.Millisecond, Run: a.Run})
	s.Now = time.Now
	s.Tick = time.Hour // only cron's entry and the start-up preflight
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	testutil.WaitUntil(t, "cron runs", func() bool { return a.n.Load() >= 3 })
	// A second scheduler with the same interval keeps running: its runs
	// measure three intervals after Stop on this machine's clock, however
	// loaded, where a fixed sleep would measure nothing on a slow one.
	var probe counter
	p := mustNew(t, scheduler.NewSQLStore(mustOpenPalace(t, filepath.Join(t.TempDir(), "q.db"))), newClock(),
		scheduler.Job{Name: "probe", Interval: 10 * time.Millisecond, Run: probe.Run})
	p.Now, p.Tick = time.Now, time.Hour
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer p.Stop(context.Background())
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	n, since := a.n.Load(), probe.n.Load()
	testutil.WaitUntil(t, "three intervals after Stop", func() bool { return probe.n.Load() >= since+3 })
	if m := a.n.Load(); m != n {
		t.Fatalf("job ran %d times after Stop", m-n)
	}
}

func TestStopWaits(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	var finished atomic.Bool
	s := mustNew(t, scheduler.NewSQLStore(mustOpenPalace(t, filepath.Join(t.TempDir(), "p.db"))), newClock(),
		scheduler.Job{Name: "slow", Interval: time.Hour, Run: func(context.Context) error {
			close(started)
			<-release
			finished.Store(true)
			return nil
		}})
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-started
	stopped := make(chan error)
	go func() { stopped <- s.Stop(context.Background()) }()
	close(release)
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	if !finished.Load() {
		t.Fatal("Stop returned before the running job finished")
	}
}

func TestStopTimeout(t *testing.T) {
	started := make(chan struct{})
	canceled := make(chan struct{})
	s := mustNew(t, scheduler.NewSQLStore(mustOpenPalace(t, filepath.Join(t.TempDir(), "p.db"))), newClock(),
		scheduler.Job{Name: "stuck", Interval: time.Hour, Run: func(ctx context.Context) error {
			close(started)
			<-ctx.Done()
			close(canceled)
			return ctx.Err()
		}})
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	err := s.Stop(ctx)
	if engram.ErrorCode(err) != engram.EUNAVAILABLE || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Stop = %v, want EUNAVAILABLE wrapping the deadline", err)
	}
	<-canceled // the job's context was cancelled
	testutil.WaitUntil(t, "the cancelled run to be recorded", func() bool { return !status(t, s, "stuck").Running })
	if js := status(t, s, "stuck"); js.Failures != 1 || js.LastError != context.Canceled.Error() {
		t.Fatalf("cancelled run recorded as %+v", js)
	}
}
