package autostart

import (
	"fmt"
	"strings"
	"time"

	"github.com/engram-dev/engram"
)

// Names of the systemd user units.
const (
	ServeUnit = "engram.service"
	JobsUnit  = "engram-jobs.service"
	TimerUnit = "engram-jobs.timer"
)

// SystemdFiles validates s and returns its three units: engram.service,
// engram-jobs.service and engram-jobs.timer.
func (s Service) SystemdFiles() ([]File, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if err := checkSystemdBinary(s.Binary); err != nil {
		return nil, err
	}
	s = s.withDefaults()
	const header = "# Written by `engram systemd install`; `engram systemd uninstall` removes it.\n"
	serve := header + `[Unit]
Description=engram memory service (engram serve)

[Service]
ExecStart=` + ExecLine(s.args("serve")) + `
Restart=on-failure
RestartSec=5

[Install]
WantedBy=default.target
`
	jobs := header + `[Unit]
Description=engram scheduled jobs that are due (engram jobs run --due)

[Service]
Type=oneshot
ExecStart=` + ExecLine(s.args("jobs", "run", "--due")) + `
`
	// Persistent= only catches up OnCalendar= timers; the scheduler's
	// preflight is what catches up after a suspend (see the package doc).
	timer := header + `[Unit]
Description=run engram's due jobs every ` + Timespan(s.Interval) + `

[Timer]
OnBootSec=2min
OnUnitActiveSec=` + Timespan(s.Interval) + `
Persistent=true
Unit=` + JobsUnit + `

[Install]
WantedBy=timers.target
`
	return []File{
		{Name: ServeUnit, Data: []byte(serve)},
		{Name: JobsUnit, Data: []byte(jobs)},
		{Name: TimerUnit, Data: []byte(timer)},
	}, nil
}

// ExecLine returns args, a program and its arguments, as the value of a
// systemd ExecStart= line, quoted by systemd's rules (systemd.service(5),
// "Command lines"): '%' becomes "%%" (specifiers) everywhere and '$' becomes
// "$$" (environment variables) in the arguments, which systemd expands but
// not the program's path; a word with whitespace, quotes, backslashes or ';',
// or an empty one, is put in double quotes, inside which '\' and '"' are
// escaped with a backslash. Control characters are not representable, and
// systemd refuses a program path with quotes or backslashes: SystemdFiles
// rejects those.
func ExecLine(args []string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		if i > 0 {
			a = strings.ReplaceAll(a, "$", "$$")
		}
		quoted[i] = execQuote(strings.ReplaceAll(a, "%", "%%"))
	}
	return strings.Join(quoted, " ")
}

func execQuote(a string) string {
	if a != "" && !strings.ContainsAny(a, " \t\"'\\;") {
		return a
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(a) + `"`
}

// checkSystemdBinary rejects what systemd refuses in an executable path
// (string_is_safe in its source: quotes and backslashes) and '$', which some
// systemd versions may expand there and others not.
func checkSystemdBinary(p string) error {
	if strings.ContainsAny(p, "\"'\\$") {
		return engram.FieldError("binary", "systemd refuses a program path with quotes, backslashes or '$' (%q): "+
			"install engram in another folder, or link to it from one", p)
	}
	return nil
}

// Timespan formats d as a systemd time span (systemd.time(7)): "15min",
// "1h 30min", "90s" becomes "1min 30s". d is a whole number of seconds.
func Timespan(d time.Duration) string {
	var parts []string
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "min"}, {time.Second, "s"}} {
		if n := d / u.d; n > 0 {
			parts = append(parts, fmt.Sprintf("%d%s", n, u.name))
			d -= n * u.d
		}
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, " ")
}
