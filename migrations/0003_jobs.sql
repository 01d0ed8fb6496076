-- Job state: one row per scheduled job (see package scheduler), so that a
-- job's last success survives restarts and a preflight can catch up on runs
-- the cron timer missed while the machine slept.
--
-- Times are Unix nanoseconds (UTC), NULL for never. last_error is the error
-- of the last run, '' after a success; failures counts the failed runs since
-- the last success and sets the retry backoff.
CREATE TABLE job_state (
	name         TEXT    PRIMARY KEY,
	last_run     INTEGER,
	last_success INTEGER,
	last_error   TEXT    NOT NULL DEFAULT '',
	failures     INTEGER NOT NULL DEFAULT 0 CHECK (failures >= 0)
) STRICT;
