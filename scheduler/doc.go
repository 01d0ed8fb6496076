// Package scheduler runs engram's periodic jobs (re-embedding, compaction,
// syncs) inside `engram serve`, on top of github.com/robfig/cron/v3.
//
// Each Job has a name, an interval and a Run function. The Scheduler keeps
// each job's last run, last success, last error and count of failures in a
// Store (SQLStore keeps them in the palace's job_state table), and decides
// from that stored wall-clock state, not from a timer alone, when a job is
// due: a job is due when it never succeeded, when its last success is at
// least one interval old, or, after failures, when its retry backoff
// (RetryBase doubled per failure, capped at RetryMax and at the interval)
// has passed since the failed run.
//
// RunDue is the preflight: it runs, once each and one after another, every
// job that is due. Start runs it in the background at start-up and again on
// every Tick, and adds a cron entry per job that runs it every interval.
// Run runs one job now, whatever its state.
//
// A job never overlaps itself: cron runs, the preflight and Run share one
// running flag per job, and a run that finds its job running is skipped (or,
// for Run, refused with ECONFLICT). A panic in a job is recovered and recorded
// as a failure. State is saved after every run.
//
// # Caveats
//
// cron waits on Go's monotonic clock, and the monotonic clock stops while a
// Mac sleeps: an hourly job on a laptop that slept for eight hours would
// otherwise run an hour after waking, not at once, and cron never replays the
// runs it missed. launchd's StartInterval does not replay missed intervals
// either, so restarting the service is no remedy. That is why the last success
// is stored and compared with the wall clock (Now) at start-up and on every
// Tick: after a sleep the next Tick (at most Tick of monotonic time after
// waking) runs every stale job once, however many intervals were missed.
//
// Because the preflight can run a job shortly before its cron entry fires, a
// cron-triggered run is skipped when the job succeeded less than half an
// interval ago; runs are thus never closer than half an interval apart unless
// Run asks for one.
//
// Times come from Now and are recorded at the start of a run, so a job's
// schedule does not drift by its run time, and a failed run that took longer
// than its backoff is retried at the next Tick. A job whose recorded last run
// lies in the future (the wall clock was set backwards) is due at once, so a
// clock correction costs one early run rather than a stalled job.
//
// Stop stops new runs and waits for running jobs until its context is done;
// then it cancels the jobs' context and returns without waiting further.
package scheduler
