package autostart

import (
	"path/filepath"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/engram-dev/engram"
)

// Defaults of a Service.
const (
	// DefaultLabelPrefix prefixes the launchd labels: com.engram.serve and
	// com.engram.jobs.
	DefaultLabelPrefix = "com.engram"
	// DefaultInterval is how often the jobs agent or timer runs `engram jobs
	// run --due`: the shortest default interval of engram's jobs that a
	// laptop needs caught up while serve is down.
	DefaultInterval = 15 * time.Minute
	// MinInterval is the shortest interval accepted. launchd starts a job at
	// most every 10 seconds anyway, and each run opens the home.
	MinInterval = time.Minute
)

// LogDir is the folder of the agents' log files, inside the engram home.
const LogDir = "logs"

// Service is what the agents and units run: `engram --home Home serve`, kept
// alive, and `engram --home Home jobs run --due`, every Interval.
type Service struct {
	// Binary is the absolute path of the engram binary.
	Binary string
	// Home is the absolute path of the engram home, passed as --home.
	Home string
	// LabelPrefix prefixes the launchd labels (<prefix>.serve and
	// <prefix>.jobs); "" means DefaultLabelPrefix. systemd units have fixed
	// names.
	LabelPrefix string
	// Interval is the period of the jobs agent or timer; 0 means
	// DefaultInterval.
	Interval time.Duration
}

func (s Service) withDefaults() Service {
	if s.LabelPrefix == "" {
		s.LabelPrefix = DefaultLabelPrefix
	}
	if s.Interval == 0 {
		s.Interval = DefaultInterval
	}
	return s
}

// Validate reports an EINVALID error, naming the field, for a relative or
// empty path, a path that is not UTF-8 or holds control characters or
// U+FFFE or U+FFFF (which a plist or a unit file does not carry intact), a
// bad label prefix or a bad interval.
func (s Service) Validate() error {
	s = s.withDefaults()
	if err := checkPath("binary", s.Binary); err != nil {
		return err
	}
	if err := checkPath("home", s.Home); err != nil {
		return err
	}
	if err := CheckLabelPrefix(s.LabelPrefix); err != nil {
		return err
	}
	return CheckInterval(s.Interval)
}

func checkPath(field, p string) error {
	switch {
	case p == "":
		return engram.FieldError(field, "no path")
	case !filepath.IsAbs(p):
		return engram.FieldError(field, "%q is not an absolute path", p)
	case !utf8.ValidString(p):
		return engram.FieldError(field, "%q is not UTF-8", p)
	case strings.IndexFunc(p, unicode.IsControl) >= 0:
		return engram.FieldError(field, "%q holds a control character", p)
	case strings.ContainsAny(p, "\ufffe\uffff"):
		return engram.FieldError(field, "%q holds a character XML cannot carry", p)
	}
	return nil
}

// CheckLabelPrefix reports an EINVALID error unless prefix is a reverse-DNS
// name: dot-separated parts of ASCII letters, digits, '-' and '_'.
func CheckLabelPrefix(prefix string) error {
	if prefix == "" {
		return engram.FieldError("label-prefix", "empty (for example: %s)", DefaultLabelPrefix)
	}
	for _, part := range strings.Split(prefix, ".") {
		if part == "" {
			return engram.FieldError("label-prefix", "%q has an empty part (for example: %s)", prefix, DefaultLabelPrefix)
		}
		for _, r := range part {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return engram.FieldError("label-prefix", "%q: want letters, digits, '-', '_' and dots (for example: %s)", prefix, DefaultLabelPrefix)
			}
		}
	}
	return nil
}

// CheckInterval reports an EINVALID error unless d is a whole number of
// seconds and at least MinInterval: launchd's StartInterval counts seconds.
func CheckInterval(d time.Duration) error {
	switch {
	case d < MinInterval:
		return engram.FieldError("interval", "%s is shorter than %s", d, MinInterval)
	case d%time.Second != 0:
		return engram.FieldError("interval", "%s is not a whole number of seconds", d)
	}
	return nil
}

// ServeLabel is the launchd label of the agent that keeps serve alive.
func (s Service) ServeLabel() string { return s.withDefaults().LabelPrefix + ".serve" }

// JobsLabel is the launchd label of the agent that runs the due jobs.
func (s Service) JobsLabel() string { return s.withDefaults().LabelPrefix + ".jobs" }

// args returns the engram command line for a subcommand.
func (s Service) args(sub ...string) []string {
	return append([]string{s.Binary, "--home", s.Home}, sub...)
}

func (s Service) logFile(name string) string { return filepath.Join(s.Home, LogDir, name) }

// File is a file an installer writes: its name within the folder, and its
// content.
type File struct {
	Name string
	Data []byte
}
