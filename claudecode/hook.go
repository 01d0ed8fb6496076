package claudecode

import (
	"errors"
	"os"
	"path/filepath"
)

// HookInput is what Claude Code sends a command hook on stdin.
type HookInput struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	CWD            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	Prompt         string `json:"prompt"`
}

// The hook's log, in an engram home: what went wrong in a hook, which
// prints nothing and never fails the agent.
const (
	HookLogFile = "hook.log" // in <home>/logs
	hookLogMax  = 1 << 20    // bytes before hook.log is rotated to hook.log.1
)

// OpenHookLog opens the hook log of the engram home for appending, rotating
// it first when it is over a MiB. A home that cannot be resolved ("") has
// no log.
func OpenHookLog(home string) (*os.File, error) {
	if home == "" {
		return nil, errors.New("no home")
	}
	dir := filepath.Join(home, "logs")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, HookLogFile)
	if st, err := os.Stat(path); err == nil && st.Size() > hookLogMax {
		os.Rename(path, path+".1")
	}
	return os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
}
