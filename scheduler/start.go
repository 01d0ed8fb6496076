package scheduler

import (
	"context"
	"errors"
	"log/slog"
	"time"

	engram "github.com/engram-dev/engram"
	"github.com/robfig/cron/v3"
)

// Start loads the stored state, runs the preflight in the background (so
// that start-up is not held up by the jobs) and starts cron: an entry per
// job every Interval, and one every Tick that re-runs the preflight. ctx
// bounds only the loading; the jobs run until Stop. Start fails with the
// store's error, with EINVALID if Tick is not positive, and with ECONFLICT
// if called twice.
func (s *Scheduler) Start(ctx context.Context) error {
	s.lifeMu.Lock()
	defer s.lifeMu.Unlock()
	if s.started {
		return engram.Errorf(engram.ECONFLICT, "scheduler: already started")
	}
	if s.Tick <= 0 {
		return engram.FieldError("tick", "scheduler: tick %v is not positive", s.Tick)
	}
	if err := s.load(ctx); err != nil {
		return err
	}
	s.started = true
	s.haltCtx, s.halt = context.WithCancel(context.Background())
	s.jobCtx, s.cancel = context.WithCancel(context.Background())

	logger := cronLogger{s.logger()}
	s.cron = cron.New(
		cron.WithLogger(logger),
		cron.WithChain(cron.Recover(logger), cron.SkipIfStillRunning(logger)),
	)
	for _, j := range s.jobs {
		s.cron.Schedule(every(j.Interval), cron.FuncJob(func() {
			if s.haltCtx.Err() == nil {
				s.try(s.jobCtx, j, modeCron)
			}
		}))
	}
	s.cron.Schedule(every(s.Tick), cron.FuncJob(s.preflight))
	s.wg.Go(s.preflight)
	s.cron.Start()
	return nil
}

// preflight runs the due jobs until Stop.
func (s *Scheduler) preflight() {
	if _, err := s.runJobs(s.jobCtx, s.haltCtx, modeDue); err != nil && !errors.Is(err, context.Canceled) {
		s.logger().Error("preflight", keyErr, err)
	}
}

// Stop stops starting runs and waits for the running ones to finish. If ctx
// ends first, Stop cancels the running jobs' context and returns ctx's
// error (inside an EUNAVAILABLE *engram.Error) without waiting further.
// Calling Stop before Start, or again, does nothing. Run, RunDue and RunAll
// still work after Stop.
func (s *Scheduler) Stop(ctx context.Context) error {
	s.lifeMu.Lock()
	defer s.lifeMu.Unlock()
	if !s.started || s.stopped {
		return nil
	}
	s.stopped = true
	s.halt()
	defer s.cancel()
	cronDone := s.cron.Stop()
	done := make(chan struct{})
	go func() {
		<-cronDone.Done()
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return &engram.Error{Code: engram.EUNAVAILABLE, Message: "scheduler: stop: jobs still running", Err: ctx.Err()}
	}
}

// every is cron's ConstantDelaySchedule without its rounding to whole
// seconds, so that tests can tick in milliseconds.
type every time.Duration

// Next implements cron.Schedule.
func (e every) Next(t time.Time) time.Time { return t.Add(time.Duration(e)) }

// cronLogger adapts slog to cron's logger; cron's routine messages (one per
// run) go to debug.
type cronLogger struct{ l *slog.Logger }

func (c cronLogger) Info(msg string, kv ...any) { c.l.Debug("cron: "+msg, kv...) }

func (c cronLogger) Error(err error, msg string, kv ...any) {
	c.l.Error("cron: "+msg, append(kv, keyErr, err)...)
}
