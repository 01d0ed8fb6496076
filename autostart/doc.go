// Package autostart keeps engram running on a laptop: it writes the launchd
// agents (macOS) and the systemd user units (Linux) that keep `engram serve`
// alive and run `engram jobs run --due` every interval, and loads them with
// launchctl or systemctl.
//
// A Service names what to run: the absolute path of the engram binary, the
// engram home passed as --home, the launchd label prefix and the interval of
// the jobs agent. Service.LaunchdFiles and Service.SystemdFiles return the
// files without touching the disk (what `engram launchd print` and `engram
// systemd print` show); LaunchAgents and SystemdUser install and uninstall
// them in a folder:
//
//   - <prefix>.serve.plist: `engram --home HOME serve` with RunAtLoad and
//     KeepAlive, its output appended to HOME/logs/serve.log;
//   - <prefix>.jobs.plist: `engram --home HOME jobs run --due` every
//     StartInterval seconds and at load, its output in HOME/logs/jobs.log;
//   - engram.service (Restart=on-failure), engram-jobs.service (oneshot) and
//     engram-jobs.timer (OnBootSec=2min, OnUnitActiveSec=interval).
//
// Files are written to a temporary file in the same folder, synced and
// renamed over the old one, and the folder is synced, so launchd or systemd
// never reads half a file. Running launchctl and systemctl is the process
// edge: it goes through a Runner, which tests replace with a recorder. Where
// no Runner is given (not macOS, not Linux, --no-start) Install and Uninstall
// return the commands to run by hand instead.
//
// The agents carry no EnvironmentVariables: engram starts no other program,
// so it needs no PATH, and its settings belong in HOME/config.toml, which the
// agents read the way an interactive `engram` does. A setting exported only in
// a shell profile (ENGRAM_TOKEN, OLLAMA_HOST) is not seen by launchd or
// systemd.
//
// # Caveats
//
// launchd does not replay missed StartInterval runs: launchd.plist(5) says an
// interval that falls while the Mac sleeps is missed ("due to shortcomings in
// kqueue(3)"), as is one that falls while the previous run still runs; after
// waking the jobs agent next runs at its next interval. (Only
// StartCalendarInterval coalesces missed firings into one run on wake.)
// systemd's OnUnitActiveSec counts on the monotonic clock, which stops
// during suspend, and Persistent=true only catches up OnCalendar timers, so
// the timer does not replay missed runs either. Neither timer is what keeps
// engram's jobs on schedule: the scheduler inside `engram serve` runs a
// preflight at start-up and every minute that runs every job whose last
// success is older than its interval, compared with the wall clock (see
// package scheduler). The jobs agent is a second line, for the hours when
// serve is not running; with serve up, `jobs run --due` asks the server to
// run what is due.
//
// KeepAlive restarts `engram serve` whenever it exits, throttled by launchd to
// one start every 10 seconds: a serve that cannot start (a bad config.toml,
// another serve holding the home) fills HOME/logs/serve.log until fixed.
// Neither launchd nor engram rotates the log files.
//
// systemd user units run only while the user has a session unless lingering
// is enabled (`loginctl enable-linger`).
package autostart
