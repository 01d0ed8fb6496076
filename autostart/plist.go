package autostart

import (
	"bytes"
	"fmt"
	"time"

	"howett.net/plist"
)

// Agent is a launchd agent, the keys engram sets of launchd.plist(5).
type Agent struct {
	Label string `plist:"Label"`
	// ProgramArguments is the command line, run without a shell: paths with
	// spaces or quotes need no quoting.
	ProgramArguments []string `plist:"ProgramArguments"`
	RunAtLoad        bool     `plist:"RunAtLoad"`
	// KeepAlive restarts the program whenever it exits.
	KeepAlive bool `plist:"KeepAlive,omitempty"`
	// StartInterval starts the program every so many seconds; missed
	// intervals (sleep) are not replayed.
	StartInterval int `plist:"StartInterval,omitempty"`
	// StandardOutPath and StandardErrorPath are appended to; launchd creates
	// the files, not their folder.
	StandardOutPath   string `plist:"StandardOutPath"`
	StandardErrorPath string `plist:"StandardErrorPath"`
}

// ServeAgent is the agent that keeps `engram serve` running.
func (s Service) ServeAgent() Agent {
	s = s.withDefaults()
	log := s.logFile("serve.log")
	return Agent{
		Label:             s.ServeLabel(),
		ProgramArguments:  s.args("serve"),
		RunAtLoad:         true,
		KeepAlive:         true,
		StandardOutPath:   log,
		StandardErrorPath: log,
	}
}

// JobsAgent is the agent that runs `engram jobs run --due` at load and every
// Interval.
func (s Service) JobsAgent() Agent {
	s = s.withDefaults()
	log := s.logFile("jobs.log")
	return Agent{
		Label:             s.JobsLabel(),
		ProgramArguments:  s.args("jobs", "run", "--due"),
		RunAtLoad:         true,
		StartInterval:     int(s.Interval / time.Second),
		StandardOutPath:   log,
		StandardErrorPath: log,
	}
}

// Agents returns the serve agent and the jobs agent.
func (s Service) Agents() []Agent { return []Agent{s.ServeAgent(), s.JobsAgent()} }

// Plist encodes the agent as an XML property list, indented with tabs like
// the plists macOS writes. The encoder escapes XML text.
func (a Agent) Plist() ([]byte, error) {
	var buf bytes.Buffer
	enc := plist.NewEncoderForFormat(&buf, plist.XMLFormat)
	enc.Indent("\t")
	if err := enc.Encode(a); err != nil {
		return nil, fmt.Errorf("encode %s: %w", a.Label, err)
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// PlistName is the agent's file name in a LaunchAgents folder.
func (a Agent) PlistName() string { return a.Label + ".plist" }

// LaunchdFiles validates s and returns its two plists, serve first.
func (s Service) LaunchdFiles() ([]File, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	var files []File
	for _, a := range s.Agents() {
		data, err := a.Plist()
		if err != nil {
			return nil, err
		}
		files = append(files, File{Name: a.PlistName(), Data: data})
	}
	return files, nil
}
